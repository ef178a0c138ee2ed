"""One message, one built-in link, through a real daphne. Run: .venv/bin/python bench/link_latency.py

Starts daphne (``tests/live.py``, in-memory layer, its own SQLite file) with the shipped
default link model (the bare ``link-understand``, so it runs in-process) and a local page
server allowed through the SSRF opt-in, then sends ``--sends`` messages one after another on
one authenticated ``/ws/enrich/`` socket, each with one link to a ~50 KB article (a new URL
each time, so every send is a real fetch and extraction, not a cache hit). Prints p50/p99
from send to the result frame (target p50 <= 50 ms, p99 <= 150 ms), the same for one URL
sent again (page-cache hits), and, beside them, the subprocess path: the same script given
by its path, which runs it as a CLI subprocess like any other command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from bench.local_pages import builtin_config, page_server  # noqa: E402
from tests.live import LiveServer, live_server  # noqa: E402

SCRIPT = str(Path(sys.executable).with_name("link-understand"))
STORE_CONFIG = """
import json
from enrichment.config.changes import config_replace
config_replace(document=json.loads({document!r}))
"""


async def sequential(live: LiveServer, urls: list[str]) -> tuple[list[float], list[int], set[str]]:
    """Send one message per URL, each after the previous result; (latencies s, attempt ms,
    attempt types)."""
    latencies: list[float] = []
    attempt_ms: list[int] = []
    types: set[str] = set()
    async with websockets.connect(
        live.ws_url + "/ws/enrich/",
        origin=live.base_url,  # type: ignore[arg-type]
        additional_headers={"Cookie": live.cookie_header()},
    ) as socket:
        for number, url in enumerate(urls):
            request_id = f"m{number}"
            frame = {"type": "enrich", "id": request_id, "message": {"body": f"read {url}"}}
            started = time.perf_counter()
            await socket.send(json.dumps(frame))
            while True:
                answer: dict[str, Any] = json.loads(await socket.recv())
                if answer.get("id") == request_id and answer["type"] in ("result", "error"):
                    break
            latencies.append(time.perf_counter() - started)
            if answer["type"] != "result" or "Field notes from the coast" not in answer["body"]:
                raise SystemExit(f"unexpected answer for {url}: {str(answer)[:500]}")
            attempt = answer["links"]["urls"][0]["attempts"][0]
            attempt_ms.append(attempt["durationMs"])
            types.add(attempt["type"])
    return latencies, attempt_ms, types


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def line(label: str, latencies: list[float], attempt_ms: list[int], types: set[str]) -> None:
    print(
        f"{label:<34} n={len(latencies):<3} p50 {statistics.median(latencies) * 1000:7.1f} ms"
        f"  p99 {percentile(latencies, 99) * 1000:7.1f} ms"
        f"  (attempt p50 {statistics.median(attempt_ms):.0f} ms, type {'/'.join(sorted(types))})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sends", type=int, default=50)
    parser.add_argument("--subprocess-sends", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="3 sends, 1 by subprocess")
    args = parser.parse_args()
    if args.smoke:
        args.sends, args.subprocess_sends = 3, 1
        print("smoke run (3 sends): the figures below are not measurements")
    with (
        page_server() as pages,
        tempfile.TemporaryDirectory(prefix="link-latency-") as workdir,
        live_server(Path(workdir), {"LOG_LEVEL": "WARNING"}, workers=0) as live,
    ):
        store = STORE_CONFIG.format(document=json.dumps(builtin_config()))
        live.manage("shell", "-c", store)
        asyncio.run(sequential(live, [f"{pages}/big/999999"]))  # first socket, first query
        fresh = [f"{pages}/big/{n}" for n in range(args.sends)]
        inside = asyncio.run(sequential(live, fresh))
        cached = asyncio.run(sequential(live, [f"{pages}/big/0"] * args.sends))
        by_path = STORE_CONFIG.format(document=json.dumps(builtin_config(SCRIPT)))
        live.manage("shell", "-c", by_path)
        spawned_urls = [f"{pages}/big/{100000 + n}" for n in range(args.subprocess_sends)]
        spawned = asyncio.run(sequential(live, spawned_urls))
    print("one built-in link to a ~50 KB local page, sequential sends, send -> result frame")
    line("in-process, new URL each send", *inside)
    line("in-process, same URL (cache hit)", *cached)
    line("subprocess (script by path)", *spawned)
    print("target (in-process, new URL): p50 <= 50 ms, p99 <= 150 ms")
    p50_inside = statistics.median(inside[0])
    p50_spawned = statistics.median(spawned[0])
    print(f"subprocess / in-process p50: {p50_spawned / p50_inside:.0f}x")


if __name__ == "__main__":
    main()
