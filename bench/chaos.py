"""No job lost under faults. Run: .venv/bin/python bench/chaos.py [--messages 500] [--sockets 5]

Starts its own PostgreSQL (initdb/pg_ctl in a temp folder, port 16431; run as the
``postgres`` user when started by root) and its own Redis (port 16432, append-only file
fsynced on every write, so a restart keeps the job queue), then daphne and two
``manage.py runworker enrichment`` processes against them — never the machine's shared
servers. The stored link model is the test summarizer CLI (every 4th URL sleeps 1 s).

Five scenarios, each sending ``--messages`` messages over ``--sockets`` WebSockets (at most
``--window`` in flight per socket) while a fault is injected a few seconds in:

- ``worker-kill``: one worker gets SIGKILL;
- ``redis-restart``: Redis is stopped (SIGTERM) and started again 3 s later;
- ``postgres-restart``: ``pg_ctl stop -m fast``, started again 3 s later;
- ``redis-restart-nopersist``: Redis restarted with no append-only file and no snapshot, so
  every queued job is lost: each must still be answered (an ``error`` frame naming the loss,
  by ``ENRICHMENT_JOB_DEADLINE_SECONDS``, set to ``--deadline`` here) and recorded (a
  ``dead-letter`` run), and no run stays ``running`` (the periodic sweeper);
- ``kill-and-redis``: one worker SIGKILLed and Redis restarted (with its file) together.

``--smoke`` sends 24 messages per scenario (seconds of traffic; the servers take longer to
start).

Nothing is restarted by hand during a scenario (between scenarios the killed worker is
started again so that each scenario begins with two). Per scenario it prints: sent, result
frames, error frames, unanswered, stored runs, lost (a message with no run), duplicates (a
message with more than one run) and runs left ``running`` once everything answered. Target:
0 unanswered, 0 lost, 0 duplicated, 0 left running. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402
import websockets  # noqa: E402

from tests.enrichment.conftest import summarizer_config  # noqa: E402
from tests.live import CREATE_USERS, DAPHNE, DAPHNE_LIMITS, LiveServer  # noqa: E402

PG_PORT = 16431
REDIS_PORT = 16432
WEB_PORT = 16433
ANSWER_TIMEOUT = 240.0
SCENARIOS = [
    "worker-kill",
    "redis-restart",
    "postgres-restart",
    "kill-and-redis",
    "redis-restart-nopersist",
]
STORE_CONFIG = """
import json
from enrichment.config.changes import config_replace
config_replace(document=json.loads({document!r}))
"""


def as_postgres_user() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


class Postgres:
    def __init__(self, folder: Path) -> None:
        self.data = folder / "pg"
        self.log = folder / "pg.log"
        self.folder = folder

    def run(self, *args: str) -> None:
        subprocess.run([*as_postgres_user(), *args], check=True, stdout=subprocess.DEVNULL, cwd="/")

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self.start()
        self.run("createdb", "-h", "127.0.0.1", "-p", str(PG_PORT), "-U", "postgres", "chaos")

    def start(self) -> None:
        options = f"-p {PG_PORT} -k {self.folder} -c listen_addresses=127.0.0.1"
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")


class Redis:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, persist: bool = True) -> None:
        if not persist:  # a restart that keeps nothing: no file to load either
            shutil.rmtree(self.folder / "appendonlydir", ignore_errors=True)
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(REDIS_PORT),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes" if persist else "no",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=(self.folder / "redis.log").open("ab"),
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if (
                subprocess.run(
                    ["redis-cli", "-p", str(REDIS_PORT), "ping"], capture_output=True
                ).stdout.strip()
                == b"PONG"
            ):
                return
            time.sleep(0.1)
        raise RuntimeError("private redis did not start")

    def stop(self) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)


@dataclass
class Tally:
    sent: int = 0
    results: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    unanswered: int = 0
    closed: int = 0


async def one_socket(
    server: LiveServer, cookie: str, ids: list[tuple[str, str]], window: int, tally: Tally
) -> None:
    pending: set[str] = set()
    slots = asyncio.Semaphore(window)
    async with websockets.connect(
        server.ws_url + "/ws/enrich/",
        origin=server.base_url,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        max_queue=None,
    ) as ws:

        async def sender() -> None:
            for request_id, body in ids:
                await slots.acquire()
                pending.add(request_id)
                frame = {"type": "enrich", "id": request_id, "message": {"body": body}}
                await ws.send(json.dumps(frame))
                tally.sent += 1
                await asyncio.sleep(0.02)

        async def receiver() -> None:
            while len(pending) or tally_left(ids, pending):
                frame = json.loads(await ws.recv())
                if frame["type"] in ("result", "error") and frame["id"] in pending:
                    pending.discard(frame["id"])
                    slots.release()
                    if frame["type"] == "result":
                        tally.results += 1
                    else:
                        tally.errors[_error_kind(frame["error"])] += 1

        def tally_left(all_ids: list[tuple[str, str]], waiting: set[str]) -> bool:
            return send_task is not None and not send_task.done()

        send_task: asyncio.Task[None] | None = asyncio.create_task(sender())
        try:
            await asyncio.wait_for(receiver(), timeout=ANSWER_TIMEOUT)
        except (TimeoutError, websockets.ConnectionClosed):
            tally.closed += 1
        send_task.cancel()
        tally.unanswered += len(pending)


def _error_kind(error: str) -> str:
    """An error text with its job id and numbers masked, to count errors by kind."""
    return re.sub(r"\d+", "N", re.sub(r"job [0-9a-f]{8,}", "job J", error))[:90]


async def scenario_traffic(
    server: LiveServer, cookie: str, name: str, messages: int, sockets: int, window: int
) -> Tally:
    tally = Tally()
    per_socket: list[list[tuple[str, str]]] = [[] for _ in range(sockets)]
    for number in range(messages):
        marker = f"chaos-{name}-{number}"
        slow = "/slow" if number % 4 == 0 else ""
        body = f"{marker} see http://127.0.0.1/{marker}{slow}"
        per_socket[number % sockets].append((marker, body))
    await asyncio.gather(*(one_socket(server, cookie, ids, window, tally) for ids in per_socket))
    return tally


def stored_runs(dsn: str, name: str, wait: float = 60.0) -> tuple[Counter[str], int]:
    """Runs per message marker, and how many are still ``running`` (after ``wait`` s)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with psycopg.connect(dsn) as connection:
                rows = connection.execute(
                    "SELECT split_part(original_body, ' ', 1), outcome FROM enrichment_run "
                    "WHERE original_body LIKE %s",
                    (f"chaos-{name}-%",),
                ).fetchall()
        except psycopg.OperationalError:
            time.sleep(1)
            continue
        running = sum(1 for _, outcome in rows if outcome == "running")
        if running == 0 or time.monotonic() > deadline:
            return Counter(marker for marker, _ in rows), running
        time.sleep(1)


def run_scenario(
    name: str, server: LiveServer, cookie: str, dsn: str, args: argparse.Namespace, fault
) -> bool:
    async def traffic_with_fault() -> Tally:
        traffic = asyncio.create_task(
            scenario_traffic(server, cookie, name, args.messages, args.sockets, args.window)
        )
        await asyncio.sleep(args.fault_after)
        await asyncio.to_thread(fault)
        return await traffic

    started = time.monotonic()
    tally = asyncio.run(traffic_with_fault())
    elapsed = time.monotonic() - started
    runs, running = stored_runs(dsn, name)
    markers = {f"chaos-{name}-{number}" for number in range(args.messages)}
    lost = len(markers - set(runs))
    duplicates = sum(1 for count in runs.values() if count > 1)
    print(
        f"{name:17} sent {tally.sent:4}  results {tally.results:4}  errors "
        f"{sum(tally.errors.values()):3}  unanswered {tally.unanswered:3}  stored runs "
        f"{sum(runs.values()):4}  lost {lost:3}  duplicates {duplicates:3}  left running "
        f"{running:3}  ({elapsed:.1f} s)"
    )
    for error, count in tally.errors.most_common(5):
        print(f"{'':19}{count:4} x error: {error}")
    # Without persistence too: each job Redis lost is answered with an error frame and
    # recorded as a dead-letter run, so no message is without a run.
    return tally.unanswered == lost == duplicates == running == 0 and tally.sent == args.messages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--sockets", type=int, default=5)
    parser.add_argument("--window", type=int, default=16, help="in flight per socket (≤ 32)")
    parser.add_argument("--fault-after", type=float, default=4.0, help="seconds into a scenario")
    parser.add_argument("--deadline", type=int, default=30, help="ENRICHMENT_JOB_DEADLINE_SECONDS")
    parser.add_argument("--only", choices=SCENARIOS)
    parser.add_argument("--smoke", action="store_true", help="24 messages per scenario")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.sockets, args.fault_after = 24, 2, 1.5
        print("smoke run (24 messages per scenario): the figures below are not measurements")

    folder = Path(tempfile.mkdtemp(prefix="chaos-"))
    postgres, redis_server = Postgres(folder), Redis(folder)
    dsn = f"postgres://postgres@127.0.0.1:{PG_PORT}/chaos"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="controlui.settings",
        DATABASE_URL=dsn,
        REDIS_URL=f"redis://127.0.0.1:{REDIS_PORT}/0",
        CHANNEL_LAYER_PREFIX="chaos",
        ENRICHMENT_JOB_DEADLINE_SECONDS=str(args.deadline),
        ENRICHMENT_SWEEP_SECONDS="2",
        CONTROLUI_VAR_DIR=str(folder / "var"),
        PYTHONUNBUFFERED="1",
    )
    server = LiveServer(base_url=f"http://127.0.0.1:{WEB_PORT}", env=env, workdir=folder)
    processes: list[subprocess.Popen[bytes]] = []
    postgres.init()
    redis_server.start()
    try:
        server.manage("migrate", "--noinput")
        server.manage("shell", "-c", CREATE_USERS)
        server.manage("shell", "-c", STORE_CONFIG.format(document=json.dumps(summarizer_config())))
        daphne = subprocess.Popen(
            [
                str(DAPHNE),
                *DAPHNE_LIMITS,
                "-b",
                "127.0.0.1",
                "-p",
                str(WEB_PORT),
                "controlui.asgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(folder / "daphne.log").open("wb"),
        )
        processes.append(daphne)
        workers = [
            server.spawn([sys.executable, "manage.py", "runworker", "enrichment"]) for _ in range(2)
        ]
        processes += workers
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(server.base_url + "/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"not healthy; logs in {folder}")
            time.sleep(0.3)
        cookie = server.cookie_header()
        print(
            f"daphne + 2 workers, private PostgreSQL :{PG_PORT} and Redis :{REDIS_PORT}; "
            f"{args.messages} messages over {args.sockets} sockets per scenario"
        )

        def kill_worker() -> None:
            os.kill(workers[0].pid, signal.SIGKILL)
            workers[0].wait()  # reaped, as a supervisor would

        def restart_redis() -> None:
            redis_server.stop()
            time.sleep(3)
            redis_server.start()

        def restart_redis_without_persistence() -> None:
            redis_server.stop()
            time.sleep(3)
            redis_server.start(persist=False)

        def kill_worker_and_restart_redis() -> None:
            kill_worker()
            restart_redis()

        def restart_postgres() -> None:
            postgres.stop()
            time.sleep(3)
            postgres.start()

        scenarios = [
            ("worker-kill", kill_worker),
            ("redis-restart", restart_redis),
            ("postgres-restart", restart_postgres),
            ("kill-and-redis", kill_worker_and_restart_redis),
            # Last: the Redis it leaves behind keeps nothing on a further restart.
            ("redis-restart-nopersist", restart_redis_without_persistence),
        ]
        ok = True
        for name, fault in scenarios:
            if args.only and name != args.only:
                continue
            for index, worker in enumerate(workers):
                if worker.poll() is not None:  # between scenarios only: start with two
                    workers[index] = server.spawn(
                        [sys.executable, "manage.py", "runworker", "enrichment"]
                    )
                    processes.append(workers[index])
            ok = run_scenario(name, server, cookie, dsn, args, fault) and ok
        health = httpx.get(server.base_url + "/api/health", timeout=5).json()
        print(f"health after: {health['status']}, workers {health.get('workers')}")
        return 0 if ok else 1
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        redis_server.stop()
        postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
