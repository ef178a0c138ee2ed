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
``--workers`` ``manage.py runworker enrichment`` processes instead of inside daphne. Those
processes all write one SQLite file by default (they contend for its lock);
``--database-url`` gives them a database instead, as a deployment with workers would
(PostgreSQL; the bench empties it first, unless ``--keep-database``: then it writes beside
what is there, as ``bench/prune.py --ws-load`` has it do while a prune pass runs, and counts
only its own messages' runs).

``--builtin`` uses the shipped default link model instead (the bare ``link-understand``, run
in-process) with each message linking a distinct page of a local page server (the extraction
corpus, allowed through the SSRF opt-in). It also measures, in the same run, the ceiling (a
bare echo consumer, ``/ws/ping/``, under the same clients and messages) and raw in-process
extraction pages/s of the same pages, prints the ratios, and the peak RSS of daphne plus its
extraction pool (and of the workers plus theirs). Targets: >= 150 messages/s, RSS <= 400 MB.

``--compare N`` measures issue 29's ratio on a shared machine, whose speed drifts between
runs more than the modes differ: N rounds, each one run in daphne and one with ``--redis``
(same clients, messages and other options, the order alternating from round to round),
then each round's messages/s, CPU per message outside the extraction pools, and the ratio
``--redis`` / in daphne (target >= 0.9) with their medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from bench.local_pages import (  # noqa: E402
    builtin_config,
    corpus_pages,
    page_server,
    process_tree_cpu_seconds,
    process_tree_rss,
)
from tests.enrichment.conftest import summarizer_config  # noqa: E402
from tests.live import LiveServer, live_server  # noqa: E402

STORE_CONFIG = """
import json
from enrichment.config.changes import config_replace
config_replace(document=json.loads({document!r}))
"""
RESULT_TIMEOUT = 300.0
# Issue 29: messages/s with --redis --workers 2 at least this share of daphne's own.
TARGET_RATIO = 0.9


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    results: int = 0
    errors: list[str] = field(default_factory=list)
    wrong_body: int = 0
    progress: int = 0  # progress frames received (runs lasting over PROGRESS_AFTER_MS)


# The link of message ``n`` and the text its result body must contain.
LinkFor = Callable[[int], str]
Expected = Callable[[str], str]


def summarizer_link(number: int) -> str:
    return f"http://127.0.0.1/{number}"


def summarizer_expected(url: str) -> str:
    return f"Summary of {url}"


def builtin_expected(url: str) -> str:
    return f"URL: {url}\nSource: link-understand\nSummary:\nSECURITY NOTICE"


async def client(
    index: int,
    live: LiveServer,
    cookie: str,
    messages: int,
    tally: Tally,
    link_for: LinkFor = summarizer_link,
    expected: Expected = summarizer_expected,
    pause: float = 0.0,
) -> None:
    async with websockets.connect(
        live.ws_url + "/ws/enrich/",
        origin=live.base_url,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        max_queue=None,
        open_timeout=120,  # a loaded 2-core machine accepts 200 sockets slowly
    ) as socket:
        for number in range(messages):
            if number and pause:
                await asyncio.sleep(pause)  # a quiet spell: what a message after it waits
            request_id = f"c{index}-m{number}"
            url = link_for(index * messages + number)
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
            answer = await result_frame(socket, request_id, tally)
            tally.latencies.append(time.perf_counter() - started)
            if answer["type"] == "result":
                tally.results += 1
                if expected(url) not in answer.get("body", ""):
                    tally.wrong_body += 1
            else:
                tally.errors.append(str(answer.get("error")))


async def result_frame(socket: Any, request_id: str, tally: Tally) -> dict[str, Any]:
    """Count and skip progress frames; return the result or error frame for ``request_id``."""
    while True:
        frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=RESULT_TIMEOUT))
        tally.progress += frame.get("type") == "progress"
        if frame.get("id") == request_id and frame.get("type") in ("result", "error"):
            return dict(frame)
        if frame.get("type") == "error" and frame.get("id") is None:
            return dict(frame)


async def drive(
    live: LiveServer,
    cookie: str,
    clients: int,
    messages: int,
    link_for: LinkFor = summarizer_link,
    expected: Expected = summarizer_expected,
    pause: float = 0.0,
) -> tuple[Tally, float]:
    tally = Tally()
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(
            client(i, live, cookie, messages, tally, link_for, expected, pause)
            for i in range(clients)
        ),
        return_exceptions=True,
    )
    elapsed = time.perf_counter() - started
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            tally.errors.append(f"client failed: {type(outcome).__name__}: {outcome}")
    return tally, elapsed


# Run through ``manage.py shell``: the same query on the SQLite file or on --database-url.
COUNT_RUNS = """
import json
from django.db.models import Count
from enrichment.models import Run
runs = Run.objects.filter(original_body__startswith="bench message ")  # this bench's only
outcomes = dict(runs.values_list("outcome").annotate(n=Count("id")).order_by())
messages = runs.values("original_body").distinct().count()
print(json.dumps({"outcomes": outcomes, "messages": messages}))
"""


def stored(live: LiveServer) -> tuple[dict[str, int], int]:
    """Stored runs by outcome, and the messages with at least one stored run (every bench
    message body is unique)."""
    answer = json.loads(live.manage("shell", "-c", COUNT_RUNS).stdout.strip().splitlines()[-1])
    return answer["outcomes"], answer["messages"]


def settled_runs(live: LiveServer, expected: int, wait: float = 15.0) -> tuple[dict[str, int], int]:
    """``stored``, once every run has finished (a write may trail its frame)."""
    deadline = time.monotonic() + wait
    while True:
        runs, messages = stored(live)
        settled = sum(runs.values()) >= expected and not runs.get("running")
        if settled or time.monotonic() > deadline:
            return runs, messages
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
    print(
        f"result frames: {tally.results}; error frames/failures: {len(tally.errors)};"
        f" progress frames: {tally.progress} (only runs lasting over PROGRESS_AFTER_MS send any)"
    )
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


async def echo_client(live: LiveServer, cookie: str, messages: int, tally: Tally) -> None:
    async with websockets.connect(
        live.ws_url + "/ws/ping/",
        origin=live.base_url,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        max_queue=None,
        open_timeout=120,  # a loaded 2-core machine accepts 200 sockets slowly
    ) as socket:
        json.loads(await socket.recv())  # hello
        for number in range(messages):
            started = time.perf_counter()
            await socket.send(json.dumps({"type": "ping", "n": number}))
            answer = json.loads(await asyncio.wait_for(socket.recv(), timeout=RESULT_TIMEOUT))
            tally.latencies.append(time.perf_counter() - started)
            if answer.get("echo", {}).get("n") == number:
                tally.results += 1
            else:
                tally.errors.append(f"unexpected echo {answer}")


def login(live: LiveServer, attempts: int = 5) -> str:
    """The session cookie; retried, since a loaded machine can make the login time out."""
    for attempt in range(attempts):
        try:
            return live.cookie_header()
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(2)
    raise AssertionError("unreachable")


async def drive_echo(
    live: LiveServer, cookie: str, clients: int, messages: int
) -> tuple[Tally, float]:
    tally = Tally()
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(echo_client(live, cookie, messages, tally) for _ in range(clients)),
        return_exceptions=True,
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            tally.errors.append(f"echo client failed: {type(outcome).__name__}: {outcome}")
    return tally, time.perf_counter() - started


def extraction_pages_per_second(count: int) -> float:
    """Raw in-process extraction (one process, no fetch) of the pages the bench links."""
    from enrichment.pipeline.fetch.webfetch import page_result_from_response
    from enrichment.pipeline.net.http import FetchResponse

    pages = corpus_pages()
    responses = [
        FetchResponse(
            f"http://127.0.0.1/page/{n}",
            200,
            (("content-type", "text/html; charset=utf-8"),),
            pages[n % len(pages)],
            False,
            (),
            "127.0.0.1",
        )  # fmt: skip
        for n in range(count)
    ]
    page_result_from_response(responses[0].final_url, responses[0], "markdown", 50_000)  # warm
    started = time.perf_counter()
    for response in responses:
        page_result_from_response(response.final_url, response, "markdown", 50_000)
    return count / (time.perf_counter() - started)


def own_cpu_seconds() -> float:
    """CPU seconds of this process: the clients, the page server and the samplers."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def redis_cpu_seconds(url: str | None) -> float:
    """CPU seconds the Redis server has used (0 without Redis)."""
    if not url:
        return 0.0
    import redis

    client = redis.Redis.from_url(url)
    try:
        info: dict[str, Any] = client.info("cpu")  # type: ignore[assignment]
    finally:
        client.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def cpu_alone(pids: list[int]) -> float:
    """CPU seconds of the processes themselves, without their extraction pools."""
    return sum(process_tree_cpu_seconds(pid, descendants=False) for pid in pids)


def process_ids(needle: str) -> list[int]:
    """Processes whose command line contains ``needle`` (arguments joined by spaces)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in command:
            found.append(int(entry.name))
    return found


@contextmanager
def peak_rss(groups: dict[str, Callable[[], list[int]]]) -> Iterator[dict[str, int]]:
    """Sample the RSS of each group of process trees every 0.2 s; yields the peaks."""
    peaks = {name: 0 for name in groups}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for name, pids in groups.items():
                peaks[name] = max(peaks[name], sum(process_tree_rss(pid) for pid in pids()))
            stop.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peaks
    finally:
        stop.set()
        thread.join()


def page_cache_empty(redis_url: str) -> None:
    """Drop the page cache (Django's cache keys, ``controlui:*``) a run before left in this
    Redis: a page server that gets the same port again would otherwise serve every link from
    the cache, and the run would measure no fetch and no extraction."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        for key in client.scan_iter(match="controlui:*", count=1000):
            client.delete(key)
    finally:
        client.close()


RATE = re.compile(r"^messages sent: .* -> ([\d.]+) messages/s", re.MULTILINE)
OUTSIDE = re.compile(
    r"^\s+of which .+? alone ([\d.-]+) ms, their extraction pools ([\d.-]+) ms", re.MULTILINE
)


@dataclass(frozen=True)
class RunFigures:
    rate: float  # messages/s
    outside: float  # ms of CPU per message in daphne and the workers, outside the pools
    pools: float  # ms of CPU per message in the extraction pools


def run_figures(output: str) -> RunFigures:
    """The figures ``--compare`` needs out of one run's report.

    >>> run_figures("messages sent: 1500 in 6.0 s -> 250.0 messages/s\\n"
    ...     "               of which daphne alone 1.2 ms, their extraction pools 0.0 ms\\n"
    ...     "               of which runworker processes alone 4.4 ms, their extraction pools 3.5 ms")
    RunFigures(rate=250.0, outside=5.6, pools=3.5)
    """
    rate = RATE.search(output)
    if rate is None:
        raise ValueError("no 'messages sent' line in the run's output")
    split = [(float(alone), float(pools)) for alone, pools in OUTSIDE.findall(output)]
    return RunFigures(
        rate=float(rate.group(1)),
        outside=round(sum(alone for alone, _ in split), 3),
        pools=round(sum(pools for _, pools in split), 3),
    )


def compare_summary(rounds: list[tuple[RunFigures, RunFigures]]) -> list[str]:
    """One line per round (in daphne, then ``--redis``) and the medians; the ratio's target.

    >>> a, b = RunFigures(250.0, 2.4, 3.0), RunFigures(200.0, 5.6, 3.5)
    >>> for line in compare_summary([(a, b)])[1:]:
    ...     print(line)
    median CPU per message in daphne: outside the extraction pools 2.4 ms, the pools 3.0 ms (target outside <= the pools: met)
    median CPU per message --redis: outside the extraction pools 5.6 ms, the pools 3.5 ms (target outside <= the pools: missed)
    median: in daphne 250.0 msg/s, --redis 200.0 msg/s, ratio 0.800 (target >= 0.9: missed)

    Ratios are printed to three decimals, so one just under the target (0.897) never reads
    as "0.90" beside "missed".
    """
    lines = []
    ratios = []
    for number, (alone, redis) in enumerate(rounds, 1):
        ratio = redis.rate / alone.rate
        ratios.append(ratio)
        lines.append(
            f"round {number}: in daphne {alone.rate:.1f} msg/s (CPU outside the pool"
            f" {alone.outside:.1f} ms, the pool {alone.pools:.1f} ms per message);"
            f" --redis {redis.rate:.1f} msg/s ({redis.outside:.1f} / {redis.pools:.1f} ms);"
            f" ratio {ratio:.3f}"
        )
    for index, label in ((0, "in daphne"), (1, "--redis")):
        outside = statistics.median(pair[index].outside for pair in rounds)
        pools = statistics.median(pair[index].pools for pair in rounds)
        lines.append(
            f"median CPU per message {label}: outside the extraction pools {outside:.1f} ms,"
            f" the pools {pools:.1f} ms (target outside <= the pools:"
            f" {'met' if outside <= pools else 'missed'})"
        )
    ratio = statistics.median(ratios)
    lines.append(
        f"median: in daphne {statistics.median(a.rate for a, _ in rounds):.1f} msg/s,"
        f" --redis {statistics.median(b.rate for _, b in rounds):.1f} msg/s,"
        f" ratio {ratio:.3f} (target >= {TARGET_RATIO:g}:"
        f" {'met' if ratio >= TARGET_RATIO else 'missed'})"
    )
    return lines


def without_option(argv: list[str], option: str) -> list[str]:
    """``argv`` without ``option`` and its value (``--x N`` or ``--x=N``).

    >>> without_option(["--clients", "3", "--compare", "3", "--builtin"], "--compare")
    ['--clients', '3', '--builtin']
    >>> without_option(["--compare=2", "--messages", "2"], "--compare")
    ['--messages', '2']
    """
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            kept.append(arg)
    return kept


def compare(rounds: int, forwarded: list[str]) -> int:
    """``--compare``: alternate runs of this script in daphne and with ``--redis``; exit 1 when
    any run failed (its report is printed whole)."""
    results: list[tuple[RunFigures, RunFigures]] = []
    for number in range(1, rounds + 1):
        figures: dict[bool, RunFigures] = {}
        for redis in (False, True) if number % 2 else (True, False):
            command = [sys.executable, __file__, *forwarded, *(["--redis"] if redis else [])]
            done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
            label = "--redis" if redis else "in daphne"
            if done.returncode != 0 or not RATE.search(done.stdout):
                print(f"round {number}, {label}: the run failed (exit {done.returncode}):")
                print(done.stdout, flush=True)
                return 1
            figures[redis] = run_figures(done.stdout)
            print(f"round {number}, {label}: {figures[redis].rate:.1f} messages/s", flush=True)
        results.append((figures[False], figures[True]))
    print("\n".join(compare_summary(results)))
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10, help="messages per client")
    parser.add_argument("--redis", action="store_true", help="Redis layer + runworker processes")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/7")
    parser.add_argument("--workers", type=int, default=2, help="runworker processes (--redis)")
    parser.add_argument(
        "--builtin", action="store_true", help="the in-process link-understand on local pages"
    )
    parser.add_argument(
        "--extraction-workers",
        type=int,
        help="extraction pool of each runworker (--redis; default: the cores shared out"
        " among the workers, at least 2 so each pool stays fair, as EXTRACTION_WORKERS)",
    )
    parser.add_argument(
        "--database-url",
        help="a database for daphne and the workers instead of one SQLite file"
        " (e.g. postgres://postgres@127.0.0.1:5432/NAME); it is emptied first",
    )
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help="with --database-url: do not empty it (write beside another bench's data)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds each client waits between its messages (the latency of a message that"
        " arrives after a quiet spell, e.g. --clients 1 --messages 20 --pause 2)",
    )
    parser.add_argument("--smoke", action="store_true", help="2 clients x 2 messages")
    parser.add_argument(
        "--compare",
        type=int,
        metavar="N",
        help="N rounds, each one run in daphne and one with --redis (the order alternating),"
        f" and the ratio of their messages/s (issue 29: >= {TARGET_RATIO:g})",
    )
    args = parser.parse_args()
    if args.keep_database and not args.database_url:
        parser.error("--keep-database needs --database-url (the SQLite file is always new)")
    if args.smoke:
        args.clients, args.messages = 2, 2
        print("smoke run (2 clients x 2 messages): the figures below are not measurements")
    if args.compare is not None:
        if args.compare < 1 or args.redis:
            parser.error("--compare takes a number of rounds >= 1, and runs --redis itself")
        sys.exit(compare(args.compare, without_option(sys.argv[1:], "--compare")))
    # Quiet logs: the live server keeps stderr in a pipe nobody drains while the bench runs.
    # Configured as in production (README, settings table): DEBUG off, so no query log (on SQLite the
    # log also quotes every parameter with a query of its own), a secret key of its own, and
    # cookies that may travel over the bench's plain http.
    extra_env = {
        "LOG_LEVEL": "WARNING",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "SECURE_COOKIES": "0",
    }
    if args.redis:
        extra_env["REDIS_URL"] = args.redis_url
        page_cache_empty(args.redis_url)
    cores = len(os.sched_getaffinity(0))
    extraction_workers = args.extraction_workers or max(2, cores // max(1, args.workers))
    mode = (
        f"redis + {args.workers} runworker (extraction pool of {extraction_workers} each)"
        if args.redis
        else "in daphne (in-memory layer)"
    )
    if args.builtin:
        mode += ", built-in link-understand in-process"
    mode += ", " + (args.database_url.split("@")[-1] if args.database_url else "one SQLite file")
    sent = args.clients * args.messages
    with (
        page_server() as pages,
        tempfile.TemporaryDirectory(prefix="ws-load-") as workdir,
        live_server(
            Path(workdir),
            extra_env,
            workers=0,
            database_url=args.database_url,
            keep_database=args.keep_database,
        ) as live,
    ):
        document = builtin_config() if args.builtin else summarizer_config()
        live.manage("shell", "-c", STORE_CONFIG.format(document=json.dumps(document)))
        workers = []
        if args.redis:
            pool = {"EXTRACTION_WORKERS": str(extraction_workers)}
            for _ in range(args.workers):
                command = [sys.executable, "manage.py", "runworker", "enrichment"]
                workers.append(live.spawn(command, pool))
        time.sleep(3)  # workers subscribe; every extraction pool is warm before the first job
        port = live.base_url.rsplit(":", 1)[1]
        groups = {
            "daphne + its extraction pool": lambda: process_ids(f"-p {port} controlui.asgi"),
            "runworker processes + their pools": lambda: [w.pid for w in workers],
        }
        # Logged in once, before the CPU is counted: checking the password (PBKDF2) costs
        # daphne about a second of CPU here, which was counted into its CPU per message.
        cookie = login(live)
        echo = None
        if args.builtin:
            echo = asyncio.run(drive_echo(live, cookie, args.clients, args.messages))
        alone_before = {name: cpu_alone(pids()) for name, pids in groups.items()}
        cpu_before = {
            name: sum(map(process_tree_cpu_seconds, pids())) for name, pids in groups.items()
        }
        redis_url = args.redis_url if args.redis else None
        harness_before, redis_before = own_cpu_seconds(), redis_cpu_seconds(redis_url)
        with peak_rss(groups) as peaks:
            if args.builtin:
                tally, elapsed = asyncio.run(
                    drive(
                        live,
                        cookie,
                        args.clients,
                        args.messages,
                        lambda n: f"{pages}/page/{n}",
                        builtin_expected,
                        args.pause,
                    )  # fmt: skip
                )
            else:
                tally, elapsed = asyncio.run(
                    drive(live, cookie, args.clients, args.messages, pause=args.pause)
                )
        cpu_used = {
            name: sum(map(process_tree_cpu_seconds, pids())) - cpu_before[name]
            for name, pids in groups.items()
        }
        alone_used = {name: cpu_alone(pids()) - alone_before[name] for name, pids in groups.items()}
        harness_used = own_cpu_seconds() - harness_before
        redis_used = redis_cpu_seconds(redis_url) - redis_before
        runs, distinct = settled_runs(live, sent)
        ok = report(tally, elapsed, runs, distinct, sent, mode)
    for name, seconds in cpu_used.items():
        if seconds:
            alone = alone_used[name]
            print(
                f"CPU used:      {seconds:.1f} s = {seconds / sent * 1000:.1f} ms per message"
                f" ({name}; the machine has {len(os.sched_getaffinity(0))} cores)\n"
                f"               of which {name.split(' +')[0]} alone"
                f" {alone / sent * 1000:.1f} ms, their extraction pools"
                f" {(seconds - alone) / sent * 1000:.1f} ms"
            )
    per_message = 1000 / sent
    print(
        f"CPU used:      this bench (clients, page server) {harness_used * per_message:.1f} ms"
        f" per message"
        + (f", the Redis server {redis_used * per_message:.1f} ms" if redis_url else "")
        + f"; all together {(sum(cpu_used.values()) + harness_used + redis_used) / elapsed:.2f}"
        f" of {len(os.sched_getaffinity(0))} cores busy"
    )
    for name, peak in peaks.items():
        if peak:
            print(f"peak RSS:      {peak / 2**20:.0f} MB ({name}; target daphne + pool <= 400 MB)")
    if echo is not None:
        rate = sent / elapsed
        echo_tally, echo_elapsed = echo
        echo_rate = sent / echo_elapsed
        extraction_rate = extraction_pages_per_second(min(sent, 400))
        print(
            f"echo ceiling:  {echo_rate:.0f} messages/s (/ws/ping/, same clients and messages,"
            f" p50 {statistics.median(echo_tally.latencies or [0]) * 1000:.0f} ms,"
            f" {echo_tally.results} answered, {len(echo_tally.errors)} failures)"
        )
        for error in sorted(set(echo_tally.errors))[:3]:
            print(f"  e.g. {error}")
        print(f"raw extraction: {extraction_rate:.0f} pages/s (one process, same pages, no fetch)")
        print(
            f"ratios:        enrich / echo {rate / echo_rate:.2f};"
            f" enrich / raw extraction {rate / extraction_rate:.2f}; target >= 150 messages/s"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
