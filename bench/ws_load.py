"""``/ws/enrich/`` load through a real daphne. Run: .venv/bin/python bench/ws_load.py

Starts daphne on 127.0.0.1 (``tests/live.py``) with its own SQLite file and the test
summarizer CLI as the stored link model, opens ``--clients`` authenticated WebSockets at once
and has each send ``--messages`` messages one after another (the next goes when the previous
result frame arrives), every message with one ``http://127.0.0.1/<n>`` URL. Prints throughput,
p50/p99 latency from send to the result frame, and the runs stored in the live database, which
must equal the messages sent: lost runs (a message with no run) and duplicate runs (one message
stored twice) are both reported and make the script exit non-zero.

Every message spawns one CLI subprocess (a Python start-up), so on a small machine that is the
bottleneck, not the socket path. ``--redis`` runs the same through the Redis channel layer and
``--workers`` ``manage.py runworker enrichment`` processes instead of inside daphne.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from tests.enrichment.conftest import summarizer_config  # noqa: E402
from tests.live import LiveServer, live_server  # noqa: E402

STORE_CONFIG = """
import json
from enrichment.services import config_replace
config_replace(document=json.loads({document!r}))
"""
RESULT_TIMEOUT = 300.0


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    results: int = 0
    errors: list[str] = field(default_factory=list)
    wrong_body: int = 0


async def client(index: int, live: LiveServer, cookie: str, messages: int, tally: Tally) -> None:
    async with websockets.connect(
        live.ws_url + "/ws/enrich/",
        origin=live.base_url,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        max_queue=None,
    ) as socket:
        for number in range(messages):
            request_id = f"c{index}-m{number}"
            url = f"http://127.0.0.1/{index * messages + number}"
            frame = {
                "type": "enrich",
                "id": request_id,
                "message": {
                    "body": f"bench message {number} from client {index}: see {url}",
                    "channel": "webchat",
                    "sessionKey": f"agent:main:webchat:bench{index}",
                },
            }
            started = time.perf_counter()
            await socket.send(json.dumps(frame))
            answer = await result_frame(socket, request_id)
            tally.latencies.append(time.perf_counter() - started)
            if answer["type"] == "result":
                tally.results += 1
                if f"Summary of {url}" not in answer.get("body", ""):
                    tally.wrong_body += 1
            else:
                tally.errors.append(str(answer.get("error")))


async def result_frame(socket: Any, request_id: str) -> dict[str, Any]:
    """Skip progress frames; return the result or error frame for ``request_id``."""
    while True:
        frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=RESULT_TIMEOUT))
        if frame.get("id") == request_id and frame.get("type") in ("result", "error"):
            return dict(frame)
        if frame.get("type") == "error" and frame.get("id") is None:
            return dict(frame)


async def drive(live: LiveServer, clients: int, messages: int) -> tuple[Tally, float]:
    cookie = live.cookie_header()
    tally = Tally()
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(client(i, live, cookie, messages, tally) for i in range(clients)),
        return_exceptions=True,
    )
    elapsed = time.perf_counter() - started
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            tally.errors.append(f"client failed: {type(outcome).__name__}: {outcome}")
    return tally, elapsed


def stored_runs(live: LiveServer) -> dict[str, int]:
    database = live.workdir / "live.sqlite3"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT outcome, count(*) FROM enrichment_run GROUP BY outcome")
        return dict(rows.fetchall())


def distinct_messages(live: LiveServer) -> int:
    """Messages with at least one stored run (every bench message body is unique)."""
    database = live.workdir / "live.sqlite3"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        row = db.execute("SELECT count(DISTINCT original_body) FROM enrichment_run").fetchone()
        return int(row[0])


def settled_runs(live: LiveServer, expected: int, wait: float = 15.0) -> dict[str, int]:
    """Stored runs by outcome, once every run has finished (a write may trail its frame)."""
    deadline = time.monotonic() + wait
    while True:
        runs = stored_runs(live)
        settled = sum(runs.values()) >= expected and not runs.get("running")
        if settled or time.monotonic() > deadline:
            return runs
        time.sleep(0.5)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def report(
    tally: Tally, elapsed: float, runs: dict[str, int], distinct: int, sent: int, mode: str
) -> bool:
    stored = sum(runs.values())
    print(f"mode:          {mode}")
    print(f"messages sent: {sent} in {elapsed:.1f} s -> {sent / elapsed:.1f} messages/s")
    if tally.latencies:
        print(
            f"latency:       p50 {statistics.median(tally.latencies) * 1000:.0f} ms,"
            f" p99 {percentile(tally.latencies, 99) * 1000:.0f} ms,"
            f" max {max(tally.latencies) * 1000:.0f} ms (send -> result frame)"
        )
    print(f"result frames: {tally.results}; error frames/failures: {len(tally.errors)}")
    for error in sorted(set(tally.errors))[:5]:
        print(f"  e.g. {error}")
    if tally.wrong_body:
        print(f"results without the expected summary: {tally.wrong_body}")
    print(f"stored runs:   {stored} ({', '.join(f'{k} {v}' for k, v in sorted(runs.items()))})")
    lost = sent - distinct
    duplicates = stored - distinct
    print(f"lost runs:     {lost} (messages sent without a stored run)")
    print(f"duplicate runs: {duplicates} (extra runs of a message already stored)")
    return lost == 0 and duplicates == 0 and not tally.errors and not tally.wrong_body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10, help="messages per client")
    parser.add_argument("--redis", action="store_true", help="Redis layer + runworker processes")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--workers", type=int, default=2, help="runworker processes (--redis)")
    args = parser.parse_args()
    # Quiet logs: the live server keeps stderr in a pipe nobody drains while the bench runs.
    extra_env = {"LOG_LEVEL": "WARNING"}
    if args.redis:
        extra_env["REDIS_URL"] = args.redis_url
    mode = f"redis + {args.workers} runworker" if args.redis else "in daphne (in-memory layer)"
    with (
        tempfile.TemporaryDirectory(prefix="ws-load-") as workdir,
        live_server(Path(workdir), extra_env, workers=0) as live,
    ):
        live.manage("shell", "-c", STORE_CONFIG.format(document=json.dumps(summarizer_config())))
        if args.redis:
            for _ in range(args.workers):
                live.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
            time.sleep(3)  # let the workers subscribe before the first job
        tally, elapsed = asyncio.run(drive(live, args.clients, args.messages))
        sent = args.clients * args.messages
        runs = settled_runs(live, sent)
        ok = report(tally, elapsed, runs, distinct_messages(live), sent, mode)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
