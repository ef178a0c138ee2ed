"""``manage.py prune_runs``: one retention pass over the decision log (for cron).

Removes the runs past RETENTION_DAYS / RETENTION_DAYS_BY_OUTCOME with their URL decisions
and attempts, then redacts the content of runs past REDACT_AFTER_DAYS, in small batches
(README "Retention"). ``--dry-run`` says what a pass would do and changes nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from enrichment.management.commands.enrich import progress_bar
from enrichment.services.partitions import PartitionError
from enrichment.services.retention import retention_pass


class Command(BaseCommand):
    help = "Remove expired runs and redact old content (retention settings); for cron."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Count what would go; change nothing."
        )
        parser.add_argument(
            "--batch-size", type=int, help="Runs per transaction (default RETENTION_BATCH_SIZE)."
        )
        parser.add_argument(
            "--export-dir",
            type=Path,
            help="Write the runs about to be removed here first, as gzip JSON lines "
            "(default RETENTION_EXPORT_DIR).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        policy = settings.RETENTION
        batch_size = options["batch_size"]
        if batch_size is not None and batch_size < 1:
            self.stderr.write("--batch-size: must be at least 1")
            sys.exit(2)
        self.stdout.write(f"Policy: {policy.describe()}")
        started = time.monotonic()
        interactive = self.stdout.isatty()

        def progress(what: str, done: int, total: int) -> None:
            if interactive:
                bar = progress_bar(done, total, started).replace("msg/s", "runs/s")
                self.stdout.write(f"\r{what:>8} {bar}", ending="")
                self.stdout.flush()

        try:
            report = retention_pass(
                dry_run=options["dry_run"],
                batch_size=batch_size,
                export_dir=options["export_dir"],
                progress=progress,
            )
        except PartitionError as error:  # recorded on the pass too (the overview shows it)
            raise CommandError(f"partitioned storage: {error}") from None
        if interactive and not options["dry_run"]:
            self.stdout.write("")
        for cut in report.cuts:
            self.stdout.write(f"  {cut.outcome}: runs created before {cut.before:%Y-%m-%d %H:%M}")
        months = ", ".join(report.dropped_months)
        if options["dry_run"]:
            self.stdout.write(
                f"Dry run: would remove {report.due_removal} runs and redact "
                f"{report.due_redaction}; nothing changed."
            )
            if months:
                self.stdout.write(f"Whole months whose partitions would be dropped: {months}")
            return
        if months:
            self.stdout.write(f"Dropped the partitions of whole months: {months}")
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"Removed {report.removed} runs, redacted {report.redacted} in {elapsed:.1f}s."
        )
        if report.exported_to is not None:
            self.stdout.write(f"Exported the removed runs to {report.exported_to}")
