"""``GET /metrics``: who may read it, and that real runs move the numbers they should."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_network

import httpx
import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import ApiToken
from accounts.tokens import token_digest, token_generate
from common import metrics as metrics_core
from controlui.asgi import application
from enrichment.models import Run


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample (0 when the series does not exist yet)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


@pytest.fixture
def token(user) -> str:
    secret = token_generate()
    ApiToken.objects.create(user=user, name="prometheus", digest=token_digest(secret), hint="x")
    return secret


def scrape(client, token: str) -> str:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return response.content.decode()


# --- access ----------------------------------------------------------------------------------


def test_anonymous_scrape_is_401_naming_both_ways_in(client, db) -> None:
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    text = response.content.decode()
    assert "Authorization: Bearer" in text and "METRICS_ALLOWED_NETWORKS" in text


@pytest.mark.parametrize(
    "header",
    ["Bearer cui_not-a-real-token", "Bearer ", "Basic dXNlcjpwYXNz", "cui_no-scheme"],
    ids=["unknown-token", "empty-token", "basic-auth", "no-scheme"],
)
def test_a_bad_authorization_header_is_401(client, db, header) -> None:
    response = client.get("/metrics", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert "invalid or revoked" in response.content.decode()


def test_a_revoked_token_is_401(client, token) -> None:
    ApiToken.objects.update(revoked_at=timezone.now())
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_a_login_session_alone_is_403(user_client) -> None:
    response = user_client.get("/metrics")
    assert response.status_code == 403
    assert "login session is not enough" in response.content.decode()


def test_an_api_token_reads_the_metrics(client, token) -> None:
    text = scrape(client, token)
    assert "# HELP controlui_runs_total " in text or "# HELP controlui_runs " in text
    assert metric(text, "controlui_runs_running") == 0


def test_a_client_in_an_allowed_network_needs_no_token(client, db, settings) -> None:
    settings.METRICS_ALLOWED_NETWORKS = (ip_network("10.0.0.0/8"), ip_network("::1/128"))
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.5").status_code == 401
    assert client.get("/metrics", REMOTE_ADDR="not-an-address").status_code == 401


def test_only_get_is_answered(client, token) -> None:
    response = client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 405


# --- values that move --------------------------------------------------------------------------

PAGE = (
    b"<html><head><title>Metrics page</title></head><body><article><h1>Observability</h1>"
    + b"<p>Prometheus scrapes the control plane every fifteen seconds and keeps the series.</p>"
    * 20
    + b"</article></body></html>"
)


class PageHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        if self.path == "/missing":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def builtin_fetcher(db) -> None:
    """The shipped link model (the built-in ``link-understand``), 127.0.0.1 allowed."""
    from enrichment.config.changes import config_replace

    config_replace(
        document={
            "tools": {
                "links": {
                    "models": [
                        {
                            "type": "cli",
                            "command": "link-understand",
                            "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
                        }
                    ]
                },
                "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
            }
        }
    )


def test_runs_move_the_run_attempt_and_extraction_metrics(
    user_client, token, page_server, builtin_fetcher
) -> None:
    before = scrape(user_client, token)

    def enrich(body: str, channel: str) -> dict:
        response = user_client.post(
            "/api/enrich", {"body": body, "channel": channel}, content_type="application/json"
        )
        assert response.status_code == 200, response.content
        return response.json()

    assert enrich(f"read {page_server}/article", "Metrics-Test")["links"]["outcome"] == "success"
    assert enrich(f"and {page_server}/other", "metrics-test")["links"]["outcome"] == "success"
    assert enrich("no link here", "metrics-test")["links"]["outcome"] == "no-links"
    failed = enrich(f"broken {page_server}/missing", "metrics-test")
    assert failed["links"]["urls"][0]["attempts"][0]["outcome"] == "failed"

    after = scrape(user_client, token)

    def moved(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert moved("controlui_runs_total", outcome="success", channel="metrics-test") == 2
    assert moved("controlui_runs_total", outcome="no-links", channel="metrics-test") == 1
    assert moved("controlui_run_duration_seconds_count", outcome="success") == 2
    fetched = {"command": "link-understand", "type": "in-process", "outcome": "success"}
    assert moved("controlui_link_attempt_duration_seconds_count", **fetched) == 2
    assert moved("controlui_link_attempt_duration_seconds_sum", **fetched) > 0
    missing = {"command": "link-understand", "type": "in-process", "outcome": "failed"}
    assert moved("controlui_link_attempt_duration_seconds_count", **missing) == 1
    # Both pages were extracted in a worker process, whose CPU time came back with the text.
    assert moved("controlui_extraction_cpu_seconds_count") == 2
    assert moved("controlui_extraction_cpu_seconds_sum") > 0


def test_running_and_overdue_runs_are_counted_at_scrape(client, token, settings) -> None:
    settings.RUN_OVERDUE_SECONDS = 60
    Run.objects.create(outcome=Run.Outcome.RUNNING)
    Run.objects.create(
        outcome=Run.Outcome.RUNNING, created_at=timezone.now() - timedelta(minutes=5)
    )
    Run.objects.create(outcome=Run.Outcome.SUCCESS, created_at=timezone.now() - timedelta(hours=2))
    text = scrape(client, token)
    assert metric(text, "controlui_runs_running") == 2
    assert metric(text, "controlui_runs_overdue") == 1
    # Runs execute in this process (no job queue in the tests): nothing queued, no workers.
    assert metric(text, "controlui_queue_depth") == 0
    assert metric(text, "controlui_workers_live") == 0


# --- HTTP and WebSocket traffic, counted at the ASGI edge -------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_http_and_websocket_traffic_is_counted_by_url_pattern(in_memory_layer) -> None:
    class NoGauges:
        def collect(self):
            return []

    def read() -> str:
        return metrics_core.exposition(NoGauges()).decode()

    before = read()
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        assert (await client.get("/decisions/12345/")).status_code == 302  # to the login
        assert (await client.get("/decisions/67890/")).status_code == 302
        assert (await client.get("/no/such/page/")).status_code in (302, 404)
    socket = WebsocketCommunicator(
        application,
        "/ws/ping/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")],
    )
    connected, _ = await socket.connect()
    assert connected
    assert (await socket.receive_output())["code"] == 4401  # anonymous: accepted, then closed
    await socket.disconnect()
    after = await sync_to_async(read)()

    def moved(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    detail = {"method": "GET", "route": "/decisions/<int:run_id>/"}
    assert moved("controlui_http_requests_total", status="302", **detail) == 2
    assert moved("controlui_http_request_duration_seconds_count", **detail) == 2
    assert moved("controlui_http_requests_total", route="unmatched") == 1
    assert moved("controlui_websocket_connections_total", route="/ws/ping/") == 1
    assert moved("controlui_websocket_open_connections", route="/ws/ping/") == 0


def test_with_metrics_off_nothing_is_counted_and_the_endpoint_is_404(
    user_client, token, settings, page_server, builtin_fetcher
) -> None:
    before = scrape(user_client, token)
    settings.METRICS_ENABLED = False
    metrics_core.recording_set(False)
    try:
        response = user_client.post(
            "/api/enrich",
            {"body": f"see {page_server}/a", "channel": "metrics-off"},
            content_type="application/json",
        )
        assert response.status_code == 200
        assert user_client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 404
    finally:
        settings.METRICS_ENABLED = True
        metrics_core.recording_set(True)
    after = scrape(user_client, token)
    assert metric(after, "controlui_runs_total", channel="metrics-off") == 0
    assert metric(after, "controlui_extraction_cpu_seconds_count") == metric(
        before, "controlui_extraction_cpu_seconds_count"
    )
