"""The history's duration chart: which bucket a run's duration falls in."""

from __future__ import annotations

import doctest

from common import distribution
from common.distribution import summarize_durations


def test_the_examples_in_the_docstrings_hold() -> None:
    assert doctest.testmod(distribution).failed == 0


def test_each_bucket_holds_its_lower_bound_and_stops_below_its_upper() -> None:
    # Unsorted on purpose: the summary sorts before it counts.
    summary = summarize_durations([10_000, 9, 10, 3_000, 29, 30, 2_999, 0, 99_999])
    assert [(b.label, b.count) for b in summary.buckets] == [
        ("< 10 ms", 2),
        ("10–30 ms", 2),
        ("30–100 ms", 1),
        ("100–300 ms", 0),
        ("300 ms–1 s", 0),
        ("1–3 s", 1),
        ("3–10 s", 1),
        ("≥ 10 s", 2),
    ]
    assert summarize_durations([]).count == 0
    assert all(b.count == 0 for b in summarize_durations([]).buckets)
