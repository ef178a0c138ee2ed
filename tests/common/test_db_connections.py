"""PostgreSQL connections stay bounded under a real daphne hammered by concurrent clients.

Needs a PostgreSQL server: the one ``DATABASE_URL`` points at when it is a postgres URL (CI's
second run), else ``postgres://postgres@127.0.0.1:5432/postgres`` when it answers. The test
creates a database of its own, so ``pg_stat_activity`` counts only this daphne's sessions.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from tests.live import LiveServer, free_port, live_server

psycopg = pytest.importorskip("psycopg")

POOL_MAX_SIZE = 4


def _server_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        url = "postgres://postgres@127.0.0.1:5432/postgres"
    return url


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


@pytest.fixture
def database() -> Iterator[tuple[str, str]]:
    """(URL of a fresh database, its name); dropped afterwards."""
    admin_url = _with_database(_server_url(), "postgres")
    try:
        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=2)
    except psycopg.OperationalError as error:
        if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
            pytest.fail(f"PostgreSQL of DATABASE_URL does not answer: {error}")
        pytest.skip(f"PostgreSQL does not answer: {error}")
    name = f"controlui_conns_{os.getpid()}_{free_port()}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield _with_database(_server_url(), name), name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class ConnectionSampler:
    """Counts this database's sessions in pg_stat_activity every 20 ms in a thread."""

    def __init__(self, admin_url: str, name: str) -> None:
        self.samples: list[int] = []
        self._admin_url = admin_url
        self._name = name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def count(self) -> int:
        with psycopg.connect(self._admin_url, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self._name,)
            ).fetchone()
        assert row is not None
        return int(row[0])

    def _run(self) -> None:
        with psycopg.connect(self._admin_url, autocommit=True) as admin:
            while not self._stop.is_set():
                row = admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self._name,)
                ).fetchone()
                assert row is not None
                self.samples.append(int(row[0]))
                time.sleep(0.02)

    def __enter__(self) -> ConnectionSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def api_token(server: LiveServer) -> str:
    output = server.manage("create_api_token", "live-admin", "--name", "hammer").stdout
    return output.strip().splitlines()[-1]


async def hammer(base_url: str, token: str) -> list[int]:
    """150 concurrent health checks, then 16 clients × 60 decision-list requests."""
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:
        health = await asyncio.gather(*(client.get("/api/health") for _ in range(150)))
        headers = {"Authorization": f"Bearer {token}"}

        async def one_client() -> list[int]:
            codes = []
            for _ in range(60):
                response = await client.get("/api/decisions?limit=20", headers=headers)
                codes.append(response.status_code)
            return codes

        lists = await asyncio.gather(*(one_client() for _ in range(16)))
    return [response.status_code for response in health] + [c for codes in lists for c in codes]


@pytest.mark.slow
def test_connections_stay_within_the_pool_under_concurrent_load(
    tmp_path: Path, database: tuple[str, str]
) -> None:
    url, name = database
    admin_url = _with_database(url, "postgres")
    # Without Redis: no enrichment worker holds sessions of its own (the pool is per process,
    # and the sessions counted here must be daphne's alone), and the health check does not
    # answer 503 for want of workers.
    extra = {"DATABASE_URL": url, "DATABASE_POOL_MAX_SIZE": str(POOL_MAX_SIZE), "REDIS_URL": ""}
    with live_server(tmp_path, extra, workers=0) as server:
        token = api_token(server)
        sampler = ConnectionSampler(admin_url, name)
        with sampler:
            codes = asyncio.run(hammer(server.base_url, token))
        after = sampler.count()

    assert len(codes) == 150 + 16 * 60
    assert set(codes) == {200}, {code: codes.count(code) for code in set(codes)}
    assert len(sampler.samples) > 10
    # The pool's cap holds however many requests run at once; without it 150 concurrent
    # requests opened up to 150 sessions (PostgreSQL's default max_connections is 100).
    assert max(sampler.samples) <= POOL_MAX_SIZE, sampler.samples
    assert after <= POOL_MAX_SIZE
