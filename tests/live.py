"""A real daphne process on 127.0.0.1 for tests where the wiring matters.

It runs against its own SQLite file (and the real Redis when ``REDIS_URL`` is set), so it
shares nothing with the pytest-django test database. A benchmark may pass a
``database_url`` of its own instead (PostgreSQL, as a deployment with several workers would
use): that database is migrated and emptied (``manage.py flush``) first.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
DAPHNE = Path(sys.executable).with_name("daphne")
# As in the Makefile: above the consumers' own frame limits.
DAPHNE_LIMITS = (
    "--websocket-max-message-size",
    "33554432",
    "--websocket-max-frame-size",
    "33554432",
)

CREATE_USERS = """
from django.contrib.auth import get_user_model
User = get_user_model()
if not User.objects.filter(username="live-admin").exists():  # a kept database has them
    User.objects.create_superuser("live-admin", "a@example.invalid", "live-admin-pass-123")
if not User.objects.filter(username="live-user").exists():
    User.objects.create_user("live-user", "u@example.invalid", "live-user-pass-123")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    base_url: str
    env: dict[str, str]
    workdir: Path
    daphne_pid: int = 0
    extra_processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http://", "ws://")

    def manage(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:  # the command's own words, not only its exit status
            raise AssertionError(
                f"manage.py {args[0]} exited {done.returncode}:\n{done.stderr[-3000:]}"
            )
        return done

    def login_cookies(
        self, username: str = "live-admin", password: str = "live-admin-pass-123"
    ) -> dict[str, str]:
        with httpx.Client(base_url=self.base_url, follow_redirects=False) as client:
            client.get("/login/")
            csrf = client.cookies["csrftoken"]
            response = client.post(
                "/login/",
                data={"username": username, "password": password, "csrfmiddlewaretoken": csrf},
                headers={"Referer": self.base_url + "/login/"},
            )
            assert response.status_code == 302, response.text[:500]
            return dict(client.cookies)

    def cookie_header(self, **kwargs: str) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.login_cookies(**kwargs).items())

    def spawn(
        self, args: Sequence[str], extra_env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"process-{len(self.extra_processes)}.log").open("wb")
        # A file, not a pipe: nobody reads a pipe until a test fails, and a full one blocks.
        process = subprocess.Popen(
            list(args),
            cwd=ROOT,
            env={**self.env, **(extra_env or {})},
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        self.extra_processes.append(process)
        return process


def live_environment(
    workdir: Path, extra: dict[str, str] | None = None, *, database_url: str | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="controlui.settings",
        DATABASE_URL=database_url or f"sqlite:///{workdir / 'live.sqlite3'}",
        CONTROLUI_VAR_DIR=str(workdir / "var"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra or {})
    return env


@contextmanager
def live_server(
    workdir: Path,
    extra_env: dict[str, str] | None = None,
    *,
    workers: int | None = None,
    database_url: str | None = None,
    keep_database: bool = False,
    daphne_args: Sequence[str] = (),
) -> Iterator[LiveServer]:
    """A migrated daphne with two users; with ``REDIS_URL`` set it also runs ``workers``
    ``runworker enrichment`` processes (default one; pass 0 to start your own).
    ``database_url`` replaces the SQLite file of ``workdir``; that database is emptied unless
    ``keep_database`` (another process's data stays: a bench writing beside it).
    ``daphne_args`` go to daphne's command line (``--ping-interval 1``...)."""
    port = free_port()
    env = live_environment(workdir, extra_env, database_url=database_url)
    server = LiveServer(base_url=f"http://127.0.0.1:{port}", env=env, workdir=workdir)
    server.manage("migrate", "--noinput")
    if database_url and not keep_database:  # left over from an earlier run: start empty
        server.manage("flush", "--noinput")
    server.manage("shell", "-c", CREATE_USERS)
    if env.get("DEBUG") == "0":  # as in production: static files collected, with a manifest
        server.manage("collectstatic", "--noinput", "-v0")
    if env.get("REDIS_URL"):
        # With Redis, /ws/enrich/ hands jobs to workers, as in a deployment; each server gets
        # channels of its own (the servers of parallel test processes share one Redis).
        env["CHANNEL_LAYER_PREFIX"] = f"live{port}"  # its own channels and job queue
    daphne_log = workdir / "daphne.log"
    daphne = subprocess.Popen(
        [
            str(DAPHNE),
            *DAPHNE_LIMITS,
            *daphne_args,
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "controlui.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=daphne_log.open("wb"),
    )
    server.daphne_pid = daphne.pid
    try:
        if env.get("REDIS_URL"):
            for _ in range(1 if workers is None else workers):
                server.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
        # Up means answering; with workers started, also their first heartbeat (health says
        # "degraded" until a worker is live, and a test would see that as a fault).
        expect_workers = bool(env.get("REDIS_URL")) and workers != 0
        deadline = time.monotonic() + (60 if expect_workers else 30)
        while True:
            try:
                health = httpx.get(server.base_url + "/api/health", timeout=2)
                if health.status_code in (200, 503) and (
                    not expect_workers or health.json() == {"status": "ok"}
                ):
                    break
            except httpx.HTTPError:
                pass
            if daphne.poll() is not None or time.monotonic() > deadline:
                stderr = daphne_log.read_text(errors="replace")
                raise RuntimeError(
                    f"daphne did not start{' or no worker became live' if expect_workers else ''}: "
                    f"{stderr[-2000:]}"
                )
            time.sleep(0.2)
        yield server
    finally:
        for process in [daphne, *server.extra_processes]:
            process.terminate()
        for process in [daphne, *server.extra_processes]:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
