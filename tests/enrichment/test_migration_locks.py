"""Deploys without locks: the migration plan, run against a PostgreSQL database holding runs
while another session keeps inserting runs with a short ``lock_timeout``, never makes an
insert wait that long (README "Upgrading").

Each step migrates in a real ``manage.py migrate`` process on a private database of the
server in DATABASE_URL. 0009 is the one known exception (it adds a stored generated column,
which rewrites the table): it runs without the writer, and the README says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.enrichment.lock_probe import LockProbe

ROOT = Path(__file__).resolve().parents[2]
SERVER_URL = os.environ.get("DATABASE_URL", "")
SEEDED_RUNS = 60_000

pytestmark = pytest.mark.skipif(
    not SERVER_URL.startswith("postgres"), reason="needs PostgreSQL (DATABASE_URL)"
)

# Steps of the plan (migrate enrichment <target>), and whether inserts must go on meanwhile.
PLAN = [
    ("0007_history_lookup_indexes", True),
    ("0008_history_sorts_saved_views", True),
    ("0009_run_body_full_text", False),  # ADD COLUMN … GENERATED ALWAYS … STORED: a rewrite
    ("0010_history_channel_ignores_case", True),
    ("0011_history_covering_indexes", True),
    (None, True),  # every later migration, of every app
]

SEED = (
    "INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,"
    " agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,"
    " media, owner, stage_records, job, duration_ms)"
    " SELECT now() - make_interval(secs => n), 'm' || n, 'Chan' || (n %% 7), 'direct',"
    " 'agent:main:' || (n %% 100), '', 'see https://example.com/' || n || ' about sourdough',"
    " '', (ARRAY['success','error','no-links'])[1 + n %% 3], '', 1 + n %% 3, '{}',"
    " CASE WHEN n %% 50 = 0 THEN '[{\"kind\": \"image\"}]'::jsonb ELSE '[]'::jsonb END,"
    " '', '{}', '', n %% 5000"
    " FROM generate_series(1, %s) AS n"
)


def _database_url(name: str) -> str:
    parts = urlsplit(SERVER_URL)
    return urlunsplit(parts._replace(path="/" + name))


@pytest.fixture
def private_database() -> Iterator[str]:
    name = f"migration_locks_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(SERVER_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url(name)
    finally:
        with psycopg.connect(SERVER_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrate(database_url: str, *target: str) -> None:
    environment = {**os.environ, "DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0", *target],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def hold_share_lock(database_url: str, seconds: float) -> None:
    """What a plain CREATE INDEX does to writers: a SHARE lock on the table for the build."""
    with psycopg.connect(database_url) as connection:
        connection.execute("LOCK TABLE enrichment_run IN SHARE MODE")
        connection.execute("SELECT pg_sleep(%s)", [seconds])


def test_the_migration_plan_never_blocks_inserts_for_long(private_database: str) -> None:
    migrate(private_database, "enrichment", "0006_config_versions")
    with psycopg.connect(private_database, autocommit=True) as connection:
        connection.execute(SEED, [SEEDED_RUNS])
        connection.execute("ANALYZE enrichment_run")
    for target, writes_go_on in PLAN:
        args = ("enrichment", target) if target else ()
        if not writes_go_on:
            migrate(private_database, *args)
            continue
        with LockProbe(private_database, lock_timeout_ms=200) as probe:
            migrate(private_database, *args)
        step = target or "the latest migrations"
        assert probe.blocked == [], f"{step} blocked inserts: {probe.blocked[:3]}"
        assert probe.errors == [], f"{step}: {probe.errors[:3]}"
        assert probe.inserted > 0, f"no insert went through while {step} ran"
    with psycopg.connect(private_database) as connection:
        invalid = connection.execute(
            "SELECT count(*) FROM pg_index WHERE NOT indisvalid"
        ).fetchone()
        assert invalid == (0,)
        indexes = {
            name
            for (name,) in connection.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'enrichment_run'"
            )
        }
    assert {"run_history", "run_body_search", "run_channel_upper_history"} <= indexes


def test_the_probe_sees_a_blocking_index_build(private_database: str) -> None:
    """The harness can fail: a SHARE lock held for a second (a plain CREATE INDEX on a big
    table) makes the writer give up."""
    migrate(private_database, "enrichment", "0011_history_covering_indexes")
    with LockProbe(private_database, lock_timeout_ms=200) as probe:
        hold_share_lock(private_database, 1.0)
    assert probe.blocked, "the writer never waited for the SHARE lock"
    assert "lock timeout" in probe.blocked[0]


def test_a_rerun_after_a_failed_concurrent_build_rebuilds_the_invalid_index(
    private_database: str,
) -> None:
    """CREATE INDEX CONCURRENTLY that fails leaves an INVALID index under the name; the
    migration, run again, drops and builds it instead of stopping at "already exists"."""
    migrate(private_database, "enrichment", "0010_history_channel_ignores_case")
    with psycopg.connect(private_database, autocommit=True) as connection:
        connection.execute(SEED, [200])
        # An index the build could not finish: a unique index over duplicate values.
        with pytest.raises(psycopg.errors.UniqueViolation):
            connection.execute(
                "CREATE UNIQUE INDEX CONCURRENTLY run_media_history ON enrichment_run (agent_id)"
            )
    migrate(private_database, "enrichment", "0011_history_covering_indexes")
    with psycopg.connect(private_database) as connection:
        row = connection.execute(
            "SELECT indisvalid, pg_get_indexdef(indexrelid) FROM pg_index"
            " WHERE indexrelid = 'run_media_history'::regclass"
        ).fetchone()
    assert row is not None and row[0] is True
    assert "(created_at DESC, id DESC)" in row[1] and "media = '[]'::jsonb" in row[1]
