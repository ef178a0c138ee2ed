"""``manage.py seed_demo``: fill an empty install with a realistic, real decision history.

Nothing is faked at the decision level: sample messages (``enrichment.demo.samples``) go
through ``services.enrichment_run`` like any inbound message, against a temporary demo
config whose CLI entries are the demo CLI (live fetch, then the archived copy as fallback)
and, for the ``research`` agent, the built-in ``link-understand``. Their links point at a
throwaway page server on 127.0.0.1 (allowed by the demo config only) or at demo host names
that resolve to private addresses. On a fresh install (the stored config is still the
built-in default) the demo config stays stored afterwards, so the admin and every page agree
with the runs; a config of your own is put back, and so is any config when seeding fails; only ``created_at``/``finished_at`` are rewritten, to spread the runs over the
last days. Finally a few assistant replies with canvas documents are stored.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from argparse import ArgumentTypeError
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count
from django.utils import timezone

from common.errors import DomainError
from enrichment import resolver
from enrichment.config.changes import config_replace
from enrichment.config.store import config_document, default_document
from enrichment.demo import DemoPageServer
from enrichment.demo.samples import (
    CONVERSATIONS,
    READING_LIST_ID,
    STATUS_BOARD_ID,
    DemoStats,
    SampleMessage,
    assistant_samples,
    demo_resolve,
    reading_list_html,
    sample_messages,
    status_board_html,
)
from enrichment.management.commands.enrich import progress_bar
from enrichment.models import Attempt, Run, UrlDecision
from enrichment.services.problems import problems_rebuild
from enrichment.services.runs import EnrichRequest, enrichment_run
from richoutput.models import AssistantMessage
from richoutput.services import canvas_document_store, message_store

DEFAULT_RUNS = 300
DEFAULT_DAYS = 7
# Messages in flight at once. Most of a run is waiting on a CLI process, so this is more
# than the two cores; a sliding window (not fixed batches) keeps a 2 s timeout from
# holding up the messages next to it.
CONCURRENCY = 8
PAGES_DIR = Path(settings.BASE_DIR) / "bench" / "data" / "extraction"
DEMO_CLI = Path(__file__).resolve().parents[2] / "demo" / "demo_cli.py"
# Relative activity per UTC hour of the day: quiet nights, busy working hours.
HOURLY_ACTIVITY = (
    *(0.1,) * 6,
    *(0.3, 0.6, 0.9, 1.0, 1.0, 0.9, 0.7, 1.0, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3),
    *(0.2, 0.15),
)


def demo_document(pages_dir: Path) -> dict[str, Any]:
    """The config the seeding runs under (validated by ``config_replace`` like any other)."""
    demo_cli = [str(DEMO_CLI)] if os.access(DEMO_CLI, os.X_OK) else [sys.executable, str(DEMO_CLI)]
    live = {"command": demo_cli[0], "args": [*demo_cli[1:], "{{LinkUrl}}"], "timeoutSeconds": 2}
    archived = {
        "command": demo_cli[0],
        "args": [*demo_cli[1:], "--archive", str(pages_dir), "{{LinkUrl}}"],
        "timeoutSeconds": 2,
    }
    built_in = {
        "command": "link-understand",
        "args": ["--url", "{{LinkUrl}}", "--format", "markdown", "--max-chars", "1200"]
        + ["--no-cache"],
        "timeoutSeconds": 15,
    }
    rules = [
        {"action": "deny", "match": {"channel": "telegram", "chatType": "group"}},
        {"action": "deny", "match": {"keyPrefix": "agent:main:discord:channel:announcements"}},
        {"action": "allow", "match": {"channel": "slack"}},
    ]
    support_scope = {
        "default": "deny",
        "rules": [{"action": "allow", "match": {"chatType": "direct"}}],
    }
    describe = {
        "type": "cli",
        "command": demo_cli[0],
        "args": [*demo_cli[1:], "--describe", "{{MediaPath}}", "{{MediaType}}"],
    }
    return {
        "tools": {
            "links": {"models": [live, archived], "scope": {"default": "allow", "rules": rules}},
            "media": {"image": {"models": [describe]}},
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        },
        "agents": {
            "list": [
                {"id": "main"},
                {"id": "research", "tools": {"links": {"models": [built_in]}}},
                {"id": "support", "tools": {"links": {"scope": support_scope}}},
                {"id": "archive-bot", "tools": {"links": {"enabled": False}}},
            ]
        },
    }


@contextmanager
def demo_dns() -> Iterator[None]:
    """Answer the SSRF check's DNS questions from the demo world while seeding."""
    original = resolver.resolve_host
    resolver.resolve_host = demo_resolve
    try:
        yield
    finally:
        resolver.resolve_host = original


def spread_timestamps(count: int, *, days: int, now: datetime, rng: Random) -> list[datetime]:
    """``count`` ascending instants in the last ``days`` days, denser in working hours.

    Stratified inverse-CDF sampling over hourly slices weighted by ``HOURLY_ACTIVITY``: the
    i-th instant lands in the i-th ``1/count`` of the window's total activity, so the runs
    cover every day of the window (no empty days by bad luck) and still follow the day.
    """
    end = now - timedelta(minutes=5)  # leave room for finished_at = created_at + duration
    cursor = end - timedelta(days=days)
    slices: list[tuple[datetime, float, float]] = []  # (start, seconds, weight)
    while cursor < end:
        next_hour = cursor.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        stop = min(next_hour, end)
        slices.append((cursor, (stop - cursor).total_seconds(), HOURLY_ACTIVITY[cursor.hour]))
        cursor = stop
    total = sum(seconds * weight for _start, seconds, weight in slices)
    stamps: list[datetime] = []
    index, passed = 0, 0.0
    for position in range(count):
        target = (position + rng.random()) / count * total
        while index < len(slices) - 1 and passed + slices[index][1] * slices[index][2] < target:
            passed += slices[index][1] * slices[index][2]
            index += 1
        start, seconds, weight = slices[index]
        stamps.append(start + timedelta(seconds=min(seconds, (target - passed) / weight)))
    return stamps


class Command(BaseCommand):
    help = (
        "Fill the decision log with a realistic history by running the real pipeline over "
        "sample messages (local demo pages and CLI), plus a few assistant messages with canvas "
        "documents. A fresh install keeps the demo config; a customised one is put back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when the log has any run."
        )
        parser.add_argument("--runs", type=_positive_int, default=DEFAULT_RUNS)
        parser.add_argument(
            "--days", type=_positive_int, default=DEFAULT_DAYS, help="Spread runs over D days."
        )

    def handle(self, *args: Any, if_empty: bool, runs: int, days: int, **options: Any) -> None:
        if if_empty and Run.objects.exists():
            self.stdout.write("Demo data: skipped, the decision log already has runs.")
            return
        if not PAGES_DIR.is_dir():
            raise CommandError(f"the demo pages are missing: {PAGES_DIR}")
        started = time.monotonic()
        last_pk = Run.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        previous = config_document()
        # A fresh install keeps the demo config, so the admin, /tools/ and the run pages tell
        # one story (the rules, agents and models the runs name exist). A config someone
        # already made their own is put back; the run pages still show the demo's snapshot.
        keep_demo = previous == default_document()
        seeded_ok = False
        try:
            with DemoPageServer(PAGES_DIR) as server, demo_dns():
                config_replace(document=demo_document(PAGES_DIR))
                messages = sample_messages(runs, base_url=server.base_url)
                outcomes = async_to_sync(self.enrich_all)(messages)
            seeded_ok = True
        finally:
            if not (seeded_ok and keep_demo):
                config_replace(document=previous)
        seeded = Run.objects.filter(pk__gt=last_pk)
        self.redate(seeded, days=days)
        # Problems were counted as the runs were stored, at "now": recount them at the
        # runs' spread-out times (first/last seen, trends).
        problems_rebuild()
        stored = self.store_assistant_messages(seeded, days=days)
        self.write_summary(outcomes, seeded, stored, days, time.monotonic() - started)
        self.stdout.write(
            "config: the demo config the runs used stays stored (edit it in the admin)"
            if keep_demo
            else "config: your own config was put back (each run page shows the one it used)"
        )

    async def enrich_all(self, messages: Sequence[SampleMessage]) -> Counter[str]:
        outcomes: Counter[str] = Counter()
        limit = asyncio.Semaphore(CONCURRENCY)
        started = time.monotonic()

        async def enrich(request: EnrichRequest) -> None:
            async with limit:
                try:
                    result = await enrichment_run(request=request)
                    outcomes[result["links"]["outcome"]] += 1
                except DomainError:  # recorded as an ``error`` run by the service
                    outcomes["error"] += 1
            self.progress(outcomes.total(), len(messages), started)

        await asyncio.gather(*(enrich(message.request) for message in messages))
        return outcomes

    def progress(self, done: int, total: int, started: float) -> None:
        status = progress_bar(done, total, started)
        if self.stderr.isatty():
            width = shutil.get_terminal_size().columns - 1
            self.stderr.write("\r" + status[:width], style_func=str, ending="")
            if done == total:
                self.stderr.write("", style_func=str)
        elif done == total or done % max(1, total // 10) == 0:
            self.stderr.write(status, style_func=str)

    def redate(self, seeded: Any, *, days: int) -> None:
        """Spread the new runs over the window, in run order, with one bulk update."""
        runs = list(seeded.order_by("pk").only("pk", "duration_ms"))
        stamps = spread_timestamps(len(runs), days=days, now=timezone.now(), rng=Random(7))
        for run, stamp in zip(runs, stamps, strict=True):
            run.created_at = stamp
            run.finished_at = stamp + timedelta(milliseconds=run.duration_ms or 0)
        Run.objects.bulk_update(runs, ["created_at", "finished_at"], batch_size=500)

    def store_assistant_messages(self, seeded: Any, *, days: int) -> list[AssistantMessage]:
        stats = demo_stats(seeded, days=days)
        canvas_document_store(
            html=status_board_html(stats), view_id=STATUS_BOARD_ID, title="Link enrichment status"
        )
        canvas_document_store(
            html=reading_list_html(stats), view_id=READING_LIST_ID, title="Reading list"
        )
        by_session = {c.session_key: name for name, c in CONVERSATIONS.items()}
        latest_ids = {
            by_session[key]: message_id
            for key, message_id in seeded.order_by("pk").values_list("session_key", "message_id")
            if key in by_session
        }
        now = timezone.now()
        stored = []
        for sample in assistant_samples(stats, latest_ids):
            message = message_store(
                text=sample.text,
                session_key=sample.session_key,
                current_message_id=sample.current_message_id,
            )
            message.created_at = now - timedelta(hours=min(sample.hours_ago, days * 24 * 0.9))
            stored.append(message)
        AssistantMessage.objects.bulk_update(stored, ["created_at"])
        return stored

    def write_summary(
        self,
        outcomes: Counter[str],
        seeded: Any,
        stored: list[AssistantMessage],
        days: int,
        seconds: float,
    ) -> None:
        attempts = Counter(
            dict(
                Attempt.objects.filter(url_decision__run__in=seeded)
                .values_list("outcome")
                .annotate(n=Count("id"))
                .values_list("outcome", "n")
            )
        )
        self.stdout.write(
            f"\nDemo data: {outcomes.total()} runs over the last {days} days ({seconds:.1f} s)"
        )
        self.stdout.write(f"{'outcome':<12} {'runs':>6}")
        for outcome, count in outcomes.most_common():
            self.stdout.write(f"{outcome:<12} {count:>6}")
        self.stdout.write(
            "attempts: " + ", ".join(f"{count} {name}" for name, count in attempts.most_common())
        )
        canvases = sum(1 for message in stored if message.blocks.exists())
        self.stdout.write(f"assistant messages: {len(stored)} ({canvases} with canvas documents)\n")


def demo_stats(seeded: Any, *, days: int) -> DemoStats:
    def counts(queryset: Any, field: str) -> tuple[tuple[str, int], ...]:
        rows = queryset.values(field).annotate(n=Count("id")).order_by("-n", field)
        return tuple((row[field] or "(none)", row["n"]) for row in rows)

    decisions = UrlDecision.objects.filter(run__in=seeded)
    reading: dict[str, str] = {}  # title -> url: a page shared twice is listed once
    for summary, url in decisions.exclude(summary="").values_list("summary", "url"):
        first_line = summary.splitlines()[0]
        if first_line.endswith(")"):  # the demo CLI's "Title (Site)" heading
            reading.setdefault(first_line, url)
    return DemoStats(
        days=days,
        runs=seeded.count(),
        outcomes=counts(seeded, "outcome"),
        channels=counts(seeded, "channel"),
        blocked_reasons=counts(decisions.filter(blocked=True), "reason"),
        reading=tuple(reading.items()),
    )


def _positive_int(value: str) -> int:
    if not value.strip().isdigit() or int(value) < 1:
        raise ArgumentTypeError(f"must be a whole number of at least 1: {value!r}")
    return int(value)
