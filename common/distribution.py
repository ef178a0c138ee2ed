"""Duration percentiles and a small histogram, for the history's "how long do these take".

Percentiles use the nearest-rank method (a value that really occurred, never an
interpolation between two runs). Buckets grow by about ×3, which keeps a 5 ms run and a
30 s run on one small chart::

    >>> summary = summarize_durations([5, 12, 40, 40, 95, 2500])
    >>> summary.p50, summary.p95, summary.count
    (40, 2500, 6)
    >>> [(bucket.label, bucket.count) for bucket in summary.buckets if bucket.count]
    [('< 10 ms', 1), ('10–30 ms', 1), ('30–100 ms', 3), ('1–3 s', 1)]
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

# Upper bounds (exclusive) of the buckets in ms; the last bucket is open-ended.
BUCKET_BOUNDS = (10, 30, 100, 300, 1_000, 3_000, 10_000)
CHART_HEIGHT = 40


def _ms(value: int) -> str:
    return f"{value // 1000} s" if value >= 1000 else f"{value} ms"


def _bucket_labels() -> tuple[str, ...]:
    labels = [f"< {_ms(BUCKET_BOUNDS[0])}"]
    for low, high in zip(BUCKET_BOUNDS, BUCKET_BOUNDS[1:], strict=False):
        same_unit = (low >= 1000) == (high >= 1000)
        low_text = _ms(low).split()[0] if same_unit else _ms(low)
        labels.append(f"{low_text}–{_ms(high)}")
    labels.append(f"≥ {_ms(BUCKET_BOUNDS[-1])}")
    return tuple(labels)


BUCKET_LABELS = _bucket_labels()


@dataclass(frozen=True)
class Bucket:
    label: str
    count: int
    height: int  # bar height in chart units (0..CHART_HEIGHT), for the page's SVG
    index: int

    @property
    def y(self) -> int:
        return CHART_HEIGHT - self.height

    @property
    def x(self) -> int:
        return self.index * 20 + 2


@dataclass(frozen=True)
class DurationSummary:
    count: int
    p50: int | None
    p95: int | None
    buckets: tuple[Bucket, ...]
    chart_height: int = CHART_HEIGHT
    bar_width: int = 20

    @property
    def chart_width(self) -> int:
        return self.bar_width * len(self.buckets)

    @property
    def description(self) -> str:
        """The chart in words (its accessible name): ``< 10 ms: 1 run, 10–30 ms: 4 runs…``."""
        return ", ".join(
            f"{bucket.label}: {bucket.count} run{'s' if bucket.count != 1 else ''}"
            for bucket in self.buckets
        )


def percentile(sorted_values: Sequence[int], fraction: float) -> int | None:
    """Nearest rank: the smallest value with at least ``fraction`` of the values at or below."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def bucket_counts(ordered: Sequence[int]) -> list[int]:
    """How many of the ``ordered`` (sorted) values fall in each bucket: one bisection per
    bound instead of a test of every value (a history page charts up to 5,000 runs).

    >>> bucket_counts([0, 9, 10, 29, 30, 10_000, 99_999])
    [2, 2, 1, 0, 0, 0, 0, 2]
    """
    edges = [0, *(bisect_left(ordered, bound) for bound in BUCKET_BOUNDS), len(ordered)]
    return [high - low for low, high in pairwise(edges)]


def summarize_durations(values: Sequence[int]) -> DurationSummary:
    ordered = sorted(values)
    counts = bucket_counts(ordered)
    peak = max(counts) or 1
    buckets = tuple(
        Bucket(label, count, round(CHART_HEIGHT * count / peak) if count else 0, index)
        for index, (label, count) in enumerate(zip(BUCKET_LABELS, counts, strict=True))
    )
    return DurationSummary(
        count=len(ordered),
        p50=percentile(ordered, 0.5),
        p95=percentile(ordered, 0.95),
        buckets=buckets,
    )
