"""``manage.py partition_runs``: store the decision log in monthly partitions (PostgreSQL).

The first run switches the runs, URL decisions and attempts to tables partitioned by month,
online (README "Retention": what it does, and the locks it takes); every run after it, and
every prune pass, creates the months ahead. ``--status`` says what is there and changes
nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from enrichment.pipeline.retention.partitions import MAX_AHEAD
from enrichment.services.partitions import (
    PartitionError,
    PartitionStatus,
    partition_status,
    partitioned_storage_switch,
)


class Command(BaseCommand):
    help = "Store the decision log in monthly partitions (PostgreSQL); create months ahead."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--ahead",
            type=int,
            help=f"Months to create ahead, 1-{MAX_AHEAD} (default RUNS_PARTITIONS_AHEAD).",
        )
        parser.add_argument(
            "--status", action="store_true", help="Say how the log is stored; change nothing."
        )
        parser.add_argument(
            "--first-month",
            help="YYYY-MM: the first monthly partition, for a new database about to be loaded "
            "with older runs (default: next month). Every run stored must be older.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ahead = options["ahead"]
        if ahead is not None and not 1 <= ahead <= MAX_AHEAD:
            raise CommandError(f"--ahead: between 1 and {MAX_AHEAD} months, got {ahead}")
        first = _month(options["first_month"]) if options["first_month"] else None
        try:
            if options["status"]:
                status = partition_status()
            else:
                status = partitioned_storage_switch(
                    ahead=ahead, first=first, say=lambda line: self.stdout.write(f"  {line}")
                )
        except PartitionError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(describe(status))


def _month(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m").replace(tzinfo=UTC)
    except ValueError:
        raise CommandError(f"--first-month: expected YYYY-MM, got {text!r}") from None


def describe(status: PartitionStatus) -> str:
    if not status.partitioned:
        return "The decision log is not partitioned."
    months = ", ".join(month.name for month in status.months) or "none"
    legacy = "; runs from before the switch in the legacy partition" if status.legacy else ""
    until = f"; runs can be stored until {status.until:%Y-%m-%d}" if status.until else ""
    return f"Partitioned by month: {months}{legacy}{until}."
