"""The time outside some months (``outside``): what a prune pass still counts row by row
after the months it drops whole."""

from __future__ import annotations

from datetime import UTC, datetime

from enrichment.pipeline.retention.partitions import MonthPartition, outside


def month(year: int, number: int) -> MonthPartition:
    return MonthPartition(datetime(year, number, 1, tzinfo=UTC))


def test_no_month_leaves_all_of_time() -> None:
    assert outside([]) == [(None, None)]


def test_touching_months_leave_one_gap_before_and_one_after() -> None:
    assert outside([month(2026, 10), month(2026, 9)]) == [
        (None, datetime(2026, 9, 1, tzinfo=UTC)),
        (datetime(2026, 11, 1, tzinfo=UTC), None),
    ]


def test_a_month_kept_between_dropped_ones_stays_outside() -> None:
    assert outside([month(2026, 8), month(2026, 10)]) == [
        (None, datetime(2026, 8, 1, tzinfo=UTC)),
        (datetime(2026, 9, 1, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC)),
        (datetime(2026, 11, 1, tzinfo=UTC), None),
    ]
