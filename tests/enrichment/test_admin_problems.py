"""Admin of problems and alert rules: webhook URLs validated on save, state actions."""

from __future__ import annotations

import pytest

from enrichment.models import AlertRule, Problem, Run
from enrichment.services.runs import run_fail

pytestmark = pytest.mark.django_db

ADD = "/admin/enrichment/alertrule/add/"


def form(**changes: object) -> dict[str, object]:
    return {
        "name": "failures", "enabled": "on", "kind": "failure-rate", "window_minutes": 60,
        "threshold": 20, "min_runs": 10, "cooldown_minutes": 60,
        "webhook_url": "https://hooks.slack.com/services/T0/B0/x",
        "deliveries-TOTAL_FORMS": 0, "deliveries-INITIAL_FORMS": 0,
    } | changes  # fmt: skip


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:8080/hook", "the SSRF guard refuses this host: loopback address"),
        ("http://169.254.169.254/latest/meta-data", "cloud metadata"),
        ("http://[::1]/x", "loopback"),
        ("file:///etc/passwd", "not an http(s) URL"),
        ("https://" + "a" * 2100 + ".test/", "Ensure this value has at most 2000 characters"),
    ],
    ids=["loopback", "metadata", "ipv6-loopback", "file", "too-long"],
)
def test_a_webhook_the_ssrf_guard_refuses_cannot_be_saved(staff_client, url, message) -> None:
    response = staff_client.post(ADD, form(webhook_url=url))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not AlertRule.objects.exists()


def test_a_host_allowed_by_the_setting_can_be_saved(staff_client, settings) -> None:
    settings.ALERT_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    response = staff_client.post(ADD, form(webhook_url="http://127.0.0.1:8080/hook"))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert AlertRule.objects.get().webhook_url == "http://127.0.0.1:8080/hook"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"window_minutes": 0}, "between 1 and 10080 minutes"),
        ({"window_minutes": 20000}, "between 1 and 10080 minutes"),
        ({"threshold": 150}, "a failure rate threshold is a percentage below 100"),
        ({"threshold": -1}, "between 0 and 1000000"),
    ],
    ids=["window-zero", "window-huge", "rate-over-100", "negative"],
)
def test_rule_numbers_are_validated(staff_client, changes, message) -> None:
    response = staff_client.post(ADD, form(**changes))
    assert message in response.content.decode()
    assert not AlertRule.objects.exists()


def test_problem_admin_lists_and_changes_state(staff_client) -> None:
    run_fail(run=Run.objects.create(), error="boom", duration_ms=1)
    problem = Problem.objects.get()
    assert "Run failed: boom" in staff_client.get("/admin/enrichment/problem/").content.decode()
    response = staff_client.post(
        "/admin/enrichment/problem/",
        {"action": "mark_ignored", "_selected_action": [problem.pk]},
    )
    assert response.status_code == 302
    problem.refresh_from_db()
    assert problem.state == "ignored" and problem.state_changed_at is not None
    assert staff_client.get(f"/admin/enrichment/problem/{problem.pk}/change/").status_code == 200
    assert staff_client.get("/admin/enrichment/problem/add/").status_code == 403
