"""Dramatiq against Celery on this machine's Redis: messages a second and CPU per message.

Two jobs: a no-op (the engine's own cost) and a real piece of enrichment work (the project's
extraction of one page of the extraction devset, ``extract_html``). For each engine, N
messages are enqueued from this process, then one worker process (the engine's own command
line, 4 threads each) runs them; the worker counts each job in Redis and this process waits
for the count. Reported: enqueue rate, run rate, and the worker's CPU per message (its
/proc user+system time, the start-up excluded).

    PYTHONPATH=<site-packages with celery> .venv/bin/python bench/engines.py
    .venv/bin/python bench/engines.py --smoke     # seconds; an engine not installed is skipped

Dramatiq is the project's engine (``enrichment/jobs``); Celery is not a dependency: install it
in a side environment (``uv venv /tmp/engines && uv pip install -p /tmp/engines/bin/python
'celery[redis]'``) and put that environment's site-packages on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
COUNTER = os.environ.get("BENCH_COUNTER", "bench-engines:done")
DEVSET = Path("/work/shared/data/extraction-devset/html")
THREADS = 4


def _page() -> bytes:
    pages = sorted(DEVSET.glob("*.html.gz")) if DEVSET.is_dir() else []
    if pages:
        return gzip.decompress(pages[0].read_bytes())
    words = " ".join(f"word{i}" for i in range(400))
    return f"<html><body><article><h1>Title</h1><p>{words}</p></article></body></html>".encode()


_redis_client = None


def _count() -> None:
    global _redis_client
    if _redis_client is None:
        import redis

        _redis_client = redis.Redis.from_url(REDIS_URL)
    _redis_client.incr(COUNTER)


def job(kind: str) -> None:
    if kind == "extract":
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")
        from enrichment.pipeline.extract.page import extract_html

        extract_html(_PAGE, None, mode="text")
    _count()


_PAGE = _page()

# The actors and tasks, defined when their engine is importable (the worker command lines
# import this module: ``dramatiq bench.engines``, ``celery -A bench.engines worker``).
if importlib.util.find_spec("dramatiq") is not None and os.environ.get("BENCH_ENGINE") in (
    "dramatiq",
    None,
):
    import dramatiq
    from dramatiq.brokers.redis import RedisBroker

    dramatiq.set_broker(RedisBroker(url=REDIS_URL, namespace="bench-engines"))

    @dramatiq.actor(max_retries=0, queue_name="bench")  # type: ignore[untyped-decorator]
    def dramatiq_job(kind: str) -> None:
        job(kind)


if importlib.util.find_spec("celery") is not None and os.environ.get("BENCH_ENGINE") in (
    "celery",
    None,
):
    from celery import Celery

    app = Celery("bench_engines", broker=REDIS_URL)
    app.conf.update(
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=4,
        task_default_queue="bench-engines",
        worker_hijack_root_logger=False,
    )

    @app.task(name="bench.job")  # type: ignore[untyped-decorator]
    def celery_job(kind: str) -> None:
        job(kind)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its (reaped and live) children."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for one in pids:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # gone (or reaped while read)
            continue
        total += sum(int(value) for value in fields[11:15]) / tick
    return total


def measure(engine: str, kind: str, count: int) -> dict[str, float]:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    counter = f"bench-engines:{uuid.uuid4().hex}"
    env = {
        **os.environ,
        "BENCH_ENGINE": engine,
        "BENCH_COUNTER": counter,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    os.environ["BENCH_ENGINE"] = engine
    if engine == "dramatiq":
        command = [
            *(sys.executable, "-m", "dramatiq", "bench.engines"),
            *("--processes", "1", "--threads", str(THREADS), "--queues", "bench"),
        ]
    else:
        command = [
            *(sys.executable, "-m", "celery", "-A", "bench.engines", "worker"),
            *("--pool", "threads", "--concurrency", str(THREADS), "--loglevel", "WARNING"),
        ]
    worker = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # Warm up: one job, so the start-up (imports, connections) is not counted.
        send = _sender(engine)
        send(kind)
        deadline = time.monotonic() + 120
        while _done(client, counter) < 1:
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError(f"{engine} worker did not start")
            time.sleep(0.05)
        cpu_before = _cpu_seconds(worker.pid)
        started = time.monotonic()
        for _ in range(count):
            send(kind)
        enqueued = time.monotonic() - started
        while _done(client, counter) < count + 1:
            if time.monotonic() - started > 600:
                raise RuntimeError(f"{engine}: jobs not finished in 600 s")
            time.sleep(0.01)
        elapsed = time.monotonic() - started
        cpu = _cpu_seconds(worker.pid) - cpu_before
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        client.delete(counter)
    return {
        "enqueue_per_s": count / enqueued,
        "run_per_s": count / elapsed,
        "worker_cpu_ms_per_msg": 1000 * cpu / count,
    }


def _done(client: Any, counter: str) -> int:
    return int(client.get(counter) or 0)


def _sender(engine: str):  # type: ignore[no-untyped-def]
    if engine == "dramatiq":
        return lambda kind: dramatiq_job.send(kind)
    return lambda kind: celery_job.delay(kind)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000, help="no-op messages per engine")
    parser.add_argument("--extract-messages", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="20 messages of each kind")
    args = parser.parse_args()
    counts = {"noop": args.messages, "extract": args.extract_messages}
    if args.smoke:
        counts = {"noop": 20, "extract": 5}
        print("smoke run: a few messages per engine, the figures are not a measurement")
    print(f"redis {REDIS_URL}, one worker process with {THREADS} threads per engine")
    print(f"messages per engine: {counts['noop']} no-op, {counts['extract']} extraction")
    for engine in ("dramatiq", "celery"):
        if importlib.util.find_spec(engine) is None:
            print(f"{engine:9} not installed: skipped")
            continue
        for kind, count in counts.items():
            try:
                figures = measure(engine, kind, count)
            except Exception as exc:  # Redis not running: a figure-less line, not a crash
                print(f"{engine:9} {kind:8} failed: {exc}")
                continue
            print(
                f"{engine:9} {kind:8} n={count:5}  enqueue {figures['enqueue_per_s']:8.0f}/s"
                f"  run {figures['run_per_s']:8.1f} msg/s"
                f"  worker CPU {figures['worker_cpu_ms_per_msg']:6.2f} ms/msg"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
