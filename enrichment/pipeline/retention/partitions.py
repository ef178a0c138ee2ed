"""Monthly partitions of the decision log: the pure core (names, bounds, what to create, what
can be dropped whole).

On PostgreSQL the runs and their child rows (URL decisions, attempts) can be stored in one
partition per calendar month (UTC) of the run's creation (``manage.py partition_runs``):
pruning a month is then dropping its partitions instead of deleting a million rows. What was
stored before the switch stays in one *legacy* partition (runs created before the first
month boundary) and is pruned row by row as before.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 12, 5, 13, 0, tzinfo=timezone.utc)
    >>> first_boundary(now).date().isoformat()
    '2027-01-01'
    >>> [month_name(m) for m in months_to_create(first_boundary(now), now, ahead=2)]
    ['p2027_01', 'p2027_02']

A month can be dropped whole when every outcome that is ever pruned expired for all of it
(its end is before each outcome's cut) and it holds no run of an outcome kept forever (such as
``running``): ``droppable`` answers which months those are and which outcomes must be absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from enrichment.pipeline.retention.policy import RetentionPolicy, retention_cuts

# A first boundary closer than this moves to the month after: the legacy table must take the
# inserts of the days before it (its bound is checked before the switch), so a switch an hour
# before midnight on the last day of a month never races that midnight.
FIRST_BOUNDARY_MARGIN = timedelta(days=1)
MAX_AHEAD = 24


def month_start(moment: datetime) -> datetime:
    """The start (UTC) of the calendar month holding ``moment``."""
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def add_months(start: datetime, months: int) -> datetime:
    index = start.year * 12 + (start.month - 1) + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def newest_months(moment: datetime, months: int) -> list[tuple[datetime | None, datetime | None]]:
    """The times ``[since, before)`` of the ``months`` calendar months up to the one holding
    ``moment``, newest first (the newest has no end: None), then of every older time (no
    start). A month before year 1 is left out.

    >>> from datetime import timezone
    >>> ranges = newest_months(datetime(2026, 1, 10, tzinfo=timezone.utc), 2)
    >>> [tuple(bound and bound.date().isoformat() for bound in pair) for pair in ranges]
    [('2026-01-01', None), ('2025-12-01', '2026-01-01'), (None, '2025-12-01')]
    >>> newest_months(datetime(1, 1, 10, tzinfo=timezone.utc), 2)[1:]
    [(None, datetime.datetime(1, 1, 1, 0, 0, tzinfo=datetime.timezone.utc))]
    """
    ranges: list[tuple[datetime | None, datetime | None]] = []
    before = None
    start = month_start(moment)
    for back in range(months):
        try:
            since = add_months(start, -back)
        except ValueError:  # before year 1
            break
        ranges.append((since, before))
        before = since
    ranges.append((None, before))
    return ranges


def month_name(start: datetime) -> str:
    """The suffix of a month's partitions: ``p2027_01``."""
    return f"p{start.year:04d}_{start.month:02d}"


def first_boundary(now: datetime) -> datetime:
    """Where the monthly partitions begin when storage is partitioned now: the next month
    boundary at least ``FIRST_BOUNDARY_MARGIN`` away."""
    boundary = add_months(month_start(now), 1)
    if boundary - now < FIRST_BOUNDARY_MARGIN:
        boundary = add_months(boundary, 1)
    return boundary


def months_to_create(
    first: datetime, now: datetime, *, ahead: int, past: bool = False
) -> list[datetime]:
    """The starts of the months from now's (or ``first``, when later) up to and including
    the month ``ahead`` months after now's. Past months are never created again (a month
    dropped by retention stays dropped), except with ``past`` (a new database switched with
    an earlier first boundary, to be loaded with older runs): every month from ``first``."""
    if not 1 <= ahead <= MAX_AHEAD:
        raise ValueError(f"months ahead must be between 1 and {MAX_AHEAD}, not {ahead}")
    last = add_months(month_start(now), ahead)
    months = []
    month = first if past else max(first, month_start(now))
    while month <= last:
        months.append(month)
        month = add_months(month, 1)
    return months


@dataclass(frozen=True)
class MonthPartition:
    start: datetime

    @property
    def end(self) -> datetime:
        return add_months(self.start, 1)

    @property
    def name(self) -> str:
        return month_name(self.start)


@dataclass(frozen=True)
class Droppable:
    months: tuple[MonthPartition, ...]
    # Outcomes never pruned by the policy: a month holding any of them stays (row pruning
    # then removes what expired in it).
    kept_outcomes: tuple[str, ...]


def droppable(
    months: Iterable[MonthPartition],
    policy: RetentionPolicy,
    outcomes: Sequence[str],
    now: datetime,
) -> Droppable:
    """The months whose runs have all expired, oldest first (none when an outcome is
    pruned never, or no outcome at all)."""
    cuts = retention_cuts(policy, outcomes, now)
    pruned = {cut.outcome for cut in cuts}
    kept = tuple(outcome for outcome in outcomes if outcome not in pruned)
    if not cuts or not pruned.intersection(outcomes):
        return Droppable((), kept)
    before = min(cut.before for cut in cuts)
    due = tuple(sorted((m for m in months if m.end <= before), key=lambda m: m.start))
    return Droppable(due, kept)


def outside(months: Iterable[MonthPartition]) -> list[tuple[datetime | None, datetime | None]]:
    """The time not covered by these months, as ``[start, end)`` ranges in order (``None``:
    unbounded). A query for runs in these ranges (an OR of ranges) lets PostgreSQL skip the
    months' partitions; ``NOT`` of a range would not."""
    gaps: list[tuple[datetime | None, datetime | None]] = []
    start: datetime | None = None
    for month in sorted(months, key=lambda m: m.start):
        if start is None or start < month.start:
            gaps.append((start, month.start))
        start = month.end if start is None or month.end > start else start
    gaps.append((start, None))
    return gaps
