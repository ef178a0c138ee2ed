"""``manage.py seed_demo`` and its demo kit (page server, demo CLI, samples), and
``manage.py bootstrap_demo`` seeding a fresh install once."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from io import StringIO
from random import Random

import httpx
import pytest
from django.core.management import call_command
from django.utils import timezone

from enrichment.demo import DemoPageServer
from enrichment.demo.samples import (
    ARTICLES,
    DEMO_HOSTS,
    PRIVATE_LINKS,
    READING_LIST_ID,
    STATUS_BOARD_ID,
    TOUR,
    demo_resolve,
    sample_messages,
)
from enrichment.management.commands import seed_demo
from enrichment.management.commands.seed_demo import (
    DEMO_CLI,
    HOURLY_ACTIVITY,
    PAGES_DIR,
    spread_timestamps,
)
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.links.detection import extract_links
from tests.enrichment.conftest import summarizer_config


@pytest.fixture(scope="module")
def pages():
    with DemoPageServer(PAGES_DIR) as server:
        yield server


def page_server_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("demo-page-server")}


def demo_cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DEMO_CLI), *args], capture_output=True, text=True, timeout=timeout
    )


# --- demo page server and demo CLI ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "code", "stdout_start", "stderr"),
    [
        (
            "/news/harbour-bridge.html",
            0,
            "Harbour bridge reopens after eighteen months of repairs (The Daily Courier)\n"
            "The harbour bridge reopened to traffic on Monday morning",
            "",
        ),
        ("/blog/keyboard-build.html", 0, "Building my first mechanical keyboard (Notes", ""),
        (
            "/forum/bike-chain.html",
            0,
            "Chain keeps slipping on the smallest cog (Fixit Forum)\nMy bike chain slips",
            "",
        ),
        ("/drafts/untitled-3.html", 0, "", ""),
        ("/busy/news/harbour-bridge.html", 1, "", "demo-cli: HTTP 503 Service Unavailable"),
        ("/news/retired-4.html", 1, "", "demo-cli: HTTP 404 Not Found for /news/retired-4.html"),
        ("/../pyproject.toml", 1, "", "HTTP 404"),
        ("/news/../../pyproject.toml", 1, "", "HTTP 404"),
    ],
    ids=[
        "page",
        "gzipped-page",
        "skips-cookie-banner",
        "empty-draft",
        "busy-503",
        "missing-404",
        "traversal",
        "nested-traversal",
    ],
)
def test_demo_cli_live_mode_reports_what_the_page_server_does(
    pages, path, code, stdout_start, stderr
):
    result = demo_cli(pages.base_url + path)

    assert result.returncode == code
    assert result.stdout.startswith(stdout_start)
    assert (result.stdout == "") == (stdout_start == "")
    assert stderr in result.stderr


@pytest.mark.parametrize(
    ("path", "code", "expected"),
    [
        ("/slow/recipe/lentil-soup.html", 0, "Red lentil soup with lemon (Kitchen Table)"),
        ("/busy/docs/cli-install.html", 0, "Installing the command line tool (Example Docs)"),
        ("/drafts/untitled-9.html", 4, "demo-cli: no archived copy of drafts/untitled-9.html"),
        ("/news/retired-1.html", 4, "no archived copy of news/retired-1.html"),
        ("/", 4, "no archived copy"),
    ],
    ids=["slow-page", "busy-gzipped-page", "draft", "missing", "root"],
)
def test_demo_cli_archive_mode_reads_the_embedded_pages(path, code, expected):
    result = demo_cli("--archive", str(PAGES_DIR), "http://127.0.0.1:9" + path)

    assert result.returncode == code
    assert expected in (result.stdout if code == 0 else result.stderr)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--archive"],
        ["--verbose", "http://127.0.0.1/x"],
        ["ftp://127.0.0.1/x.html"],
        ["--describe", "x.png"],
    ],
    ids=["nothing", "archive-without-url", "unknown-flag", "not-http", "describe-without-mime"],
)
def test_demo_cli_refuses_bad_arguments(args):
    assert demo_cli(*args).returncode == 2


def test_demo_media_are_served_and_the_png_is_described_from_its_header(pages, tmp_path):
    png = httpx.get(pages.base_url + "/media/whiteboard.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG\r\n\x1a\n")
    csv = httpx.get(pages.base_url + "/media/budget.csv")
    assert csv.headers["content-type"].startswith("text/csv") and b"month,planned" in csv.content
    assert httpx.get(pages.base_url + "/media/../secret").status_code == 404
    assert httpx.get(pages.base_url + "/media/other.png").status_code == 404

    (tmp_path / "w.png").write_bytes(png.content)
    described = demo_cli("--describe", str(tmp_path / "w.png"), "image/png")
    assert described.returncode == 0
    assert described.stdout.startswith("A 320×180 PNG image (")
    (tmp_path / "blob").write_bytes(b"\x00" * 2048)
    assert (
        "image/jpeg file of 2.0 KB"
        in demo_cli("--describe", str(tmp_path / "blob"), "image/jpeg").stdout
    )
    missing = demo_cli("--describe", str(tmp_path / "gone.png"), "image/png")
    assert missing.returncode == 1 and "cannot read" in missing.stderr


def test_slow_pages_are_held_back_until_the_server_stops():
    with DemoPageServer(PAGES_DIR) as server:
        base_url = server.base_url
        with pytest.raises(subprocess.TimeoutExpired):
            demo_cli(base_url + "/slow/news/harbour-bridge.html", timeout=1)
        # A held-back request does not block the others.
        assert httpx.get(base_url + "/news/harbour-bridge.html").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(base_url + "/news/harbour-bridge.html")
    assert f"demo-page-server {base_url}" not in page_server_threads()


# --- samples ----------------------------------------------------------------------------------


def test_sample_messages_are_deterministic_and_start_with_the_tour():
    first = sample_messages(60, base_url="http://127.0.0.1:8123")
    again = sample_messages(60, base_url="http://127.0.0.1:8123")

    assert first == again
    assert len(first) == 60
    assert [(m.conversation, m.scenario) for m in first[: len(TOUR)]] == list(TOUR)
    assert len({m.request.message_id for m in first}) == 60
    assert {m.request.channel for m in first} == {"slack", "discord", "telegram", "webchat"}


def test_every_sample_link_is_a_demo_page_or_a_demo_host():
    base = "http://127.0.0.1:8123"
    policy = parse_config(seed_demo.demo_document(PAGES_DIR)).web_fetch.ssrf_policy
    links = [
        url
        for message in sample_messages(300, base_url=base)
        for url in extract_links(message.request.body, max_links=5, policy=policy)
    ]
    hosts = {url.split("/")[2] for url in links}

    assert hosts <= {"127.0.0.1:8123", *DEMO_HOSTS}
    assert {url.removeprefix(base + "/").removesuffix(".html") for url in links} & set(ARTICLES)
    assert set(PRIVATE_LINKS) & set(links)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("wiki.corp.example", ["10.20.0.7"]),
        ("WIKI.CORP.EXAMPLE", ["10.20.0.7"]),
        ("intranet.retired.example", []),
        ("example.com", []),
    ],
    ids=["known", "case-insensitive", "no-answer", "never-real-dns"],
)
def test_demo_resolver_answers_from_the_demo_world_only(host, expected):
    assert demo_resolve(host) == expected


# --- timestamps -------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "days"), [(1, 1), (20, 2), (300, 7), (1000, 30)])
def test_spread_timestamps_cover_the_window_in_order(count, days):
    now = datetime(2026, 11, 22, 21, 30, tzinfo=UTC)

    stamps = spread_timestamps(count, days=days, now=now, rng=Random(1))

    assert len(stamps) == count
    assert stamps == sorted(stamps)
    assert all(
        now - timedelta(days=days, minutes=5) <= s <= now - timedelta(minutes=5) for s in stamps
    )
    if count >= 20 * days:
        assert {s.date() for s in stamps} >= {
            (now - timedelta(days=d)).date() for d in range(1, days)
        }


def test_spread_timestamps_follow_the_working_day():
    now = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    hours = Counter(s.hour for s in spread_timestamps(2800, days=14, now=now, rng=Random(3)))

    night = sum(hours[h] for h in range(6))
    office = sum(hours[h] for h in range(9, 15))
    assert HOURLY_ACTIVITY[3] < HOURLY_ACTIVITY[10]
    assert office > 5 * night


# --- the command ------------------------------------------------------------------------------


def seed(**options):
    out, err = StringIO(), StringIO()
    call_command("seed_demo", stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_seed_demo_records_a_varied_history_and_restores_the_config():
    from enrichment.config.changes import config_replace
    from enrichment.config.store import config_document
    from enrichment.models import Attempt, Run, UrlDecision
    from richoutput.models import AssistantMessage, CanvasDocument

    original_resolver = seed_demo.resolver.resolve_host
    config_replace(document=summarizer_config(maxLinks=2))
    before = config_document()
    started = timezone.now()

    out, err = seed(runs=20, days=2)

    runs = list(Run.objects.order_by("pk"))
    assert len(runs) == 20
    outcomes = Counter(run.outcome for run in runs)
    assert set(outcomes) >= {"success", "skipped", "no-links", "scope-deny", "disabled"}
    assert {run.channel for run in runs} == {"slack", "discord", "telegram", "webchat"}
    assert {"main", "research", "support", "archive-bot"} <= {run.agent_id for run in runs}

    reasons = set(Attempt.objects.values_list("reason", flat=True))
    assert {"timed out after 2s", "empty output", "exited with code 1"} <= reasons
    assert Attempt.objects.filter(command="link-understand", outcome="success").exists()
    blocked = UrlDecision.objects.filter(blocked=True).values_list("reason", flat=True)
    assert blocked and all(reason.startswith("resolves to") for reason in blocked)
    fallback = UrlDecision.objects.filter(url__contains="/slow/").first()
    assert [a.outcome for a in fallback.attempts.all()] == ["failed", "success"]

    # The tour's attachments: an image described by the demo's image model, a CSV appended.
    records = [(run, record) for run in runs for record in run.media]
    described = [
        run for run, r in records if r["capability"] == "image" and r["outcome"] == "success"
    ]
    assert described and "PNG image" in described[0].enriched_body
    files = [f for _run, r in records if r["capability"] == "file" for f in r["files"]]
    assert {"name": "budget.csv", "skipped": None}.items() <= next(
        f for f in files if f["name"] == "budget.csv"
    ).items()
    assert any('<file name="budget.csv" mime="text/csv">' in run.enriched_body for run in runs)

    # Spread over two days in run order, finished_at = created_at + duration.
    assert [r.created_at for r in runs] == sorted(r.created_at for r in runs)
    assert runs[-1].created_at - runs[0].created_at > timedelta(days=1)
    assert all(started - timedelta(days=2, minutes=6) <= r.created_at < started for r in runs)
    assert all(r.finished_at - r.created_at == timedelta(milliseconds=r.duration_ms) for r in runs)

    # The failures group into problems, seen when their runs were (after the spread).
    from enrichment.models import Problem

    kinds = set(Problem.objects.values_list("kind", flat=True))
    assert {"blocked-host", "command-failed"} <= kinds
    for problem in Problem.objects.all():
        seen = [r.created_at for r in runs if problem.runs.filter(run_id=r.pk).exists()]
        assert (problem.first_seen, problem.last_seen) == (min(seen), max(seen))

    assert config_document() == before
    assert seed_demo.resolver.resolve_host is original_resolver

    messages = list(AssistantMessage.objects.prefetch_related("blocks"))
    assert len(messages) == 4
    views = [row.block["preview"]["viewId"] for m in messages for row in m.blocks.all()]
    assert sorted(views) == sorted([STATUS_BOARD_ID, READING_LIST_ID])
    assert any(m.audio_as_voice and m.media_urls for m in messages)
    replied = {m.reply_to_id for m in messages if m.reply_to_id}
    assert replied and replied <= {r.message_id for r in runs}
    board = CanvasDocument.objects.get(view_id=STATUS_BOARD_ID).html
    assert "20 messages in the last 2 days" in board
    assert f"<td>success</td><td class='n'>{outcomes['success']}</td>" in board

    assert "Demo data: 20 runs over the last 2 days" in out
    assert f"{'success':<12} {outcomes['success']:>6}" in out
    assert "assistant messages: 4 (2 with canvas documents)" in out
    assert "20/20" in err


@pytest.mark.django_db
def test_if_empty_seeds_a_fresh_install_once():
    from enrichment.config.store import config_document
    from enrichment.models import Run

    first, _err = seed(runs=3, days=1, if_empty=True)
    out, _err = seed(runs=3, days=1, if_empty=True)

    assert Run.objects.count() == 3
    assert "skipped, the decision log already has runs" in out
    # A fresh install keeps the config its demo runs were recorded under.
    assert config_document() == Run.objects.first().config_snapshot
    assert "the demo config the runs used stays stored" in first


@pytest.mark.django_db
def test_a_fresh_install_tells_one_story_after_seeding(user_client, staff_client):
    """The rules, agents and models named on the run pages exist in the admin and /tools/."""
    from enrichment.config.store import active_config
    from enrichment.models import Run

    seed(runs=12, days=1)

    config = active_config()
    assert config.scope_rules.filter(agent__isnull=True).count() == 3
    assert {agent.agent_id for agent in config.agents.all()} >= {"main", "research", "support"}
    snapshots = {str(run.config_snapshot) for run in Run.objects.all()}
    assert len(snapshots) == 1
    run = Run.objects.filter(matched_rule__isnull=False).first()
    page = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert f"rule {run.matched_rule + 1}" in page
    assert "same as today" in page
    tools = user_client.get("/tools/?agent=research")
    assert tools.status_code == 200
    assert "Select a valid choice" not in tools.content.decode()
    admin = staff_client.get("/admin/enrichment/enrichmentconfig/")
    assert admin.status_code == 200


@pytest.mark.django_db
def test_a_failing_seed_still_restores_config_resolver_and_server(monkeypatch):
    from enrichment.config.store import config_document

    async def broken(**kwargs):
        raise RuntimeError("pipeline exploded")

    monkeypatch.setattr(seed_demo, "enrichment_run", broken)
    original_resolver = seed_demo.resolver.resolve_host
    before = config_document()
    threads_before = page_server_threads()

    with pytest.raises(RuntimeError, match="pipeline exploded"):
        seed(runs=4, days=1)

    assert config_document() == before
    assert seed_demo.resolver.resolve_host is original_resolver
    assert page_server_threads() == threads_before


@pytest.mark.parametrize("value", ["0", "-3", "many", "2.5"])
def test_runs_and_days_must_be_positive_whole_numbers(value):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="at least 1"):
        call_command("seed_demo", f"--runs={value}", stdout=StringIO())


@pytest.mark.django_db
def test_bootstrap_demo_prints_the_login_and_seeds_once(settings, tmp_path, monkeypatch):
    from enrichment.models import Run

    settings.VAR_DIR = tmp_path
    monkeypatch.setattr(seed_demo, "DEFAULT_RUNS", 5)

    first, second = StringIO(), StringIO()
    call_command("bootstrap_demo", stdout=first, stderr=StringIO())
    call_command("bootstrap_demo", "--port", "8123", stdout=second, stderr=StringIO())

    password = (tmp_path / "demo-password").read_text().strip()
    for output in (first.getvalue(), second.getvalue()):
        assert "Username: admin" in output
        assert f"Password: {password}" in output
    assert "URL:      http://127.0.0.1:8000/" in first.getvalue()
    assert "URL:      http://127.0.0.1:8123/" in second.getvalue()  # make run PORT=8123
    assert "Demo data: 5 runs" in first.getvalue()
    assert "skipped, the decision log already has runs" in second.getvalue()
    assert Run.objects.count() == 5
