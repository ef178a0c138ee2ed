"""A problem's trend: occurrences per hour kept on the problem itself, and its sparklines.

The counts live on the problem (``{"2026-12-04T23": 3, ...}``, at most a week of hours), so
the list page draws every trend from the problem rows alone, and a trend survives the runs
behind it being redacted or pruned.

    >>> now = datetime(2026, 12, 4, 23, 30, tzinfo=UTC)
    >>> hourly = hourly_add({}, at=now - timedelta(hours=2), now=now)
    >>> hourly = hourly_add(hourly, at=now - timedelta(days=9), now=now)  # too old: dropped
    >>> hourly
    {'2026-12-04T21': 1}
    >>> last_hours(hourly, now=now, hours=4)
    [0, 1, 0, 0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KEEP_HOURS = 7 * 24
HOUR_FORMAT = "%Y-%m-%dT%H"


def hour_key(at: datetime) -> str:
    return at.astimezone(UTC).strftime(HOUR_FORMAT)


def hourly_add(
    hourly: Mapping[str, int], *, at: datetime, now: datetime, count: int = 1
) -> dict[str, int]:
    """``hourly`` with ``count`` more at ``at``'s hour, hours older than a week dropped."""
    oldest = hour_key(now - timedelta(hours=KEEP_HOURS - 1))
    kept = {key: value for key, value in hourly.items() if isinstance(key, str) and key >= oldest}
    key = hour_key(at)
    if key >= oldest:
        kept[key] = int(kept.get(key, 0)) + count
    return dict(sorted(kept.items()))


def last_hours(hourly: Mapping[str, int], *, now: datetime, hours: int = 24) -> list[int]:
    """Counts of the last ``hours`` hours, oldest first, the current hour last."""
    top = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return [
        _count(hourly, hour_key(top - timedelta(hours=back))) for back in range(hours - 1, -1, -1)
    ]


def last_days(hourly: Mapping[str, int], *, now: datetime, days: int = 7) -> list[int]:
    """Counts per UTC day of the last ``days`` days, oldest first, today last. (The hour keys
    start with their day, ``2026-12-04T23``: compared as text, nothing parsed, since the
    list page does this for every row.)"""
    today = now.astimezone(UTC).date()
    totals = {(today - timedelta(days=back)).isoformat(): 0 for back in range(days)}
    for key, value in hourly.items():
        day = key[:10] if isinstance(key, str) and len(key) == 13 else None
        if day in totals:
            totals[day] += _int(value)
    return [totals[day] for day in sorted(totals)]


def _count(hourly: Mapping[str, int], key: str) -> int:
    return _int(hourly.get(key, 0))


def _int(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


@dataclass(frozen=True)
class SparkBar:
    x: float
    y: float
    width: float
    height: float
    count: int


@dataclass(frozen=True)
class Sparkline:
    """Bars of a small inline SVG chart (the template draws ``<rect>``s from numbers only)."""

    bars: tuple[SparkBar, ...]
    width: int
    height: int
    total: int
    peak: int


def sparkline(counts: Sequence[int], *, width: int = 96, height: int = 24) -> Sparkline:
    """Bars scaled to the peak; an empty slot keeps a 1-unit baseline so the shape reads.

    >>> [bar.height for bar in sparkline([0, 2, 4], width=30, height=10).bars]
    [1.0, 5.0, 10.0]
    """
    peak = max(counts, default=0)
    slot = width / max(len(counts), 1)
    bars = []
    for index, count in enumerate(counts):
        bar_height = round(height * count / peak, 2) if peak and count else 1.0
        bars.append(
            SparkBar(
                x=round(index * slot, 2),
                y=round(height - bar_height, 2),
                width=round(max(slot - 1, 1), 2),
                height=bar_height,
                count=count,
            )
        )
    return Sparkline(tuple(bars), width, height, sum(counts), peak)
