"""Reads behind the overview page: outcome totals, the outcome mix over time, top failures.

Aggregation happens in the database (``GROUP BY``); Python only lays the counts out as the
geometry of a stacked bar chart, which the template draws as inline SVG.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, QuerySet
from django.db.models.functions import TruncDay, TruncHour
from django.utils import timezone

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.net.ssrf import UNRESOLVED
from enrichment.pipeline.net.urls import display_host
from enrichment.selectors.status import with_media_flag


@dataclass(frozen=True)
class Period:
    key: str
    label: str
    span: timedelta
    bucket: timedelta


PERIODS: dict[str, Period] = {
    "24h": Period("24h", "Last 24 hours", timedelta(hours=24), timedelta(hours=1)),
    "7d": Period("7d", "Last 7 days", timedelta(days=7), timedelta(days=1)),
    "30d": Period("30d", "Last 30 days", timedelta(days=30), timedelta(days=1)),
}
DEFAULT_PERIOD = "24h"
# Stacking order of the chart (bottom first) and of the legend.
CHART_OUTCOMES = tuple(Run.Outcome.values)
# The plot's own units: the page stretches the SVG to the card's width and a fixed height
# (its axis labels are HTML beside it, so their size never scales with the chart).
CHART_WIDTH = 720
CHART_HEIGHT = 160


def period_for(key: str | None) -> Period:
    """The period named in the query string; unknown names fall back to the default."""
    return PERIODS.get(key or "", PERIODS[DEFAULT_PERIOD])


def outcome_totals(*, since: datetime) -> dict[str, int]:
    """Runs per outcome since ``since``, every outcome present (zero when none)."""
    rows = (
        Run.objects.filter(created_at__gte=since)
        .order_by()
        .values("outcome")
        .annotate(count=Count("id"))
    )
    counts = {row["outcome"]: row["count"] for row in rows}
    return {outcome: counts.get(outcome, 0) for outcome in CHART_OUTCOMES}


@dataclass(frozen=True)
class ChartSegment:
    outcome: str
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class ChartBar:
    start: datetime
    x: float
    width: float
    total: int
    segments: tuple[ChartSegment, ...]
    label: str  # x-axis label, empty for bars that skip one
    end: datetime | None = None  # the bucket's end: a bar links to its runs [start, end)
    minor: bool = False  # every other label: left out where the chart is narrow (a phone)


@dataclass(frozen=True)
class OutcomeChart:
    period: Period
    bars: tuple[ChartBar, ...]
    peak: int
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT

    @property
    def is_empty(self) -> bool:
        return self.peak == 0

    @property
    def y_ticks(self) -> list[dict[str, float]]:
        """Gridlines at the axis's top, middle and 0 (top first), with their y in the SVG.

        The page sets the labels beside the plot, spread evenly over its height: each sits
        on its gridline because the ticks are evenly spaced, the middle one a whole count."""
        if self.peak == 0:
            return []
        top = axis_top(self.peak)
        return [
            {"value": value, "y": CHART_HEIGHT * (1 - value / top)} for value in (top, top // 2, 0)
        ]


def axis_top(peak: int) -> int:
    """The y axis's top: the peak, or one more when odd, so that half of it is whole."""
    return peak + peak % 2


def bucket_starts(period: Period, now: datetime) -> list[datetime]:
    """Bucket start times covering the period, oldest first, aligned like ``Trunc*``.

    For "24h" at 10:20 that is 24 hourly buckets, from yesterday 11:00 to today 10:00.
    """
    if period.bucket >= timedelta(days=1):
        last = now.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        last = now.replace(minute=0, second=0, microsecond=0)
    count = int(period.span / period.bucket)
    return [last - period.bucket * index for index in range(count - 1, -1, -1)]


def outcome_chart(*, period: Period, now: datetime | None = None) -> OutcomeChart:
    """Counts per (bucket, outcome) in one grouped query, laid out as stacked bars."""
    now = now or timezone.now()
    starts = bucket_starts(period, now)
    trunc = TruncDay if period.bucket >= timedelta(days=1) else TruncHour
    rows = (
        Run.objects.filter(created_at__gte=starts[0])
        .annotate(bucket=trunc("created_at"))
        .order_by()
        .values("bucket", "outcome")
        .annotate(count=Count("id"))
    )
    counts: dict[datetime, Counter[str]] = {start: Counter() for start in starts}
    for row in rows:
        if row["bucket"] in counts:
            counts[row["bucket"]][row["outcome"]] += row["count"]
    peak = max((sum(counter.values()) for counter in counts.values()), default=0)
    return OutcomeChart(period=period, bars=_bars(starts, counts, peak, period), peak=peak)


def _bars(
    starts: list[datetime], counts: dict[datetime, Counter[str]], peak: int, period: Period
) -> tuple[ChartBar, ...]:
    top = axis_top(peak)
    slot = CHART_WIDTH / len(starts)
    label_every = max(1, len(starts) // 8)
    bars = []
    for index, start in enumerate(starts):
        counter = counts[start]
        bottom = float(CHART_HEIGHT)
        segments = []
        for outcome in CHART_OUTCOMES:
            if not counter[outcome]:
                continue
            height = CHART_HEIGHT * counter[outcome] / top
            bottom -= height
            segments.append(
                ChartSegment(outcome, counter[outcome], round(bottom, 2), round(height, 2))
            )
        label = ""
        if index % label_every == 0:
            label = start.strftime("%H:%M" if period.bucket < timedelta(days=1) else "%b %d")
        bars.append(
            ChartBar(
                start=start,
                x=round(index * slot + slot * 0.1, 2),
                width=round(slot * 0.8, 2),
                total=sum(counter.values()),
                segments=tuple(segments),
                label=label,
                end=start + period.bucket,
                minor=(index // label_every) % 2 == 1,
            )
        )
    return tuple(bars)


@dataclass(frozen=True)
class Ranked:
    name: str
    count: int


def top_failing_commands(*, since: datetime, limit: int = 5) -> list[Ranked]:
    """CLI entries with the most failed attempts since ``since``."""
    rows = (
        Attempt.objects.filter(outcome="failed", url_decision__run__created_at__gte=since)
        .order_by()
        .values("command")
        .annotate(count=Count("id"))
        .order_by("-count", "command")[:limit]
    )
    return [Ranked(row["command"] or "(none)", row["count"]) for row in rows]


def top_blocked_hosts(*, since: datetime, limit: int = 5, scan: int = 500) -> list[Ranked]:
    """Hosts whose URLs the SSRF policy refused most often since ``since``.

    The host is not a column, so the database groups by URL (the most frequent ``scan``
    URLs) and Python folds URLs of the same host together. A host that did not resolve was
    not refused by the policy: it is counted by ``top_dns_failures`` instead.
    """
    blocked = UrlDecision.objects.filter(blocked=True, run__created_at__gte=since)
    return _top_hosts(blocked.exclude(reason=UNRESOLVED), limit, scan)


def top_dns_failures(*, since: datetime, limit: int = 5, scan: int = 500) -> list[Ranked]:
    """Hosts that did not resolve most often since ``since`` (a category of its own)."""
    unresolved = UrlDecision.objects.filter(
        blocked=True, reason=UNRESOLVED, run__created_at__gte=since
    )
    return _top_hosts(unresolved, limit, scan)


def _top_hosts(decisions: QuerySet[UrlDecision], limit: int, scan: int) -> list[Ranked]:
    rows = decisions.order_by().values("url").annotate(count=Count("id")).order_by("-count")[:scan]
    hosts: Counter[str] = Counter()
    for row in rows:
        hosts[display_host(row["url"])] += row["count"]
    ranked = sorted(hosts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Ranked(name, count) for name, count in ranked]


def recent_runs(*, limit: int = 10) -> list[Run]:
    runs = Run.objects.only(
        "id",
        "created_at",
        "channel",
        "chat_type",
        "session_key",
        "outcome",
        "url_count",
        "attempts_failed",
        "fallback_used",
        "dns_failed",
    )
    return list(with_media_flag(runs).history_order()[:limit])


@dataclass(frozen=True)
class Overview:
    period: Period
    totals: dict[str, int]
    total: int
    chart: OutcomeChart
    failing_commands: list[Ranked]
    blocked_hosts: list[Ranked]
    recent: list[Run]
    dns_failures: list[Ranked]
    since: datetime | None = None  # the period's start: drill-down links keep it


def overview(*, period_key: str | None, now: datetime | None = None) -> Overview:
    """Everything the overview page shows, for the selected period."""
    now = now or timezone.now()
    period = period_for(period_key)
    since = now - period.span
    totals = outcome_totals(since=since)
    return Overview(
        period=period,
        totals=totals,
        total=sum(totals.values()),
        chart=outcome_chart(period=period, now=now),
        failing_commands=top_failing_commands(since=since),
        blocked_hosts=top_blocked_hosts(since=since),
        recent=recent_runs(),
        dns_failures=top_dns_failures(since=since),
        since=since,
    )
