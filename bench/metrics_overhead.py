"""What ``/metrics`` costs an enrich request. Run: .venv/bin/python bench/metrics_overhead.py

Starts three daphnes (``tests/live.py``), the same but for metrics: ``off``
(``METRICS_ENABLED=0``: nothing recorded, no ASGI wrapper), ``on`` (the per-process registry)
and ``multiproc`` (``PROMETHEUS_MULTIPROC_DIR``: every value written to a shared mmap file).
Each stores the shipped link model (the built-in ``link-understand``) with the local page
server allowed. The rounds go round-robin over the three servers, so the noise of a shared
machine falls on all three alike; each round sends ``--requests`` ``POST /api/enrich``
(bearer token), one at a time unless ``--concurrency`` says more. ``--kind page`` (default)
links a distinct local page per message (fetch + extraction, the usual run); ``--kind
nolink`` sends a message without a link, the shortest run, where a fixed per-request cost
shows most.

Prints, per mode, requests/s and p50/p99 latency over all rounds, the difference to ``off``,
and the time of one scrape of ``/metrics``. ``--smoke`` runs one short round (seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.local_pages import builtin_config, page_server  # noqa: E402
from tests.live import LiveServer, live_server  # noqa: E402

TOKEN = "cui_bench-metrics-token"
SETUP = f"""
import json
from django.contrib.auth import get_user_model
from accounts.models import ApiToken
from accounts.tokens import token_digest
from enrichment.config.changes import config_replace
ApiToken.objects.create(user=get_user_model().objects.get(username="live-user"), name="bench",
                        digest=token_digest({TOKEN!r}), hint="cui_benc")
config_replace(document=json.loads(%r))
"""
MODES = ("off", "on", "multiproc")


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    failures: int = 0
    failure_texts: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.latencies += other.latencies
        self.seconds += other.seconds
        self.failures += other.failures
        self.failure_texts += other.failure_texts[:3]


def mode_env(mode: str, workdir: Path) -> dict[str, str]:
    env = {"EXTRACTION_WORKERS": "1", "LOG_LEVEL": "WARNING"}
    if mode == "off":
        env["METRICS_ENABLED"] = "0"
    if mode == "multiproc":
        shared = workdir / "prometheus"
        shared.mkdir()
        env["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    return env


async def one_round(
    server: LiveServer, pages: str, *, kind: str, requests: int, concurrency: int, offset: int
) -> Tally:
    tally = Tally()
    limit = asyncio.Semaphore(concurrency)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=60) as client:

        async def send(number: int) -> None:
            body = "no link here" if kind == "nolink" else f"see {pages}/page/{offset + number}"
            async with limit:
                started = time.perf_counter()
                response = await client.post("/api/enrich", json={"body": body, "channel": "bench"})
                tally.latencies.append(time.perf_counter() - started)
                if response.status_code != 200:
                    tally.failures += 1
                    tally.failure_texts.append(f"{response.status_code} {response.text[:200]}")

        started = time.perf_counter()
        await asyncio.gather(*(send(number) for number in range(requests)))
        tally.seconds = time.perf_counter() - started
    return tally


def scrape_ms(server: LiveServer, times: int = 5) -> float:
    durations = []
    for _ in range(times):
        started = time.perf_counter()
        response = httpx.get(
            server.base_url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        durations.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return statistics.median(durations)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=200, help="per round and server")
    # One at a time by default: the per-request cost is what is measured, and main's in-process
    # POST /api/enrich fails some requests when several overlap ("CurrentThreadExecutor
    # already quit": the batched run writes run in the executor of the request that started
    # the batch), a bug of its own.
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--kind", choices=("page", "nolink"), default="page")
    parser.add_argument("--smoke", action="store_true", help="one short round")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.requests = 1, 10

    with ExitStack() as stack, tempfile.TemporaryDirectory() as workdir:
        pages = stack.enter_context(page_server())
        servers: dict[str, LiveServer] = {}
        for mode in MODES:
            directory = Path(workdir) / mode
            directory.mkdir()
            server = stack.enter_context(live_server(directory, mode_env(mode, directory)))
            server.manage("shell", "-c", SETUP % json.dumps(builtin_config()))
            servers[mode] = server
        # Warm each server up (first imports, the extraction worker, the config cache).
        for server in servers.values():
            asyncio.run(
                one_round(server, pages, kind=args.kind, requests=5, concurrency=1, offset=0)
            )
        tallies = {mode: Tally() for mode in MODES}
        for number in range(args.rounds):
            order = MODES[number % 3 :] + MODES[: number % 3]  # who goes first rotates
            for mode in order:
                tallies[mode].add(
                    asyncio.run(
                        one_round(
                            servers[mode],
                            pages,
                            kind=args.kind,
                            requests=args.requests,
                            concurrency=args.concurrency,
                            offset=number * args.requests,
                        )
                    )
                )
        scrapes = {mode: scrape_ms(servers[mode]) for mode in ("on", "multiproc")}

    print(
        f"POST /api/enrich, kind={args.kind}, {args.rounds} rounds x {args.requests} requests, "
        f"concurrency {args.concurrency}"
    )
    base = None
    for mode in MODES:
        tally = tallies[mode]
        rate = len(tally.latencies) / tally.seconds
        p50 = statistics.median(tally.latencies) * 1000
        p99 = percentile(tally.latencies, 0.99) * 1000
        base = base or (rate, p50)
        versus = (
            ""
            if mode == "off"
            else (
                f"  ({(rate / base[0] - 1) * 100:+.1f}% req/s, {p50 - base[1]:+.2f} ms p50 vs off)"
            )
        )
        scrape = f"  scrape {scrapes[mode]:.1f} ms" if mode in scrapes else ""
        print(
            f"{mode:>9}: {rate:7.1f} req/s  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms"
            f"  failures {tally.failures}{versus}{scrape}"
        )
    if any(tally.failures for tally in tallies.values()):
        for mode in MODES:
            for text in tallies[mode].failure_texts[:3]:
                print(f"{mode} failed: {text}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
