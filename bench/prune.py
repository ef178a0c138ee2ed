"""Retention benchmark: how long a prune pass takes, and what concurrent inserts feel meanwhile.

Run: .venv/bin/python bench/prune.py [--runs 200000] [--batch-size 500]

Seeds ``--runs`` runs aged 60 days (each with one URL decision and one attempt) plus a few
young ones into the PostgreSQL database ``controlui_bench_prune`` on 127.0.0.1 (created and
migrated with ``manage.py migrate`` when missing, emptied first), then runs one retention
pass (``RETENTION_DAYS=30``: every seeded run goes) in this process while a second session
inserts a run every ~5 ms with ``lock_timeout = 100ms`` (``--lock-timeout-ms``). Prints the pass's wall time and
rate, the inserts made meanwhile, their p99 and slowest latency (lock waits, CPU and commit
I/O together) and the inserts that gave up waiting for a lock (the target: none).
``--partitioned`` stores the log in monthly partitions (a new database
``controlui_bench_prune_part``, ``manage.py partition_runs --first-month`` three months back)
and seeds the runs within that one month: the pass drops the month whole (target: a month of
1M runs in 1 s, no insert waiting 100 ms for a lock). ``--ws-load`` also has
``bench/ws_load.py`` (a real daphne, ``--ws-clients`` sockets of ``--ws-messages`` messages
each) write its runs into the same database, the pass starting once its first runs are
stored; it prints the runs ws_load stored during the pass and ws_load's own summary (latency,
lost and duplicate runs), and fails when ws_load does. ``--smoke`` runs 300 runs on a throwaway SQLite file without the writer (SQLite
has one writer at a time: there is no concurrent insert to measure).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import ensure_postgres_database, migrate  # noqa: E402

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_DATABASE = "controlui_bench_prune"
LOCK_TIMEOUT_MS = 100

SEED_SQL = """
WITH runs AS (
  INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,
    agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,
    media, owner, stage_records, job, trace_id, duration_ms)
  SELECT now() - interval '60 days' - make_interval(secs => n), '', 'slack', 'direct',
    'agent:main:' || (n % 500), 'main', 'see https://example.com/' || n || ' about bread',
    'see https://example.com/' || n || ' about bread [Link] a page', 'success', '', 1,
    '{}', '[]', '', '{}', '', '', n % 3000
  FROM generate_series(1, {runs}) AS n RETURNING id
), decisions AS (
  INSERT INTO enrichment_urldecision (run_id, position, url, blocked, reason, addresses,
    summary)
  SELECT id, 0, 'https://example.com/', false, '', '[]', 'a page' FROM runs RETURNING id
)
INSERT INTO enrichment_attempt (url_decision_id, position, type, command, argv, outcome,
  reason, stderr_tail, duration_ms)
SELECT id, 0, 'cli', 'summarize', '[]', 'ok', '', '', 120 FROM decisions
"""

# Partitioned storage: the runs of one month (spread over it), the children carrying the
# run's time, so that each lands in the month's partitions.
MONTH_SEED_SQL = """
WITH runs AS (
  INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,
    agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,
    media, owner, stage_records, job, trace_id, duration_ms)
  SELECT {month}::timestamptz + make_interval(secs => n * {step}), '', 'slack', 'direct',
    'agent:main:' || (n % 500), 'main', 'see https://example.com/' || n || ' about bread',
    'see https://example.com/' || n || ' about bread [Link] a page', 'success', '', 1,
    '{{}}', '[]', '', '{{}}', '', '', n % 3000
  FROM generate_series(1, {runs}) AS n RETURNING id, created_at
), decisions AS (
  INSERT INTO enrichment_urldecision (run_id, run_created_at, position, url, blocked, reason,
    addresses, summary)
  SELECT id, created_at, 0, 'https://example.com/', false, '', '[]', 'a page' FROM runs
  RETURNING id, run_created_at
)
INSERT INTO enrichment_attempt (url_decision_id, run_created_at, position, type, command, argv,
  outcome, reason, stderr_tail, duration_ms)
SELECT id, run_created_at, 0, 'cli', 'summarize', '[]', 'ok', '', '', 120 FROM decisions
"""
PG_PARTITIONED_DATABASE = "controlui_bench_prune_part"

INSERT_RUN = (
    "INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,"
    " agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,"
    " media, owner, stage_records, job, trace_id)"
    " VALUES (now(), 'writer', 'slack', 'direct', 'writer', '', 'hello', '', 'success', '',"
    " 0, '{}', '[]', '', '{}', '', '')"
)


@dataclass
class Writer:
    """Inserts runs one by one (autocommit) until stopped; records each insert's latency."""

    url: str
    lock_timeout_ms: int = LOCK_TIMEOUT_MS
    latencies_ms: list[float] = field(default_factory=list)
    lock_timeouts: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f"SET lock_timeout = '{int(self.lock_timeout_ms)}ms'")
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    connection.execute(INSERT_RUN)
                except psycopg.errors.LockNotAvailable:
                    self.lock_timeouts += 1
                self.latencies_ms.append((time.perf_counter() - started) * 1000)
                time.sleep(0.005)


BENCH_RUNS = (
    "SELECT count(*) FROM enrichment_run WHERE starts_with(original_body, 'bench message ')"
)
BENCH_RUNS_BETWEEN = BENCH_RUNS + " AND created_at >= %s AND created_at <= %s"


@dataclass
class WsLoad:
    """``bench/ws_load.py`` writing into the bench's database (kept, not emptied)."""

    process: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def start(cls, url: str, clients: int, messages: int) -> WsLoad:
        log = Path(tempfile.mkstemp(prefix="prune-ws-load-", suffix=".log")[1])
        command = [
            sys.executable,
            str(ROOT / "bench" / "ws_load.py"),
            f"--database-url={url}",
            "--keep-database",
            f"--clients={clients}",
            f"--messages={messages}",
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        return cls(process, log)

    def writing(self, url: str, timeout: float = 300.0) -> None:
        """Return once ws_load's first runs are stored; fail when it ends or never writes."""
        import psycopg

        deadline = time.monotonic() + timeout
        with psycopg.connect(url, autocommit=True) as connection:
            while (connection.execute(BENCH_RUNS).fetchone() or (0,))[0] == 0:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"ws_load stored no run; its output:\n{self.output()}")
                time.sleep(0.2)

    def finish(self, timeout: float = 900.0) -> int:
        return self.process.wait(timeout=timeout)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def prepare_postgres(runs: int) -> str:
    import psycopg

    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + PG_DATABASE
    ensure_postgres_database(url)
    migrate(url)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "TRUNCATE enrichment_attempt, enrichment_urldecision, enrichment_run,"
            " enrichment_retentionpass"
        )
        connection.execute(SEED_SQL.replace("{runs}", str(int(runs))))
        connection.execute("VACUUM ANALYZE enrichment_run")
        connection.execute("VACUUM ANALYZE enrichment_urldecision")
        connection.execute("VACUUM ANALYZE enrichment_attempt")
    print(
        f"seeded {runs:,} runs (+1 URL decision, +1 attempt each) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return url


def prepare_partitioned(runs: int) -> str:
    """A new database, partitioned by month from three months back; ``runs`` runs in that
    month (expired under a 30-day policy whatever today is)."""
    import psycopg

    from enrichment.pipeline.retention.partitions import add_months, month_start

    admin = PG_ADMIN_URL
    url = admin.rsplit("/", 1)[0] + "/" + PG_PARTITIONED_DATABASE
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{PG_PARTITIONED_DATABASE}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{PG_PARTITIONED_DATABASE}"')
    migrate(url)
    month = add_months(month_start(datetime.now(UTC)), -3)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "partition_runs", f"--first-month={month:%Y-%m}"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"partitioned by month from {month:%Y-%m} in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    seconds = (add_months(month, 1) - month).total_seconds()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            MONTH_SEED_SQL.format(
                month=f"'{month.isoformat()}'", step=seconds / (runs + 1), runs=int(runs)
            )
        )
        for table in ("enrichment_run", "enrichment_urldecision", "enrichment_attempt"):
            connection.execute(f"VACUUM ANALYZE {table}")
    print(
        f"seeded {runs:,} runs of {month:%Y-%m} (+1 URL decision, +1 attempt each) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return url


def prepare_sqlite(runs: int) -> str:
    import sqlite3

    path = Path(tempfile.mkdtemp(prefix="prune-smoke-")) / "prune.sqlite3"
    url = f"sqlite:///{path}"
    migrate(url)
    started = time.perf_counter()
    with sqlite3.connect(path) as connection:
        connection.executemany(
            "INSERT INTO enrichment_run (created_at, message_id, channel, chat_type,"
            " session_key, agent_id, original_body, enriched_body, outcome, error, url_count,"
            " config_snapshot, media, owner, stage_records, job, trace_id)"
            " VALUES (datetime('now', '-60 days'), '', 'slack', 'direct', 's', '', 'b', '',"
            " 'success', '', 0, '{}', '[]', '', '{}', '', '')",
            [()] * runs,
        )
    print(f"seeded {runs:,} runs in {time.perf_counter() - started:.2f} s")
    return url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument(
        "--lock-timeout-ms",
        type=int,
        default=LOCK_TIMEOUT_MS,
        help="the writer's lock_timeout: an insert waiting longer for a lock gives up",
    )
    parser.add_argument(
        "--partitioned",
        action="store_true",
        help="the log in monthly partitions: the seeded runs are one month, dropped whole",
    )
    parser.add_argument(
        "--ws-load",
        action="store_true",
        help="bench/ws_load.py writes runs into the database while the pass runs",
    )
    parser.add_argument("--ws-clients", type=int, default=20)
    parser.add_argument("--ws-messages", type=int, default=50, help="messages per socket")
    parser.add_argument("--smoke", action="store_true", help="300 runs, SQLite, no writer")
    args = parser.parse_args(argv)
    if args.smoke and args.ws_load:
        parser.error("--ws-load needs PostgreSQL (not --smoke)")
    if args.smoke:
        print("smoke run (tiny sizes, SQLite): the figures below are not measurements")
        url = prepare_sqlite(300)
    elif args.partitioned:
        url = prepare_partitioned(args.runs)
    else:
        url = prepare_postgres(args.runs)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")
    import django

    django.setup()
    from enrichment.models import Run
    from enrichment.pipeline.retention.policy import RetentionPolicy
    from enrichment.services.retention import retention_pass

    due = Run.objects.count()
    load = WsLoad.start(url, args.ws_clients, args.ws_messages) if args.ws_load else None
    if load:
        load.writing(url)
        time.sleep(1)  # well under way: daphne, its sockets and the database all busy
    writer = None if args.smoke else Writer(url, args.lock_timeout_ms)
    thread = threading.Thread(target=writer.run, daemon=True) if writer else None
    if thread:
        thread.start()
        time.sleep(0.3)
    started, pass_from = time.perf_counter(), datetime.now(UTC)
    report = retention_pass(policy=RetentionPolicy(days=30), batch_size=args.batch_size)
    elapsed, pass_to = time.perf_counter() - started, datetime.now(UTC)
    if writer and thread:
        time.sleep(0.3)
        writer.stop.set()
        thread.join()
    print(
        f"prune: removed {report.removed:,} of {due:,} runs in {elapsed:.2f} s "
        f"({report.removed / elapsed:,.0f} runs/s, batches of {args.batch_size})"
        + (
            f"; months dropped whole: {', '.join(report.dropped_months)}"
            if args.partitioned
            else ""
        )
    )
    if writer:
        latencies = sorted(writer.latencies_ms)
        p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else 0.0
        print(
            f"concurrent writer: {len(latencies):,} inserts meanwhile, median "
            f"{statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, slowest "
            f"{latencies[-1]:.1f} ms (locks, CPU and commit I/O together); gave up waiting "
            f"for a lock ({writer.lock_timeout_ms} ms lock_timeout): {writer.lock_timeouts}"
        )
        ok = writer.lock_timeouts == 0
        print(
            f"target (no insert waits over {writer.lock_timeout_ms} ms for a lock): "
            f"{'met' if ok else 'MISSED'}"
        )
    if load:
        ws_load_report(load, url, pass_from, pass_to)


def ws_load_report(load: WsLoad, url: str, pass_from: datetime, pass_to: datetime) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        during = (connection.execute(BENCH_RUNS_BETWEEN, (pass_from, pass_to)).fetchone())[0]
    ended_early = load.process.poll() is not None
    print(f"ws_load: {during} runs stored during the pass ({pass_to - pass_from})")
    code = load.finish()
    summary = [
        line
        for line in load.output().splitlines()
        if line.startswith(("mode:", "messages sent:", "latency:", "result frames:", "lost", "dup"))
    ]
    print("ws_load's own summary (its whole run):")
    for line in summary:
        print("  " + line)
    if ended_early:
        raise SystemExit("ws_load ended before the pass did: raise --ws-messages")
    if code != 0:
        raise SystemExit(f"ws_load failed (exit {code}); its output:\n{load.output()[-3000:]}")


if __name__ == "__main__":
    main()
