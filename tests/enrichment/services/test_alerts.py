"""Alert rules posting to a real local HTTP server: firing, cooldown, retries with backoff,
recorded failures, the SSRF guard at delivery, and the check after runs are recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
from django.core.management import call_command

from enrichment.models import AlertDelivery, AlertRule, Run
from enrichment.services import alerts
from enrichment.services.runs import run_fail

pytestmark = pytest.mark.django_db(transaction=True)


class Hook:
    """A webhook receiver on 127.0.0.1 answering with the statuses queued (then 200)."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.received: list[dict] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                hook.received.append(
                    {
                        "body": json.loads(self.rfile.read(length)),
                        "type": self.headers["Content-Type"],
                    }
                )
                status = hook.statuses.pop(0) if hook.statuses else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"<html>upstream broke</html>")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T0/B0"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook(settings) -> Iterator[Hook]:
    settings.ALERT_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.ALERT_RETRY_BASE_MS = 10
    settings.ALERT_DELIVERY_ATTEMPTS = 3
    settings.ALERT_CHECK_AFTER_RUNS_SECONDS = 0  # checks by the command only, but in one test
    receiver = Hook()
    yield receiver
    receiver.close()


def runs(*, failed: int, succeeded: int) -> None:
    for _ in range(succeeded):
        Run.objects.create(outcome=Run.Outcome.SUCCESS)
    for number in range(failed):
        run_fail(run=Run.objects.create(session_key=f"s{number}"), error="boom", duration_ms=1)


def rule(url: str, **fields) -> AlertRule:
    values = {"name": "failures", "kind": "failure-rate", "threshold": 20, "min_runs": 5} | fields
    return AlertRule.objects.create(webhook_url=url, **values)


def check() -> tuple[str, int]:
    out = StringIO()
    try:
        call_command("check_alerts", stdout=out)
    except SystemExit as exit:
        return out.getvalue(), int(exit.code or 0)
    return out.getvalue(), 0


def test_a_failure_rate_above_the_threshold_posts_slack_json_once(hook) -> None:
    rule(hook.url)
    runs(failed=5, succeeded=5)
    output, status = check()
    assert status == 0 and "failures: FIRING" in output and "delivered after 1 try" in output
    (message,) = hook.received
    assert message["type"] == "application/json"
    assert list(message["body"]) == ["text"]
    text = message["body"]["text"]
    assert "Control UI alert: failures" in text and "5 of 10 runs failed (50%" in text
    assert "Run failed: boom (5 runs)" in text
    delivery = AlertDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code, delivery.error) == (
        "delivered", 1, 200, ""
    )  # fmt: skip
    # Still firing, within the cooldown: no second message.
    output, _ = check()
    assert "FIRING" in output and "posted" not in output
    assert len(hook.received) == 1


def test_the_message_links_the_problems_page_when_the_site_url_is_set(hook, settings) -> None:
    settings.ALERT_LINK_BASE_URL = "https://control.example.com"
    rule(hook.url)
    runs(failed=5, succeeded=0)
    check()
    assert hook.received[0]["body"]["text"].endswith("\nhttps://control.example.com/problems/")


def test_a_rules_deliveries_are_listed_on_its_admin_page(hook, staff_client) -> None:
    hook.statuses = [500, 500, 500]
    alert = rule(hook.url)
    runs(failed=5, succeeded=0)
    check()
    html = staff_client.get(f"/admin/enrichment/alertrule/{alert.pk}/change/").content.decode()
    assert "HTTP 500: &lt;html&gt;upstream broke&lt;/html&gt;" in html
    assert "field-status" in html and "failed" in html


def test_below_the_threshold_or_too_few_runs_posts_nothing(hook) -> None:
    rule(hook.url, min_runs=20)
    runs(failed=5, succeeded=5)
    output, status = check()
    assert "failures: ok" in output and "not judged" in output and status == 0
    assert hook.received == [] and not AlertDelivery.objects.exists()


def test_a_failing_server_is_retried_with_backoff_then_recorded_as_failed(hook) -> None:
    hook.statuses = [500, 503, 502]
    rule(hook.url)
    runs(failed=5, succeeded=0)
    output, status = check()
    assert status == 1 and "failed after 3 tries" in output
    assert len(hook.received) == 3
    delivery = AlertDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("failed", 3, 502)
    assert delivery.error == "HTTP 502: <html>upstream broke</html>"


def test_a_server_that_recovers_gets_the_message_on_a_retry(hook) -> None:
    hook.statuses = [500]
    rule(hook.url)
    runs(failed=5, succeeded=0)
    check()
    delivery = AlertDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("delivered", 2, 200)
    assert len(hook.received) == 2


def test_a_4xx_answer_is_not_retried(hook) -> None:
    hook.statuses = [404]
    rule(hook.url)
    runs(failed=5, succeeded=0)
    check()
    delivery = AlertDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("failed", 1, 404)


def test_a_closed_port_is_retried_and_recorded_without_a_status(hook, settings) -> None:
    url = hook.url
    hook.close()  # nothing listens there any more
    rule(url)
    runs(failed=5, succeeded=0)
    _, status = check()
    delivery = AlertDelivery.objects.get()
    assert status == 1
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("failed", 3, None)
    assert delivery.error.startswith("connection failed")


def test_the_ssrf_guard_applies_at_delivery_unless_the_host_is_allowed(hook, settings) -> None:
    settings.ALERT_WEBHOOK_ALLOWED_HOSTS = []  # the rule was saved while it was allowed
    rule(hook.url)
    runs(failed=5, succeeded=0)
    check()
    delivery = AlertDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 1)  # a refusal is not retried
    assert "loopback" in delivery.error and hook.received == []


def test_new_problems_are_announced_once(hook) -> None:
    rule(hook.url, name="new", kind="new-problems", threshold=1)
    runs(failed=1, succeeded=0)
    check()
    check()
    assert len(hook.received) == 1
    assert "1 new problem" in hook.received[0]["body"]["text"]
    assert "Run failed: boom" in hook.received[0]["body"]["text"]
    run_fail(run=Run.objects.create(), error="another failure", duration_ms=1)
    check()
    assert len(hook.received) == 2
    second = hook.received[1]["body"]["text"]
    assert "another failure" in second and "Run failed: boom" not in second


def test_disabled_rules_are_not_checked(hook) -> None:
    rule(hook.url, enabled=False)
    runs(failed=5, succeeded=0)
    output, _ = check()
    assert "no enabled alert rules" in output and hook.received == []


def test_runs_being_recorded_check_the_rules_in_the_background(hook, settings) -> None:
    settings.ALERT_CHECK_AFTER_RUNS_SECONDS = 3600
    alerts.alerts_check_reset()
    rule(hook.url, min_runs=1)
    runs(failed=1, succeeded=0)  # the run's hook starts the check
    thread = alerts._running
    assert thread is not None
    thread.join(timeout=30)
    assert len(hook.received) == 1
    runs(failed=1, succeeded=0)  # within the interval: no second check from this process
    assert alerts._running is thread
    alerts.alerts_check_reset()


def test_text_from_runs_cannot_ping_the_channel(hook) -> None:
    rule(hook.url, name="new", kind="new-problems", threshold=1)
    run_fail(run=Run.objects.create(), error="<!channel> <http://evil|click>", duration_ms=1)
    check()
    text = hook.received[0]["body"]["text"]
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text
