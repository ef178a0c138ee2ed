"""Decision-log history benchmark. Run: .venv/bin/python bench/history.py [--backend both]

Seeds a decision log of ``--runs`` runs (default 1,000,000; each with 1-3 URL decisions of
1-2 attempts, spread over 30 days, channels slack/discord/telegram/webchat, every outcome)
into a SQLite file (``var/bench/history.sqlite3``) and/or a PostgreSQL database
(``controlui_bench`` on 127.0.0.1), then times the history reads in-process with Django's
test ``Client`` (server time: URL routing, middleware incl. the session lookup, queries,
serialisation or template rendering; no network).

Seeding bypasses the ORM: migrations run first (``manage.py migrate`` in a subprocess with
``DATABASE_URL`` set), then secondary indexes are dropped, rows are bulk-loaded (COPY on
PostgreSQL, ``executemany`` on SQLite) and the indexes are rebuilt — all in one transaction,
so an interrupted seed leaves the previous state. A database already holding exactly
``--runs`` runs is reused unless ``--reseed`` is given.

Scenarios include the text filters: full-text words (common, two words, a rare ``ref-NNNNNN``,
an absent one, a rare one with a channel), URL fragments (a host, a rare path, a host and a
path, three characters) and the refused 1-2 character fragments (their 422 is timed too),
and on the history page the derived statuses. The page's count and facets have a time budget
(``HISTORY_COUNTS_BUDGET_MS``): past it the page is served without them, which is counted
in the timings like any other answer.

The problems reads (``/problems/``, a problem, ``/api/problems``) run over 2,000 synthetic
problems with a week of trend each and 100 runs of the log each (50 and 5 in ``--smoke``),
added with the ORM the first time a database is measured.

With a word or URL fragment the history page is served with its rows only, and its count,
facets and duration chart come from ``/decisions/counts/`` with the same query, which the
page fetches once shown: each such scenario is timed both ways ("… +counts": the second
request, whose wait the reader sees as the counts filling in, not as a blank page).

Targets (PostgreSQL): p95 <= 50 ms for the API reads, p95 <= 80 ms for the HTML pages,
p95 <= 500 ms for a page's counts read after it. SQLite figures are printed for comparison
with the same targets beside them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import ensure_postgres_database, migrate  # noqa: E402
from enrichment.pipeline.links.derived import derived_status  # noqa: E402

SQLITE_PATH = ROOT / "var" / "bench" / "history.sqlite3"
PG_DATABASE = "controlui_bench"
API_TARGET_MS = 50.0
HTML_TARGET_MS = 80.0
COUNTS_TARGET_MS = 500.0
TARGETS = {"api": API_TARGET_MS, "html": HTML_TARGET_MS, "counts": COUNTS_TARGET_MS}
CHUNK_RUNS = 20_000
SCENARIO_BUDGET_S = 30.0
SPAN = timedelta(days=30)
START = datetime(2026, 10, 1, tzinfo=UTC)
PG_PARTITIONED_DATABASE = "controlui_bench_part"
SEED = 20261122

CHANNELS = ("slack", "discord", "telegram", "webchat")
CHANNEL_WEIGHTS = (40, 25, 20, 15)
AGENTS = ("main", "support", "ops", "research", "sales")
CHAT_TYPES = ("direct", "group", "channel")
OUTCOMES = (
    "success",
    "no-links",
    "scope-deny",
    "error",
    "skipped",
    "disabled",
    "interrupted",
    "running",
)
OUTCOME_WEIGHTS = (55, 18, 8, 8, 5, 4, 1.5, 0.5)
HOSTS = (
    "docs.example.com",
    "github.example.org",
    "news.example.net",
    "en.wikipedia.example",
    "api.example.io",
    "blog.example.com",
    "status.example.dev",
    "shop.example.co.uk",
)
_WORDS_TEXT = (
    "the gateway reads each message and may fetch a page before agent answers we should deploy "
    "tomorrow after review can you check why build failed on main looks like flaky test again "
    "thanks I think config needs new timeout value please see logs attached it works for me "
    "locally but not in staging let us discuss in standup invoice customer refund shipping "
    "latency dashboard outage incident rollback migration postgres redis cache quota billing "
    "onboarding release notes roadmap feature flag experiment metrics alert pager rotation"
)
WORDS = tuple(_WORDS_TEXT.split())
PRIVATE_ADDRESS = "blocked: resolves to private address 10.0.0.7"

RUN_COLUMNS = (
    "id",
    "created_at",
    "finished_at",
    "message_id",
    "channel",
    "chat_type",
    "session_key",
    "agent_id",
    "original_body",
    "enriched_body",
    "outcome",
    "error",
    "matched_rule",
    "duration_ms",
    "url_count",
    "config_snapshot",
    "media",
    "owner",
    "config_version",
    "stage_records",
    "job",
    "redacted_at",
    "trace_id",
    "attempts_failed",
    "fallback_used",
    "dns_failed",
)
URL_COLUMNS = (
    "id",
    "run_id",
    "position",
    "url",
    "blocked",
    "reason",
    "addresses",
    "chosen_position",
    "summary",
    "run_created_at",
    "run_duration_ms",
)
ATTEMPT_COLUMNS = (
    "id",
    "url_decision_id",
    "position",
    "type",
    "command",
    "argv",
    "outcome",
    "reason",
    "exit_code",
    "duration_ms",
    "stdout_bytes",
    "stderr_tail",
    "run_created_at",
)
TABLES = {
    "enrichment_run": RUN_COLUMNS,
    "enrichment_urldecision": URL_COLUMNS,
    "enrichment_attempt": ATTEMPT_COLUMNS,
}
SNAPSHOT = json.dumps(
    {
        "tools": {
            "links": {
                "models": [
                    {
                        "type": "cli",
                        "command": "link-understand",
                        "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
                    }
                ]
            }
        }
    }
)


# --- Synthetic decision log ----------------------------------------------------------------


@dataclass
class Chunk:
    runs: list[tuple[Any, ...]]
    urls: list[tuple[Any, ...]]
    attempts: list[tuple[Any, ...]]


ATTEMPT_COMMAND, ATTEMPT_OUTCOME = (
    ATTEMPT_COLUMNS.index("command"),
    ATTEMPT_COLUMNS.index("outcome"),
)
URL_BLOCKED, URL_REASON = URL_COLUMNS.index("blocked"), URL_COLUMNS.index("reason")


class LogGenerator:
    """Deterministic rows in table-column order; ids ascend with (roughly) created_at."""

    def __init__(self, total: int, *, for_sqlite: bool, span: timedelta = SPAN) -> None:
        self.total = total
        self.for_sqlite = for_sqlite
        self.rng = random.Random(SEED)
        self.start = START
        self.step = span.total_seconds() / total
        self.url_id = 0
        self.attempt_id = 0
        self.chats = {
            channel: [f"{channel[:2]}{self.rng.randrange(10**6, 10**7)}" for _ in range(3000)]
            for channel in CHANNELS
        }

    def stamp(self, value: datetime) -> Any:
        # Django's SQLite adapter stores UTC datetimes as str(naive value).
        return str(value.replace(tzinfo=None)) if self.for_sqlite else value

    def flag(self, value: bool) -> Any:
        return int(value) if self.for_sqlite else value

    def text(self, words: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=words))

    def chunks(self) -> Iterator[Chunk]:
        for first in range(1, self.total + 1, CHUNK_RUNS):
            chunk = Chunk([], [], [])
            for run_id in range(first, min(first + CHUNK_RUNS, self.total + 1)):
                self.add_run(chunk, run_id)
            yield chunk

    def add_run(self, chunk: Chunk, run_id: int) -> None:
        rng = self.rng
        created = self.start + timedelta(seconds=(run_id + rng.uniform(-2, 2)) * self.step)
        channel = rng.choices(CHANNELS, CHANNEL_WEIGHTS)[0]
        agent = rng.choice(AGENTS)
        chat = rng.choice(self.chats[channel])
        outcome = rng.choices(OUTCOMES, OUTCOME_WEIGHTS)[0]
        url_total = rng.choices((1, 2, 3), (60, 30, 10))[0]
        urls = [
            f"https://{rng.choice(HOSTS)}/{rng.choice(WORDS)}/{rng.randrange(10**6)}"
            for _ in range(url_total)
        ]
        body = f"{self.text(14)} {' '.join(urls)} {self.text(10)} ref-{rng.randrange(10**6)}"
        first_url, first_attempt = len(chunk.urls), len(chunk.attempts)
        summaries = [
            self.add_url(chunk, run_id, created, i, url, outcome) for i, url in enumerate(urls)
        ]
        status = derived_status(  # as the product stores it (services.runs.runs_finish)
            [(a[ATTEMPT_COMMAND], a[ATTEMPT_OUTCOME]) for a in chunk.attempts[first_attempt:]],
            [u[URL_REASON] for u in chunk.urls[first_url:] if u[URL_BLOCKED]],
        )
        enriched = ""
        if outcome == "success":
            enriched = body + "".join(
                f"\n\n[{u}]\n{s}" for u, s in zip(urls, summaries, strict=True) if s
            )
        duration = rng.randrange(20, 9000)
        finished = None if outcome == "running" else created + timedelta(milliseconds=duration)
        run_duration = None if outcome == "running" else duration
        # The URL rows carry their run's duration, known once the URLs are drawn.
        chunk.urls[first_url:] = [(*row, run_duration) for row in chunk.urls[first_url:]]
        chunk.runs.append(
            (
                run_id,
                self.stamp(created),
                self.stamp(finished) if finished else None,
                f"msg-{run_id}",
                channel,
                rng.choice(CHAT_TYPES),
                f"agent:{agent}:{channel}:{chat}",
                agent,
                body,
                enriched,
                outcome,
                "link-understand exited 3: upstream broke" if outcome == "error" else "",
                rng.randrange(3) if outcome in ("success", "scope-deny") else None,
                run_duration,
                url_total,
                SNAPSHOT,
                "[]",
                "bench-host:4242",
                1,
                "{}",
                "",
                None,
                "",
                self.flag(status.attempts_failed),
                self.flag(status.fallback_used),
                self.flag(status.dns_failed),
            )
        )

    def add_url(
        self, chunk: Chunk, run_id: int, created: datetime, position: int, url: str, outcome: str
    ) -> str:
        rng = self.rng
        self.url_id += 1
        blocked = rng.random() < 0.05
        # One blocked URL in fifty is a host that did not resolve: a rare derived status.
        reason = (
            ("hostname does not resolve" if rng.random() < 0.02 else PRIVATE_ADDRESS)
            if blocked
            else ""
        )
        attempts = 1 if blocked else rng.choice((1, 1, 1, 2))
        succeeded = outcome == "success" and not blocked
        summary = f"Summary of {url}: {self.text(12)}" if succeeded else ""
        chunk.urls.append(
            (
                self.url_id,
                run_id,
                position,
                url,
                self.flag(blocked),
                reason,
                '["10.0.0.7"]' if blocked else '["93.184.216.34"]',
                attempts - 1 if succeeded else None,
                summary,
                self.stamp(created),
            )
        )
        for index in range(attempts):
            ok = succeeded and index == attempts - 1
            self.add_attempt(chunk, self.url_id, created, index, url, blocked, ok)
        return summary

    def add_attempt(
        self,
        chunk: Chunk,
        url_id: int,
        created: datetime,
        index: int,
        url: str,
        blocked: bool,
        ok: bool,
    ) -> None:
        self.attempt_id += 1
        argv = json.dumps(["link-understand", "--url", url, "--format", "markdown"])
        row: tuple[Any, ...]
        if blocked:
            row = ("ssrf", "[]", "skipped", "blocked: private address", None, 0, 0, "")
        elif ok:
            row = ("link-understand", argv, "success", "", 0, 850, 412, "")
        else:
            row = ("link-understand", argv, "failed", "exit code 3", 3, 120, 0, "upstream broke\n")
        chunk.attempts.append((self.attempt_id, url_id, index, "cli", *row, self.stamp(created)))


# --- Loading -------------------------------------------------------------------------------


def check_columns(actual: dict[str, list[str]]) -> None:
    for table, columns in TABLES.items():
        if set(actual[table]) != set(columns):
            raise SystemExit(f"{table}: schema changed, columns {sorted(actual[table])}")


def seed_sqlite(path: Path, runs: int, reseed: bool, span: timedelta = SPAN) -> None:
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    migrate(f"sqlite:///{path}")
    db = sqlite3.connect(path, isolation_level=None)
    try:
        count = db.execute("SELECT count(*) FROM enrichment_run").fetchone()[0]
        if count == runs and not reseed:
            print(f"sqlite: reusing {path} ({count:,} runs)", flush=True)
            return
        check_columns({t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")] for t in TABLES})
        started = time.perf_counter()
        db.execute("PRAGMA synchronous=OFF")
        db.execute("PRAGMA cache_size=-262144")
        db.execute("BEGIN")
        indexes = db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
            f" AND tbl_name IN ({','.join('?' * len(TABLES))})",
            list(TABLES),
        ).fetchall()
        for name, _ in indexes:
            db.execute(f'DROP INDEX "{name}"')
        for table in reversed(list(TABLES)):
            db.execute(f"DELETE FROM {table}")
        generator = LogGenerator(runs, for_sqlite=True, span=span)
        for chunk in generator.chunks():
            for table, rows in zip(TABLES, (chunk.runs, chunk.urls, chunk.attempts), strict=True):
                columns = TABLES[table]
                db.executemany(
                    f"INSERT INTO {table} ({','.join(columns)})"
                    f" VALUES ({','.join('?' * len(columns))})",
                    rows,
                )
            progress("sqlite", chunk.runs[-1][0], runs, started)
        for _, sql in indexes:
            db.execute(sql)
        db.execute("COMMIT")
        db.execute("ANALYZE")
        print(f"sqlite: seeded {runs:,} runs in {time.perf_counter() - started:.0f} s", flush=True)
    finally:
        db.close()


def pg_url(database: str) -> str:
    return f"postgresql://postgres@127.0.0.1:5432/{database}"


def seed_postgres(
    database: str, runs: int, reseed: bool, *, partitioned: bool = False, span: timedelta = SPAN
) -> None:
    import psycopg

    ensure_postgres_database(pg_url(database))
    migrate(pg_url(database))
    with psycopg.connect(pg_url(database)) as db:
        relkind = db.execute("SELECT relkind FROM pg_class WHERE relname = 'enrichment_run'")
        is_partitioned = relkind.fetchone()[0] == "p"  # type: ignore[index]
    if partitioned and not is_partitioned:
        # monthly partitions from the first seeded month (manage.py partition_runs)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "manage.py", "partition_runs", f"--first-month={START:%Y-%m}"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": pg_url(database)},
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"postgres: partitioned by month in {time.perf_counter() - started:.1f} s")
    elif is_partitioned != partitioned:
        raise SystemExit(
            f"{database} is {'' if is_partitioned else 'not '}partitioned: use --database"
            " to seed another one"
        )
    with psycopg.connect(pg_url(database)) as db:
        count = db.execute("SELECT count(*) FROM enrichment_run").fetchone()[0]  # type: ignore[index]
        if count == runs and not reseed:
            print(f"postgres: reusing {database} ({count:,} runs)", flush=True)
            return
        columns = {
            t: [
                r[0]
                for r in db.execute(
                    # Generated columns (the full-text vector) are computed by PostgreSQL.
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_name = %s AND is_generated = 'NEVER'",
                    [t],
                )
            ]
            for t in TABLES
        }
        check_columns(columns)
        started = time.perf_counter()
        db.execute("SET maintenance_work_mem = '512MB'")
        # Skip per-row FK triggers during the load; the generator keeps references valid.
        db.execute("SET session_replication_role = replica")
        indexes = db.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = ANY(%s)"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)",
            [list(TABLES)],
        ).fetchall()
        for name, _ in indexes:
            db.execute(f'DROP INDEX "{name}"')
        db.execute(f"TRUNCATE {', '.join(TABLES)}")
        generator = LogGenerator(runs, for_sqlite=False, span=span)
        for chunk in generator.chunks():
            for table, rows in zip(TABLES, (chunk.runs, chunk.urls, chunk.attempts), strict=True):
                with db.cursor().copy(
                    f"COPY {table} ({','.join(TABLES[table])}) FROM STDIN"
                ) as copy:
                    for row in rows:
                        copy.write_row(row)
            progress("postgres", chunk.runs[-1][0], runs, started)
        print("postgres: building indexes", flush=True)
        for _, sql in indexes:
            # an index of a partitioned table is built on each partition
            db.execute(sql.replace(" ON ONLY ", " ON ", 1))
        for table in TABLES:
            db.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT max(id) FROM {table}))"
            )
        db.commit()
        db.autocommit = True
        db.execute(f"VACUUM (ANALYZE) {', '.join(TABLES)}")
        print(
            f"postgres: seeded {runs:,} runs in {time.perf_counter() - started:.0f} s", flush=True
        )


def progress(label: str, done: int, total: int, started: float) -> None:
    if done % 100_000 < CHUNK_RUNS or done == total:
        elapsed = time.perf_counter() - started
        print(f"{label}: {done:,}/{total:,} runs loaded ({elapsed:.0f} s)", flush=True)


# --- Measuring (runs in a child process with DATABASE_URL set) ------------------------------


@dataclass(frozen=True)
class Scenario:
    label: str
    kind: str  # "api", "html" or "counts" (a page's counts, read after it)
    paths: Sequence[str]
    status: int = 200  # a refused filter is timed too: its 4xx must be as quick


def measure_main(samples: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")
    django.setup()
    from django.conf import settings

    settings.DEBUG = False  # no query log, as in production
    # the refused fragments are timed 422s on purpose: not a warning each
    logging.getLogger("django.request").setLevel(logging.ERROR)
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    results = []
    scenario_list = with_counts(scenarios(random.Random(SEED)))
    for scenario in [*scenario_list, *problem_scenarios()]:
        if scenario.kind != "api" and not page_works(client, scenario.paths[0]):
            continue
        timings = time_paths(client, scenario.paths, samples, scenario.status)
        results.append(
            {
                "label": scenario.label,
                "kind": scenario.kind,
                "p50": statistics.median(timings),
                "p95": percentile(timings, 95),
                "n": len(timings),
            }
        )
    print("RESULTS " + json.dumps(results), flush=True)


def scenarios(rng: random.Random) -> list[Scenario]:
    from urllib.parse import urlencode

    from django.urls import NoReverseMatch, reverse

    from common.keyset import encode_cursor
    from enrichment.models import Run

    total = Run.objects.count()
    ids = [rng.randrange(1, total + 1) for _ in range(50)]
    combos = [
        urlencode({"channel": c, "outcome": o})
        for c in CHANNELS
        for o in ("success", "error", "no-links")
    ]
    from enrichment.selectors import SORTS

    # A host and a path as a user pastes them: every trigram common, or rare only together
    # with the others of its word ("docs.example.com/deploy/1"). Its own generator, so the
    # other scenarios' fragments stay as they were.
    pasted_rng = random.Random(SEED + 1)
    pasted = [
        f"{pasted_rng.choice(HOSTS)}/{pasted_rng.choice(WORDS)}/{pasted_rng.randrange(1, 10)}"
        for _ in range(10)
    ]

    ordered = Run.objects.only("id", "created_at").history_order()
    # Ten cursors about half-way down (spaced 997 runs apart at full size, closer in a small log).
    step = min(997, max(1, total // 20))
    deep = [encode_cursor(ordered[total // 2 + k * step]) for k in range(10)]
    # Sorted orders: page 1 of each, and cursors ~N/2 deep in the slowest-first order.
    longest = SORTS["-duration"]
    by_duration = longest.sorted(Run.objects.only("id"))
    deep_duration = [longest.encode(by_duration[total // 2 + k * step]) for k in range(10)]
    found = [
        Scenario("API first page", "api", ["/api/decisions"]),
        Scenario(
            "API multi-select + preset",
            "api",
            [
                "/api/decisions?outcome=success,skipped",
                "/api/decisions?channel=slack,telegram&chatType=group,direct",
                "/api/decisions?range=24h&outcome=error,skipped",
                "/api/decisions?range=7d",
            ],
        ),
        Scenario("API channel+outcome", "api", [f"/api/decisions?{q}" for q in combos]),
        Scenario(
            "API deep keyset (~N/2)",
            "api",
            [f"/api/decisions?{urlencode({'cursor': c})}" for c in deep],
        ),
        Scenario("API detail", "api", [f"/api/decisions/{i}" for i in ids]),
        Scenario("API sort (6 orders)", "api", [f"/api/decisions?sort={key}" for key in SORTS]),
        Scenario(
            "API sort outcome+order",
            "api",
            [f"/api/decisions?sort={key}&outcome=error" for key in SORTS],
        ),
        Scenario(
            "API sort deep (~N/2)",
            "api",
            [
                f"/api/decisions?{urlencode({'sort': '-duration', 'cursor': c})}"
                for c in deep_duration
            ],
        ),
        Scenario(
            "API sessionKey prefix",
            "api",
            [f"/api/decisions?sessionKey=agent:{a}:slack:" for a in AGENTS],
        ),
        Scenario("API url substring", "api", [f"/api/decisions?url={h}/" for h in HOSTS]),
        Scenario(
            "API url rare fragment",
            "api",
            [f"/api/decisions?url=/{rng.choice(WORDS)}/{rng.randrange(10**6)}" for _ in range(10)],
        ),
        Scenario("API url host + path", "api", [f"/api/decisions?url={f}" for f in pasted]),
        Scenario(
            "API url 3 chars",
            "api",
            [f"/api/decisions?url={f}" for f in ("doc", "git", "new", "wik", "api", "sho", "123")],
        ),
        Scenario(
            "API url 1-2 chars (422)",
            "api",
            ["/api/decisions?url=a", "/api/decisions?url=/1", "/api/decisions?url=ex"],
            status=422,
        ),
        Scenario("API q (body text)", "api", [f"/api/decisions?q={w}" for w in WORDS[:20]]),
        Scenario(
            "API q two words",
            "api",
            [
                f"/api/decisions?{urlencode({'q': f'{a} {b}'})}"
                for a, b in zip(WORDS[:13], WORDS[7:20], strict=True)
            ],
        ),
        Scenario(
            "API q rare (ref-id)",
            "api",
            [f"/api/decisions?q=ref-{rng.randrange(10**6)}" for _ in range(10)],
        ),
        Scenario(
            "API q absent word",
            "api",
            [f"/api/decisions?q=absent{rng.randrange(10**6)}" for _ in range(10)],
        ),
        Scenario(
            "API q rare + channel",
            "api",
            [
                f"/api/decisions?channel={c}&q=ref-{rng.randrange(10**6)}"
                for c in CHANNELS
                for _ in range(3)
            ],
        ),
    ]
    try:
        history = reverse("decisions")
        details = [detail_path(i) for i in ids]
    except NoReverseMatch:
        print("note: url names 'decisions'/'decision-detail' not found; HTML pages skipped")
        return found
    return [
        *found,
        Scenario("HTML /decisions/", "html", [history]),
        Scenario("HTML channel+outcome", "html", [f"{history}?{q}" for q in combos]),
        Scenario("HTML sorted", "html", [f"{history}?sort={key}" for key in SORTS]),
        Scenario(
            "HTML q rare (ref-id)",
            "html",
            [f"{history}?q=ref-{rng.randrange(10**6)}" for _ in range(10)],
        ),
        Scenario(
            "HTML url rare fragment",
            "html",
            [f"{history}?url=/{rng.choice(WORDS)}/{rng.randrange(10**6)}" for _ in range(10)],
        ),
        Scenario("HTML url substring", "html", [f"{history}?url={h}/" for h in HOSTS]),
        Scenario("HTML url host + path", "html", [f"{history}?url={f}" for f in pasted]),
        Scenario(
            "HTML url host+path longest",
            "html",
            [f"{history}?url={f}&sort=-duration" for f in pasted],
        ),
        Scenario(
            "HTML url 3 chars",
            "html",
            [f"{history}?url={f}" for f in ("doc", "git", "new", "wik", "api", "sho", "123")],
        ),
        Scenario(
            "HTML status (derived)",
            "html",
            [f"{history}?status={status}" for status in ("media", "attempts-failed")],
        ),
        Scenario(
            "HTML statuses any-of",
            "html",
            [
                f"{history}?status=attempts-failed&status=fallback",
                f"{history}?status=fallback&status=dns-failure",
                f"{history}?status=attempts-failed&status=fallback&status=dns-failure",
                f"{history}?status=dns-failure",  # rare: one blocked URL in fifty
                f"{history}?status=media&status=dns-failure&outcome=skipped",
            ],
        ),
        Scenario(
            "HTML multi-select facets",
            "html",
            [
                f"{history}?outcome=success&outcome=skipped",
                f"{history}?outcome=error&outcome=skipped&chatType=group&chatType=direct",
                f"{history}?channel=slack&channel=telegram&outcome=success",
                f"{history}?status=fallback&status=dns-failure",
            ],
        ),
        Scenario(
            "HTML time presets",
            "html",
            [f"{history}?range={key}" for key in ("1h", "24h", "7d", "30d")]
            + [f"{history}?range=24h&outcome=error&outcome=skipped"],
        ),
        Scenario("HTML detail", "html", details),
    ]


def with_counts(listed: list[Scenario]) -> list[Scenario]:
    """``listed`` and, after each HTML page served with its rows only (a text filter), its
    counts' request: the same queries at ``/decisions/counts/`` (what the page's script
    asks for)."""
    found = list(listed)
    for scenario in listed:
        if scenario.kind == "html" and any(name in scenario.paths[0] for name in ("?q=", "?url=")):
            paths = [
                path.replace("/decisions/?", "/decisions/counts/?", 1) for path in scenario.paths
            ]
            found.append(Scenario(f"{scenario.label} +counts", "counts", paths, scenario.status))
    return found


# Problems: many problems (the list pages through them), each with a week of hourly trend and
# runs of the seeded log, so the list, the detail (latest runs, which still exist) and the
# API read what a busy install holds. Problems are few next to runs by nature (they group
# them); the list reads problem rows only, so its time does not depend on the runs.
BENCH_PROBLEMS = 2_000
BENCH_RUNS_PER_PROBLEM = 100


def seed_problems(count: int, runs_per_problem: int) -> None:
    """Synthetic problems over the seeded runs (once per database), with the ORM."""
    from django.db import transaction
    from django.utils import timezone

    from enrichment.models import Problem, ProblemRun, ProblemSession, Run
    from enrichment.pipeline.problems.fingerprint import Failure
    from enrichment.pipeline.problems.trend import hourly_add

    if Problem.objects.exists():
        return
    started = time.perf_counter()
    rng = random.Random(SEED)
    now = timezone.now()
    top = Run.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with transaction.atomic():
        kinds = ("blocked-host", "command-failed", "run-error", "media-failed")
        failures = [Failure(kinds[i % 4], f"bench-{i}.{rng.choice(HOSTS)}") for i in range(count)]
        problems = []
        for index, failure in enumerate(failures):
            hourly: dict[str, int] = {}
            for _ in range(rng.randrange(1, 60)):
                at = now - timedelta(hours=rng.randrange(0, 168))
                hourly = hourly_add(hourly, at=at, now=now, count=rng.randrange(1, 20))
            last = now - timedelta(minutes=index)
            problems.append(
                Problem(
                    fingerprint=failure.fingerprint,
                    kind=failure.kind,
                    subject=failure.subject,
                    title=failure.title,
                    detail="exit code 3",
                    state=rng.choices(("open", "resolved", "ignored"), (70, 20, 10))[0],
                    count=runs_per_problem,
                    first_seen=last - timedelta(days=20),
                    last_seen=last,
                    hourly=hourly,
                    session_count=runs_per_problem,
                    recent_sessions=[f"agent:main:slack:c{n}" for n in range(5)],
                    last_run_id=top,
                )  # fmt: skip
            )
        Problem.objects.bulk_create(problems, batch_size=1000)
        rows, sessions = [], []
        for problem in Problem.objects.only("id"):
            for n in range(runs_per_problem):
                run_id = rng.randrange(1, top + 1)
                rows.append(ProblemRun(problem=problem, run_id=run_id, seen_at=now - timedelta(
                    minutes=n), session_key=f"agent:main:slack:c{n}"))  # fmt: skip
                sessions.append(
                    ProblemSession(problem=problem, session_key=f"agent:main:slack:c{n}")
                )
        ProblemRun.objects.bulk_create(rows, batch_size=5000, ignore_conflicts=True)
        ProblemSession.objects.bulk_create(sessions, batch_size=5000, ignore_conflicts=True)
    print(f"problems: seeded {count:,} problems, {len(rows):,} problem runs in"
          f" {time.perf_counter() - started:.1f} s", flush=True)  # fmt: skip


def problem_scenarios() -> list[Scenario]:
    from django.urls import NoReverseMatch, reverse

    try:
        listing = reverse("problems")
    except NoReverseMatch:
        return []
    from enrichment.models import Problem

    smoke = os.environ.get("BENCH_SMOKE") == "1"
    seed_problems(50 if smoke else BENCH_PROBLEMS, 5 if smoke else BENCH_RUNS_PER_PROBLEM)
    ids = list(Problem.objects.order_by("?").values_list("id", flat=True)[:20])
    pages = [f"{listing}?state=all&page={n}" for n in (1, 2, 10, 40)]
    return [
        Scenario("HTML /problems/", "html", [listing, f"{listing}?state=resolved", *pages]),
        Scenario("HTML /problems/ kind", "html", [f"{listing}?state=all&kind=blocked-host"]),
        Scenario("HTML problem detail", "html", [reverse("problem", args=[i]) for i in ids]),
        Scenario("API problems", "api", ["/api/problems", "/api/problems?state=all&page=7"]),
        Scenario("API problem detail", "api", [f"/api/problems/{i}" for i in ids]),
    ]


def detail_path(run_id: int) -> str:
    from django.urls import NoReverseMatch, reverse

    try:
        return str(reverse("decision-detail", args=[run_id]))
    except NoReverseMatch:
        return str(reverse("decision-detail", kwargs={"run_id": run_id}))


def page_works(client: Any, path: str) -> bool:
    """HTML pages are being built in parallel: skip (and say so) one that does not render yet."""
    try:
        status = int(client.get(path).status_code)
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready", reported below
        print(f"note: GET {path} failed ({type(exc).__name__}: {exc}); skipped", file=sys.stderr)
        return False
    if status != 200:
        print(f"note: GET {path} gave HTTP {status}; skipped", file=sys.stderr)
    return status == 200


def time_paths(client: Any, paths: Sequence[str], samples: int, status: int) -> list[float]:
    for path in paths[:3]:  # warm caches and connections
        check(client.get(path), path, status)
    timings: list[float] = []
    deadline = time.perf_counter() + SCENARIO_BUDGET_S
    for index in range(samples):
        if index >= 20 and time.perf_counter() > deadline:
            break  # a pathological read (e.g. a full scan) must not hold the bench for hours
        path = paths[index % len(paths)]
        started = time.perf_counter()
        response = client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        check(response, path, status)
    return timings


def check(response: Any, path: str, status: int = 200) -> None:
    if response.status_code != status:
        raise SystemExit(
            f"GET {path}: HTTP {response.status_code} (expected {status}):"
            f" {response.content[:300]!r}"
        )


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


# --- Driver --------------------------------------------------------------------------------


def measure(
    backend: str, database_url: str, samples: int, smoke: bool = False
) -> list[dict[str, Any]]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "controlui.settings",
        "BENCH_SMOKE": "1" if smoke else "0",
    }
    output = subprocess.run(
        [sys.executable, __file__, "--measure", "--samples", str(samples)],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in output.stdout.splitlines():
        if line.startswith("RESULTS "):
            return [{**row, "backend": backend} for row in json.loads(line[8:])]
        print(line)
    raise SystemExit(f"{backend}: the measuring process printed no results")


def print_table(rows: list[dict[str, Any]], samples: int) -> None:
    print(f"\nserver time per request in ms (n samples, at most {samples}; 30 s per request kind)")
    header = (
        f"{'backend':9} {'request':32} {'n':>4} {'p50':>8} {'p95':>8} {'target p95':>11}  verdict"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        target = TARGETS[row["kind"]]
        ok = row["p95"] <= target
        verdict = ("ok" if ok else "MISSED") if row["backend"] == "postgres" else "(info)"
        print(
            f"{row['backend']:9} {row['label']:32} {row['n']:4} {row['p50']:8.1f} {row['p95']:8.1f}"
            f" {'<= ' + format(target, '.0f'):>11}  {verdict}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--reseed", action="store_true", help="reload even if the DB is seeded")
    parser.add_argument("--seed-only", action="store_true")
    parser.add_argument("--database", help="PostgreSQL database name")
    parser.add_argument(
        "--partitioned",
        action="store_true",
        help=f"PostgreSQL with the log in monthly partitions (database {PG_PARTITIONED_DATABASE})",
    )
    parser.add_argument(
        "--span-days", type=int, default=SPAN.days, help="days the seeded runs spread over"
    )
    parser.add_argument("--sqlite-path", type=Path, default=SQLITE_PATH)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2,000 runs in a throwaway SQLite file, 2 samples: checks the script runs",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        print("smoke run (tiny sizes): the figures below are not measurements")
        args.backend, args.runs, args.samples = "sqlite", 2_000, 2
        args.sqlite_path = Path(tempfile.mkdtemp(prefix="history-smoke-")) / "history.sqlite3"
        args.reseed = True
    if args.partitioned:
        args.backend = "postgres"
    if args.measure:
        measure_main(args.samples)
        return
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    rows: list[dict[str, Any]] = []
    for backend in backends:
        if backend == "sqlite":
            seed_sqlite(args.sqlite_path, args.runs, args.reseed, timedelta(days=args.span_days))
            url = f"sqlite:///{args.sqlite_path.resolve()}"
        else:
            database = args.database or (
                PG_PARTITIONED_DATABASE if args.partitioned else PG_DATABASE
            )
            seed_postgres(
                database,
                args.runs,
                args.reseed,
                partitioned=args.partitioned,
                span=timedelta(days=args.span_days),
            )
            url = pg_url(database)
        if not args.seed_only:
            rows.extend(measure(backend, url, args.samples, args.smoke))
    if rows:
        print_table(rows, args.samples)
    if args.smoke:
        shutil.rmtree(args.sqlite_path.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
