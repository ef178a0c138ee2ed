"""The pure core of monthly partitions: boundaries, the months created, the months dropped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from enrichment.pipeline.retention.partitions import (
    MonthPartition,
    add_months,
    droppable,
    first_boundary,
    month_name,
    month_start,
    months_to_create,
)
from enrichment.pipeline.retention.policy import OUTCOMES, RetentionPolicy


def at(year: int, month: int, day: int = 1, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def test_months_are_calendar_months_in_utc_across_a_year_end() -> None:
    assert month_start(datetime.fromisoformat("2026-12-31T23:30:00-02:00")) == at(2027, 1)
    assert add_months(at(2026, 11), 3) == at(2027, 2)
    assert add_months(at(2027, 1), -1) == at(2026, 12)
    assert month_name(at(2027, 1)) == "p2027_01"


def test_the_first_boundary_is_the_next_month_at_least_a_day_away() -> None:
    assert first_boundary(at(2026, 12, 5, 13)) == at(2027, 1)
    # an hour before the month ends: the legacy table keeps the next month too
    assert first_boundary(at(2026, 12, 31, 23)) == at(2027, 2)


def test_months_ahead_start_at_the_boundary_and_never_bring_back_a_past_month() -> None:
    assert months_to_create(at(2027, 1), at(2026, 12, 5), ahead=2) == [at(2027, 1), at(2027, 2)]
    # years later: from the current month on, not from the first boundary
    assert months_to_create(at(2027, 1), at(2029, 6, 10), ahead=1) == [at(2029, 6), at(2029, 7)]
    with pytest.raises(ValueError, match="between 1 and 24"):
        months_to_create(at(2027, 1), at(2026, 12, 5), ahead=0)


MONTHS = [MonthPartition(at(2027, m)) for m in (1, 2, 3, 4)]


def test_a_month_is_dropped_once_its_end_is_before_every_outcomes_cut() -> None:
    due = droppable(MONTHS, RetentionPolicy(days=30), OUTCOMES, now=at(2027, 4, 5))
    # cut 2027-03-06: January and February ended before it, March did not
    assert [m.name for m in due.months] == ["p2027_01", "p2027_02"]
    assert due.kept_outcomes == ("running",)  # never pruned: a month holding one stays


def test_failures_kept_longer_keep_their_months() -> None:
    policy = RetentionPolicy(days=30, days_by_outcome={"error": 60})
    due = droppable(MONTHS, policy, OUTCOMES, now=at(2027, 4, 5))
    assert [m.name for m in due.months] == ["p2027_01"]  # error's cut: 2027-02-04


def test_nothing_is_dropped_when_runs_are_kept_forever() -> None:
    assert droppable(MONTHS, RetentionPolicy(), OUTCOMES, now=at(2030, 1)).months == ()
    # only errors pruned: every other outcome is kept, so a month goes only if it has none
    due = droppable(MONTHS, RetentionPolicy(days_by_outcome={"error": 1}), OUTCOMES, at(2030, 1))
    assert len(due.months) == 4 and "success" in due.kept_outcomes
