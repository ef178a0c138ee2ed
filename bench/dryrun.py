"""Config dry-run benchmark. Run: .venv/bin/python bench/dryrun.py [--runs 10000] [--repeat 5]

Seeds ``--runs`` recorded runs (1-3 URLs each over 300 hosts, recorded DNS answers, 1-2
attempts, channels/chat types/agents/session keys mixed, every decided outcome) into the
PostgreSQL database of ``DATABASE_URL`` (default ``postgres://postgres@127.0.0.1:5432/h14``;
migrated first; the seeded rows are marked and replaced on ``--reseed``), then times a dry
run of a proposed config (new deny rules, an agent override, an SSRF opt-in, changed args)
over the newest ``--runs`` runs: the whole ``POST /api/config/dry-run`` service call, and
its two parts (loading the window, pure evaluation).

It also drives the streamed admin preview (``config_views._stream``) on an event loop while
a ticker measures how late the loop wakes up every 10 ms: the evaluation runs in worker
threads, so the loop (the rest of the page and every other request) keeps serving.

Target: ≤ 2 s for 10,000 runs on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import ensure_postgres_database  # noqa: E402

SMOKE = "--smoke" in sys.argv[1:]
if SMOKE:
    # A throwaway SQLite file: the smoke run checks the script, not PostgreSQL's speed.
    import tempfile

    os.environ["DATABASE_URL"] = "sqlite:///" + str(Path(tempfile.mkdtemp()) / "dryrun.sqlite3")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h14")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")


if not SMOKE:
    ensure_postgres_database(os.environ["DATABASE_URL"])

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from enrichment.config import dryrun as config_dryrun  # noqa: E402
from enrichment.config import views as config_views  # noqa: E402
from enrichment.models import Attempt, Run, UrlDecision  # noqa: E402
from enrichment.pipeline.dryrun.evaluate import dry_run  # noqa: E402

TARGET_S = 2.0
MARK = "bench-dryrun"
CHANNELS = ("slack", "discord", "telegram", "webchat")
CHAT_TYPES = ("direct", "group", "channel", "")
AGENTS = ("main", "support", "ops", "research", "")
OUTCOMES = ("success", "success", "skipped", "no-links", "scope-deny", "disabled")
MODEL = {"type": "cli", "command": "link-understand", "args": ["--url", "{{LinkUrl}}"]}

PROPOSED = {
    "tools": {
        "links": {
            "maxLinks": 2,
            "scope": {
                "default": "allow",
                "rules": [
                    {"action": "deny", "match": {"channel": "discord", "chatType": "group"}},
                    {"action": "deny", "match": {"keyPrefix": "agent:ops:"}},
                ],
            },
            "models": [{**MODEL, "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}],
        },
        "web": {"fetch": {"ssrfPolicy": {"allowPrivateNetwork": True}}},
    },
    "agents": {"list": [{"id": "research", "tools": {"links": {"enabled": False}}}]},
}


def address(rng: random.Random, host: int) -> str:
    return (
        f"10.0.{host % 250}.{host % 200 + 1}"
        if host % 10 == 0
        else f"93.184.{host % 250}.{host % 200 + 1}"
    )


def seed(runs: int, rng: random.Random) -> None:
    with transaction.atomic():
        Run.objects.filter(message_id=MARK).delete()
        run_rows = []
        plans = []
        for index in range(runs):
            outcome = rng.choice(OUTCOMES)
            hosts = [rng.randrange(300) for _ in range(rng.randint(1, 3))]
            urls = [f"https://h{host}.example/page/{index}" for host in hosts]
            agent = rng.choice(AGENTS)
            run_rows.append(
                Run(
                    message_id=MARK,
                    channel=rng.choice(CHANNELS),
                    chat_type=rng.choice(CHAT_TYPES),
                    session_key=f"agent:{agent or 'main'}:chat:{index % 97}",
                    agent_id=agent,
                    original_body="look at " + " and ".join(urls) + " please",
                    enriched_body="",
                    outcome=outcome,
                    url_count=len(urls) if outcome in ("success", "skipped") else 0,
                    duration_ms=rng.randint(5, 900),
                )
            )
            plans.append((outcome, hosts, urls))
        Run.objects.bulk_create(run_rows, batch_size=2000)
        url_rows, attempt_plans = [], []
        for run, (outcome, hosts, urls) in zip(run_rows, plans, strict=True):
            if outcome not in ("success", "skipped"):
                continue
            for position, (host, url) in enumerate(zip(hosts, urls, strict=True)):
                blocked = host % 10 == 0
                row = UrlDecision(
                    run=run,
                    position=position,
                    url=url,
                    blocked=blocked,
                    reason=f"resolves to private address {address(rng, host)}" if blocked else "",
                    addresses=[address(rng, host)],
                    chosen_position=0 if outcome == "success" and not blocked else None,
                    summary="a summary" if outcome == "success" and not blocked else "",
                )
                url_rows.append(row)
                attempt_plans.append((row, blocked, outcome, url))
        UrlDecision.objects.bulk_create(url_rows, batch_size=2000)
        attempts = []
        for row, blocked, outcome, url in attempt_plans:
            if blocked:
                attempts.append(
                    Attempt(url_decision=row, position=0, command="ssrf", outcome="skipped")
                )
                continue
            argv = ["link-understand", "--url", url]
            attempts.append(
                Attempt(
                    url_decision=row,
                    position=0,
                    command="link-understand",
                    argv=argv,
                    outcome="success" if outcome == "success" else "failed",
                )
            )
        Attempt.objects.bulk_create(attempts, batch_size=2000)


async def loop_lag_idle(seconds: float) -> float:
    """Worst loop lateness in ms with nothing else running (the machine's own noise)."""
    worst = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        await asyncio.sleep(0.01)
        worst = max(worst, (time.perf_counter() - started - 0.01) * 1000)
    return worst


async def loop_lag_during_stream(runs: int) -> tuple[float, float, int]:
    """(stream seconds, worst loop lateness in ms, progress frames) for the streamed preview."""
    config = config_dryrun.proposed_config(PROPOSED)
    window = config_dryrun.parse_window({"lastRuns": runs})
    worst = 0.0
    done = False

    async def ticker() -> None:
        nonlocal worst
        while not done:
            started = time.perf_counter()
            await asyncio.sleep(0.01)
            worst = max(worst, (time.perf_counter() - started - 0.01) * 1000)

    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    frames = 0
    async for _line in config_views._stream(config, window):
        frames += 1
    elapsed = time.perf_counter() - started
    done = True
    await tick
    return elapsed, worst, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reseed", action="store_true")
    parser.add_argument(
        "--smoke", action="store_true", help="40 runs on a throwaway SQLite file, one round"
    )
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.repeat = 40, 1
        print("smoke run (tiny sizes, SQLite): the figures below are not measurements")
    call_command("migrate", verbosity=0)
    if args.reseed or Run.objects.filter(message_id=MARK).count() != args.runs:
        started = time.perf_counter()
        seed(args.runs, random.Random(20261124))
        print(f"seeded {args.runs} runs in {time.perf_counter() - started:.1f} s")
    window = {"lastRuns": args.runs}
    config = config_dryrun.proposed_config(PROPOSED)
    totals, loads, evaluations, cpu = [], [], [], []
    result = {}
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = config_dryrun.config_dry_run(document=PROPOSED, window=window)
        totals.append(time.perf_counter() - started)
        started = time.perf_counter()
        runs = config_dryrun.window_runs(config_dryrun.parse_window(window))
        loads.append(time.perf_counter() - started)
        started, cpu_started = time.perf_counter(), time.thread_time()
        dry_run(config, runs)
        evaluations.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - cpu_started)
    print(
        f"database: {django.db.connection.vendor}; runs evaluated: {result['evaluated']}; "
        f"affected: {result['affectedRuns']}"
    )
    for item in result["counts"]:
        print(f"  {item['text']}")
    total, load = statistics.median(totals), statistics.median(loads)
    print(f"dry run (service call) p50 {total:.2f} s, max {max(totals):.2f} s (target <= 2.0 s)")
    print(
        f"  load window p50 {load:.2f} s; pure evaluation p50 "
        f"{statistics.median(evaluations):.2f} s wall, {statistics.median(cpu):.2f} s CPU"
    )
    print(f"  machine load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    elapsed, worst, frames = asyncio.run(loop_lag_during_stream(args.runs))
    idle = asyncio.run(loop_lag_idle(elapsed))
    print(
        f"streamed preview: {elapsed:.2f} s, {frames} frames; worst event-loop lateness "
        f"{worst:.1f} ms while it ran, {idle:.1f} ms with nothing running (machine noise)"
    )


if __name__ == "__main__":
    main()
