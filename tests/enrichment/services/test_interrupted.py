"""Crash recovery: runs left ``running`` by a process that died become ``interrupted``."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from enrichment.models import Run
from enrichment.services.interrupted import (
    STALE_RUN_AGE,
    recover_interrupted_runs,
    runs_mark_interrupted,
)

HOST = socket.gethostname()


def dead_pid() -> int:
    """The pid of a process that has just exited (and was reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.terminate()
    process.wait(timeout=10)


def running_run(owner: str, age: timedelta = timedelta(0)) -> Run:
    return Run.objects.create(
        owner=owner, original_body="hi", created_at=timezone.now() - age, outcome="running"
    )


@pytest.mark.django_db
def test_run_of_dead_process_on_this_host_is_interrupted(live_process) -> None:
    dead = running_run(f"{HOST}:{dead_pid()}")
    alive = running_run(f"{HOST}:{live_process.pid}")
    finished = Run.objects.create(owner=f"{HOST}:{dead_pid()}", outcome="success")

    assert runs_mark_interrupted() == 1

    dead.refresh_from_db()
    assert dead.outcome == "interrupted"
    assert dead.error == "the process running it stopped before it finished"
    assert dead.finished_at is not None
    alive.refresh_from_db()
    assert alive.outcome == "running" and alive.finished_at is None
    finished.refresh_from_db()
    assert finished.outcome == "success"
    # Idempotent: nothing left to mark.
    assert runs_mark_interrupted() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("owner", "age", "interrupted"),
    [
        ("other-host:1", timedelta(minutes=5), False),
        ("other-host:1", STALE_RUN_AGE + timedelta(minutes=1), True),
        ("", timedelta(minutes=5), False),
        ("", STALE_RUN_AGE + timedelta(seconds=5), True),
        (f"{HOST}:not-a-pid", timedelta(0), True),
        (f"{HOST}:{os.getpid()}", timedelta(0), True),  # our own pid: we are just starting
    ],
    ids=[
        "other-host-young",
        "other-host-old",
        "no-owner-young",
        "no-owner-old",
        "garbled-pid",
        "own-pid-reused",
    ],
)
def test_which_running_runs_are_abandoned(owner, age, interrupted) -> None:
    run = running_run(owner, age)
    runs_mark_interrupted()
    run.refresh_from_db()
    assert run.outcome == ("interrupted" if interrupted else "running")


@pytest.mark.django_db
def test_old_run_of_live_process_is_interrupted(live_process) -> None:
    run = running_run(f"{HOST}:{live_process.pid}", STALE_RUN_AGE + timedelta(minutes=1))
    assert runs_mark_interrupted() == 1
    run.refresh_from_db()
    assert run.outcome == "interrupted"


@pytest.mark.django_db(transaction=True)
def test_runs_closed_at_start_up_are_counted_into_their_problem() -> None:
    from enrichment.models import Problem

    for _ in range(2):
        running_run(f"{HOST}:{dead_pid()}")
    recover_interrupted_runs()
    problem = Problem.objects.get()
    assert (problem.kind, problem.count) == ("run-interrupted", 2)
    assert problem.subject == "the process running it stopped before it finished"


def test_start_up_hook_only_warns_when_the_database_is_unavailable(caplog) -> None:
    # No django_db mark: database access raises, and start-up must carry on regardless.
    with caplog.at_level(logging.WARNING, logger="enrichment.services.interrupted"):
        recover_interrupted_runs()
    assert "could not check for interrupted runs" in caplog.text


SHELL_CREATE = """
from enrichment.models import Run
for owner in {owners!r}:
    print("RUN", Run.objects.create(owner=owner, original_body="x").pk)
"""
SHELL_OUTCOMES = """
from enrichment.models import Run
for run in Run.objects.filter(pk__in={ids!r}).order_by("pk"):
    print("RUN", run.outcome)
Run.objects.filter(pk__in={ids!r}).delete()
"""


@pytest.mark.slow
def test_daphne_start_up_marks_abandoned_runs(live, live_process) -> None:
    from tests.live import DAPHNE, ROOT, free_port

    owners = [f"{HOST}:{dead_pid()}", f"{HOST}:{live_process.pid}"]
    created = live.manage("shell", "-c", SHELL_CREATE.format(owners=owners)).stdout
    ids = [int(line.split()[1]) for line in created.splitlines() if line.startswith("RUN ")]
    port = free_port()
    # A second daphne on the same database: its start-up does the recovery.
    daphne = subprocess.Popen(
        [str(DAPHNE), "-b", "127.0.0.1", "-p", str(port), "controlui.asgi:application"],
        cwd=ROOT,
        env=live.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail("second daphne did not start")
    finally:
        daphne.terminate()
        daphne.wait(timeout=10)
    outcomes = live.manage("shell", "-c", SHELL_OUTCOMES.format(ids=ids)).stdout
    assert [line.split()[1] for line in outcomes.splitlines() if line.startswith("RUN ")] == [
        "interrupted",
        "running",
    ]
