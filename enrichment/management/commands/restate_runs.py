"""``manage.py restate_runs``: refill the derived statuses stored on runs from their
decisions (``enrichment.services.statuses``)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.errors import InvalidInput
from enrichment.management.commands.enrich import progress_bar
from enrichment.models import Run
from enrichment.selectors import parse_instant
from enrichment.services.statuses import runs_restate


class Command(BaseCommand):
    help = (
        "Store each run's derived statuses (attempts failed, fallback succeeded, DNS failure) "
        "as its stored decisions say: for runs written without them (a rolling deploy over "
        "migration 0016)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--since", help="Only runs created at or after this ISO 8601 time (UTC if no offset)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        runs = Run.objects.all()
        if options["since"]:
            try:
                runs = runs.filter(created_at__gte=parse_instant("--since", options["since"]))
            except InvalidInput as error:
                raise CommandError(error.detail) from None
        started = time.monotonic()
        interactive = self.stdout.isatty()

        def progress(done: int, total: int) -> None:
            if interactive:
                bar = progress_bar(done, total, started).replace("msg/s", "runs/s")
                self.stdout.write(f"\r{bar}", ending="")
                self.stdout.flush()

        count = runs_restate(runs, progress=progress)
        if interactive and count:
            self.stdout.write("")
        self.stdout.write(f"Restated {count} runs in {time.monotonic() - started:.1f} s.")
