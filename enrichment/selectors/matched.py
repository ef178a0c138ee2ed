"""The history page's numbers from one read of every matching run (pure: no database).

When a rare word or URL fragment bounds the matches (``text_search.planned`` listed them:
at most ``RARE_MATCHES`` runs), the page reads the runs that match every filter but the
four it has facets for (outcome, channel, chat type, derived status) once, newest first,
and works out here what it otherwise asked the database for in four more reads of the same
runs: which of them match each set of choices, the count, the facet groups and the page's
ids. At 10M runs each of those reads looked the ~2,500 runs of a host and a path up by id
in every month's index. ``ranked_after`` puts such runs in a duration order from their
listing alone (``text_search.ranked_first``).

Worked example (two runs, the outcome ``error`` chosen)::

    >>> from datetime import UTC, datetime
    >>> runs = [
    ...     MatchedRun(2, datetime(2026, 5, 2, tzinfo=UTC), "error", "Telegram", "direct",
    ...                120, frozenset({"dns-failure"})),
    ...     MatchedRun(1, datetime(2026, 5, 1, tzinfo=UTC), "success", "telegram", "group",
    ...                None, frozenset()),
    ... ]
    >>> [run.id for run in runs if Choices(outcomes=("error",)).keep(run)]
    [2]
    >>> grouped(runs, statuses=("media", "dns-failure"))
    [('error', 'telegram', 'direct', 1, 0, 1), ('success', 'telegram', 'group', 1, 0, 0)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class MatchedRun:
    """What the page's numbers need of one run."""

    id: int
    created_at: datetime
    outcome: str
    channel: str
    chat_type: str
    duration_ms: int | None
    statuses: frozenset[str]  # its derived statuses (``selectors.status.STATUSES``)


@dataclass(frozen=True)
class Choices:
    """The values chosen for each faceted filter; any of them matches, none: every run.
    Channels compare case-insensitively, as the database filter does."""

    outcomes: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    chat_types: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()

    def keep(self, run: MatchedRun) -> bool:
        if self.outcomes and run.outcome not in self.outcomes:
            return False
        if self.channels and run.channel.upper() not in {c.upper() for c in self.channels}:
            return False
        if self.chat_types and run.chat_type not in self.chat_types:
            return False
        return not self.statuses or any(status in run.statuses for status in self.statuses)


def grouped(runs: Iterable[MatchedRun], *, statuses: Sequence[str]) -> list[tuple[Any, ...]]:
    """(outcome, lower-cased channel, chat type, runs, runs per status in ``statuses``…)
    per grouping, in the order each grouping is first met: the rows the database's GROUP BY
    gives the facets (``history_page._window_groups``)."""
    sums: dict[tuple[str, str, str], list[int]] = {}
    for run in runs:
        key = (run.outcome, run.channel.lower(), run.chat_type)
        counts = sums.setdefault(key, [0] * (1 + len(statuses)))
        counts[0] += 1
        for index, status in enumerate(statuses, start=1):
            counts[index] += status in run.statuses
    return [(*key, *counts) for key, counts in sums.items()]


def newest_after(
    runs: Sequence[MatchedRun], position: tuple[datetime, int] | None, limit: int
) -> list[MatchedRun]:
    """The first ``limit`` of ``runs`` (newest first) after ``position`` (a cursor's time
    and id; None: from the newest), newest first.

    >>> from datetime import UTC, datetime
    >>> day = datetime(2026, 5, 1, tzinfo=UTC)
    >>> runs = [MatchedRun(n, day, "success", "", "", None, frozenset()) for n in (9, 7, 4)]
    >>> [run.id for run in newest_after(runs, (day, 7), 5)]
    [4]
    >>> [run.id for run in newest_after(runs, None, 2)]
    [9, 7]
    """
    if position is None:
        return list(runs[:limit])
    return [run for run in runs if (run.created_at, run.id) < position][:limit]


def ranked_after(
    durations: Mapping[int, int | None],
    *,
    none_as: int,
    descending: bool,
    position: tuple[int, int] | None,
) -> list[int]:
    """Run ids (keys of ``durations``) in the order of (duration, id), descending or
    ascending, a run without a duration counted as ``none_as``; after ``position`` only (a
    cursor's duration key and id; None: from the first).

    >>> durations = {1: 300, 2: None, 3: 300, 4: 50}
    >>> ranked_after(durations, none_as=-1, descending=True, position=None)
    [3, 1, 4, 2]
    >>> ranked_after(durations, none_as=-1, descending=True, position=(300, 3))
    [1, 4, 2]
    >>> ranked_after(durations, none_as=2**31 - 1, descending=False, position=(50, 4))
    [1, 3, 2]
    """
    keyed = sorted(
        ((none_as if duration is None else duration, run) for run, duration in durations.items()),
        reverse=descending,
    )
    if position is not None:
        keyed = [item for item in keyed if (item < position if descending else item > position)]
    return [run for _, run in keyed]
