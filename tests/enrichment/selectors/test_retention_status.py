"""The oldest kept run and the next prune, on the overview and in /api/health."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from enrichment.models import RetentionPass, Run
from enrichment.pipeline.retention.policy import RetentionPolicy
from enrichment.selectors.retention import retention_status

pytestmark = pytest.mark.django_db
NOW = timezone.now()


def make_run(days_ago: float, outcome: str = "success") -> Run:
    return Run.objects.create(created_at=NOW - timedelta(days=days_ago), outcome=outcome)


def test_an_empty_log_has_no_oldest_run_and_nothing_due() -> None:
    status = retention_status(policy=RetentionPolicy(days=30), now=NOW)
    assert status.oldest_run_at is None and status.next_due_at is None
    assert not status.overdue and status.last_pass is None


def test_the_next_prune_is_when_the_first_kept_run_falls_due() -> None:
    make_run(20, outcome="error")  # due in 70 days (errors kept 90)
    success = make_run(10)  # due in 20 days
    oldest = make_run(25, outcome="running")  # never due by default
    status = retention_status(
        policy=RetentionPolicy(days=30, days_by_outcome={"error": 90}), now=NOW
    )
    assert status.oldest_run_id == oldest.pk
    assert status.next_due_at == success.created_at + timedelta(days=30)
    assert not status.overdue


def test_a_run_due_for_over_a_day_means_the_prune_is_overdue() -> None:
    make_run(32)
    status = retention_status(policy=RetentionPolicy(days=30), now=NOW)
    assert status.overdue


def test_keeping_forever_has_no_next_prune() -> None:
    make_run(3000)
    status = retention_status(policy=RetentionPolicy(), now=NOW)
    assert not status.prunes and status.next_due_at is None and not status.overdue


def test_health_shows_retention_to_a_logged_in_user_only(client, user, settings) -> None:
    settings.RETENTION = RetentionPolicy(days=30)
    run = make_run(40)
    RetentionPass.objects.create(started_at=NOW, finished_at=NOW, removed=12, redacted=3)
    anonymous = client.get("/api/health").json()
    assert "retention" not in anonymous
    client.force_login(user)
    body = client.get("/api/health").json()
    assert body["status"] in ("ok", "degraded")
    retention = body["retention"]
    assert retention["policy"] == "keep 30 days"
    assert retention["oldestRunAt"].startswith(run.created_at.strftime("%Y-%m-%dT%H:%M"))
    assert retention["overdue"] is True
    assert (retention["lastPruneRemoved"], retention["lastPruneRedacted"]) == (12, 3)
    assert retention["lastPruneError"] is None


def test_the_overview_shows_retention(client, user, settings) -> None:
    settings.RETENTION = RetentionPolicy(days=30)
    run = make_run(5)
    client.force_login(user)
    page = client.get("/").content.decode()
    assert 'id="retention"' in page
    assert "keep 30 days" in page
    assert f"/decisions/{run.pk}/" in page
    due = (run.created_at + timedelta(days=30)).strftime("%Y-%m-%d %H:%M")
    assert due in page and "overdue" not in page


def test_the_overview_says_when_runs_are_kept_forever(client, user, settings) -> None:
    settings.RETENTION = RetentionPolicy()
    client.force_login(user)
    page = client.get("/").content.decode()
    assert "never: runs are kept forever" in page and "no runs yet" in page
