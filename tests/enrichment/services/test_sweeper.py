"""The periodic sweeper: runs still ``running`` past the job deadline are closed, and
``/api/health`` says so until the deadline has passed again."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from enrichment.models import Run
from enrichment.services import interrupted
from enrichment.services.interrupted import overdue_error, sweep_overdue_runs

pytestmark = pytest.mark.django_db


def running_run(age: timedelta) -> Run:
    # The owner is this very process: the start-up recovery would never close it.
    return Run.objects.create(
        owner="elsewhere:1", original_body="hi", created_at=timezone.now() - age, outcome="running"
    )


def test_sweep_closes_only_the_runs_past_the_deadline(settings) -> None:
    settings.ENRICHMENT_JOB_DEADLINE_SECONDS = 60
    stuck = running_run(timedelta(seconds=61))
    young = running_run(timedelta(seconds=30))

    assert sweep_overdue_runs() == 1

    stuck.refresh_from_db()
    young.refresh_from_db()
    assert stuck.outcome == "interrupted"
    assert stuck.error == overdue_error(60)
    assert stuck.error.startswith("overdue: still running 60 s")
    assert stuck.finished_at is not None
    assert young.outcome == "running"
    assert sweep_overdue_runs() == 0  # a second sweep finds nothing more


def test_health_is_degraded_while_a_run_is_overdue_and_after_it_was_swept(
    user_client, settings
) -> None:
    settings.ENRICHMENT_USE_WORKERS = False
    settings.ENRICHMENT_JOB_DEADLINE_SECONDS = 60
    assert user_client.get("/api/health").json()["status"] == "ok"

    running_run(timedelta(seconds=120))
    response = user_client.get("/api/health")
    body = response.json()
    # Degraded, yet this process serves: a load balancer must not take it out (200).
    assert response.status_code == 200
    assert body["status"] == "degraded"
    assert body["jobs"]["overdue"] == 1
    assert "still running past the 60 s job deadline" in body["jobs"]["detail"]

    sweep_overdue_runs()
    body = user_client.get("/api/health").json()
    assert body["status"] == "degraded"
    assert body["jobs"]["overdue"] == 0
    assert body["jobs"]["lost"] == 1
    assert "closed as overdue" in body["jobs"]["detail"]

    Run.objects.update(finished_at=timezone.now() - timedelta(seconds=61))
    assert user_client.get("/api/health").json()["status"] == "ok"


def test_the_sweeper_thread_sweeps_periodically(settings, monkeypatch) -> None:
    sweeps: list[float] = []
    monkeypatch.setattr(interrupted, "sweep_overdue_runs", lambda: sweeps.append(time.time()))
    monkeypatch.setattr(interrupted, "_sweeper", None)
    settings.ENRICHMENT_SWEEP_SECONDS = 0
    interrupted.sweeper_start()
    assert interrupted._sweeper is None  # 0: no sweeper

    settings.ENRICHMENT_SWEEP_SECONDS = 1
    interrupted.sweeper_start()
    thread = interrupted._sweeper
    assert thread is not None and thread.daemon
    interrupted.sweeper_start()
    assert interrupted._sweeper is thread  # once per process
    deadline = time.monotonic() + 30
    try:
        while len(sweeps) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        interrupted.sweeper_stop()
    assert len(sweeps) >= 2
    assert not thread.is_alive()
