"""Every metric Control UI exports at ``/metrics``: names, label sets and buckets in one place.

The recording sites (the run service, the extraction pool, the ASGI edge, the enrich socket)
call the small functions below; the shell (``controlui/metrics.py``) guards the endpoint and
adds the gauges read at scrape time (queue depth, running and overdue runs, live workers).

Labels stay bounded whatever the messages say: a channel is an operator-facing name given by
the gateway, a command comes from the stored config, but both are strings from outside, so
each label keeps at most ``MAX_LABEL_VALUES`` distinct values per process (later ones are
counted as ``other``) and at most ``MAX_LABEL_CHARS`` characters:

    >>> labels = BoundedLabel(most=2)
    >>> [labels("Telegram"), labels("slack"), labels("discord"), labels("telegram")]
    ['telegram', 'slack', 'other', 'telegram']

Across processes: with ``PROMETHEUS_MULTIPROC_DIR`` set (to an empty directory, before any
process starts) prometheus-client keeps each process's values in files there and a scrape
of any daphne process sums them all (``multiprocess_directory``); without it each process
has its own registry, and a scrape sees the process that answered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric

# ``*_created`` series double every counter's output and no dashboard here reads them.
disable_created_metrics()

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_LABEL_VALUES = 50
MAX_LABEL_CHARS = 80
OTHER = "other"

# Seconds: a page fetched and extracted in process answers in tens of milliseconds, a CLI or
# a media provider in seconds; the top buckets catch the configured timeouts (30-120 s).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
CPU_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

RUNS = Counter(
    "controlui_runs",
    "Enrichment runs finished, by outcome (success, skipped, error, ...) and channel.",
    ["outcome", "channel"],
)
RUN_SECONDS = Histogram(
    "controlui_run_duration_seconds",
    "Wall time of one enrichment run, by outcome.",
    ["outcome"],
    buckets=LATENCY_BUCKETS,
)
LINK_ATTEMPT_SECONDS = Histogram(
    "controlui_link_attempt_duration_seconds",
    "One link-model attempt (a CLI, or the built-in fetcher in process), by command, type "
    "(cli, in-process, ssrf) and outcome.",
    ["command", "type", "outcome"],
    buckets=LATENCY_BUCKETS,
)
MEDIA_ATTEMPT_SECONDS = Histogram(
    "controlui_media_attempt_duration_seconds",
    "One media-understanding attempt, by capability (audio, image, video), type "
    "(provider, cli), command (the provider or the program) and outcome.",
    ["capability", "type", "command", "outcome"],
    buckets=LATENCY_BUCKETS,
)
EXTRACTION_CPU_SECONDS = Histogram(
    "controlui_extraction_cpu_seconds",
    "CPU time of one page extraction in an extraction worker process.",
    buckets=CPU_BUCKETS,
)
HTTP_REQUESTS = Counter(
    "controlui_http_requests",
    "HTTP requests answered, by method, route (the URL pattern) and status code.",
    ["method", "route", "status"],
)
HTTP_SECONDS = Histogram(
    "controlui_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by method and route.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
WEBSOCKET_CONNECTIONS = Counter(
    "controlui_websocket_connections",
    "WebSocket connections opened, by route.",
    ["route"],
)
WEBSOCKET_OPEN = Gauge(
    "controlui_websocket_open_connections",
    "WebSocket connections open now, by route (summed over the live processes).",
    ["route"],
    multiprocess_mode="livesum",
)
WEBSOCKET_MESSAGES = Counter(
    "controlui_websocket_messages",
    "WebSocket frames, by route and direction (in, out).",
    ["route", "direction"],
)
WEBSOCKET_REQUESTS = Counter(
    "controlui_websocket_requests",
    "Requests answered on a socket (an enrich frame's final result or error frame).",
    ["route", "outcome"],
)
WEBSOCKET_REQUEST_SECONDS = Histogram(
    "controlui_websocket_request_duration_seconds",
    "Time from a request frame to its final answer frame, by route and outcome.",
    ["route", "outcome"],
    buckets=LATENCY_BUCKETS,
)

# Read at scrape time from the database and the job queue (``QueueReadings``).
QUEUE_DEPTH = "controlui_queue_depth"
QUEUE_DEAD_LETTERS = "controlui_queue_dead_letters"
QUEUE_RETRYING = "controlui_queue_retrying"
WORKERS_LIVE = "controlui_workers_live"
RUNS_RUNNING = "controlui_runs_running"
RUNS_OVERDUE = "controlui_runs_overdue"


# ``METRICS_ENABLED=0`` (the shell calls ``recording_set``) records nothing: no label lookups,
# no histogram writes, no ASGI wrapper; ``/metrics`` is then 404.
_recording = True


def recording_set(enabled: bool) -> None:
    global _recording
    _recording = enabled


def recording() -> bool:
    return _recording


class BoundedLabel:
    """A label's values, lower-cased and cut to ``MAX_LABEL_CHARS``; after ``most`` distinct
    values every new one is ``other`` (see the module docstring)."""

    def __init__(self, most: int = MAX_LABEL_VALUES, *, lower: bool = True) -> None:
        self._most = most
        self._lower = lower
        self._seen: set[str] = set()

    def __call__(self, value: object) -> str:
        text = str(value or "").strip()[:MAX_LABEL_CHARS]
        text = text.lower() if self._lower else text
        if not text:
            return "none"
        if text in self._seen:
            return text
        if len(self._seen) >= self._most:
            return OTHER
        self._seen.add(text)
        return text


_channel = BoundedLabel()
_command = BoundedLabel(lower=False)
_route = BoundedLabel(200, lower=False)


@dataclass(frozen=True)
class AttemptSample:
    """One attempt of a run's records, as the histograms see it."""

    stage: str  # "links" or "media"
    labels: tuple[str, ...]
    seconds: float


def _seconds(milliseconds: object) -> float | None:
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, int | float):
        return None
    return max(float(milliseconds), 0.0) / 1000


def attempt_samples(records: Mapping[str, Any]) -> Iterator[AttemptSample]:
    """The timed attempts of a finished run's records as the API returns them
    (``stage_json``): ``links.urls[].attempts[]`` and ``media[].attachments[].attempts[]``.

        >>> records = {"links": {"urls": [{"attempts": [
        ...     {"type": "in-process", "command": "link-understand", "outcome": "success",
        ...      "durationMs": 40}]}]}}
        >>> list(attempt_samples(records))
        [AttemptSample(stage='links', labels=('link-understand', 'in-process', 'success'), seconds=0.04)]
    """
    links = records.get("links")
    urls = (links.get("urls") or ()) if isinstance(links, Mapping) else ()
    for url in urls:
        for attempt in url.get("attempts") or ():
            seconds = _seconds(attempt.get("durationMs"))
            if seconds is not None:
                labels = (attempt.get("command"), attempt.get("type"), attempt.get("outcome"))
                yield AttemptSample("links", tuple(str(item or "") for item in labels), seconds)
    media = records.get("media")
    for decision in media if isinstance(media, list) else ():
        for attachment in decision.get("attachments") or ():
            for attempt in attachment.get("attempts") or ():
                seconds = _seconds(attempt.get("durationMs"))
                if seconds is None:
                    continue
                argv = attempt.get("argv") or [""]
                command = attempt.get("provider") or argv[0]
                labels = (decision.get("capability"), attempt.get("type"), command)
                yield AttemptSample(
                    "media",
                    (*(str(item or "") for item in labels), str(attempt.get("outcome") or "")),
                    seconds,
                )


def run_observe(
    *, outcome: str, channel: str, duration_ms: int | None, records: Mapping[str, Any]
) -> None:
    """Count one finished run and time its attempts."""
    if not _recording:
        return
    RUNS.labels(outcome=outcome, channel=_channel(channel)).inc()
    if duration_ms is not None:
        RUN_SECONDS.labels(outcome=outcome).observe(duration_ms / 1000)
    for sample in attempt_samples(records):
        if sample.stage == "links":
            command, kind, result = sample.labels
            LINK_ATTEMPT_SECONDS.labels(
                command=_command(command), type=kind, outcome=result
            ).observe(sample.seconds)
        else:
            capability, kind, command, result = sample.labels
            MEDIA_ATTEMPT_SECONDS.labels(
                capability=capability, type=kind, command=_command(command), outcome=result
            ).observe(sample.seconds)


def extraction_observe(cpu_seconds: float) -> None:
    if not _recording:
        return
    EXTRACTION_CPU_SECONDS.observe(cpu_seconds)


def websocket_request_observe(route: str, outcome: str, seconds: float) -> None:
    if not _recording:
        return
    WEBSOCKET_REQUESTS.labels(route=route, outcome=outcome).inc()
    WEBSOCKET_REQUEST_SECONDS.labels(route=route, outcome=outcome).observe(seconds)


def route_label(route: str) -> str:
    return _route(route)


@dataclass(frozen=True)
class QueueReadings:
    """What the database and the job queue say at scrape time."""

    queued: int
    running: int
    overdue: int
    live_workers: int
    dead_letters: int
    retrying: int = 0


def queue_metrics(readings: QueueReadings) -> list[Metric]:
    gauges = [
        (QUEUE_DEPTH, "Jobs waiting for a worker.", readings.queued),
        (
            QUEUE_DEAD_LETTERS,
            "Jobs given up on (dead letters) kept by the queue.",
            readings.dead_letters,
        ),
        (QUEUE_RETRYING, "Jobs waiting for their retry (backoff).", readings.retrying),
        (
            WORKERS_LIVE,
            "Enrichment worker processes with a fresh heartbeat.",
            readings.live_workers,
        ),
        (RUNS_RUNNING, "Runs recorded as running.", readings.running),
        (RUNS_OVERDUE, "Runs running for longer than RUN_OVERDUE_SECONDS.", readings.overdue),
    ]
    return [GaugeMetricFamily(name, text, value=value) for name, text, value in gauges]


class Collector(Protocol):
    def collect(self) -> Iterable[Metric]: ...


class _Together:
    def __init__(self, *collectors: Collector) -> None:
        self._collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self._collectors:
            yield from collector.collect()


def multiprocess_directory() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip() or None


def exposition(scraped: Collector) -> bytes:
    """The text of a scrape: this process's registry (or every process's files in
    multiprocess mode) plus ``scraped``'s gauges, read now."""
    if multiprocess_directory():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(_Together(registry, scraped))
    return generate_latest(_Together(REGISTRY, scraped))


def process_exit() -> None:
    """A process that stops drops its live gauges (open sockets) from the shared files."""
    if multiprocess_directory():
        multiprocess.mark_process_dead(os.getpid())
