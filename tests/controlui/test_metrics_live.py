"""``/metrics`` on a real daphne in multiprocess mode: HTTP and WebSocket enrich requests, the
runs they record and the traffic itself, summed across daphne and its workers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest
import websockets

from tests.controlui.test_metrics import PageHandler, metric
from tests.live import LiveServer, live_server

pytestmark = pytest.mark.slow

SETUP = """
from django.contrib.auth import get_user_model
from accounts.models import ApiToken
from accounts.tokens import token_digest
from enrichment.config.changes import config_replace
ApiToken.objects.create(user=get_user_model().objects.get(username="live-user"), name="scrape",
                        digest=token_digest("cui_live-scrape-token"), hint="cui_live")
config_replace(document={
    "tools": {
        "links": {"models": [{"type": "cli", "command": "link-understand",
                              "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}]},
        "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
    }
})
"""
TOKEN = "cui_live-scrape-token"


@pytest.fixture(scope="module")
def pages() -> Iterator[str]:
    import threading
    from http.server import ThreadingHTTPServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("metrics")
    shared = workdir / "prometheus"
    shared.mkdir()
    with live_server(workdir, extra_env={"PROMETHEUS_MULTIPROC_DIR": str(shared)}) as live:
        live.manage("shell", "-c", SETUP)
        yield live


def scrape(server: LiveServer) -> str:
    response = httpx.get(
        server.base_url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    return response.text


async def ws_enrich(server: LiveServer, body: str) -> dict:
    headers = {"Cookie": server.cookie_header(username="live-user", password="live-user-pass-123")}
    async with websockets.connect(
        server.ws_url + "/ws/enrich/", origin=server.base_url, additional_headers=headers
    ) as socket:
        frame = {"type": "enrich", "id": "m1", "message": {"body": body, "channel": "live-ws"}}
        await socket.send(json.dumps(frame))
        while True:
            answer = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
            if answer["type"] in ("result", "error"):
                return answer


def test_scrapes_before_and_after_real_runs_see_every_process(server, pages) -> None:
    assert httpx.get(server.base_url + "/metrics", timeout=10).status_code == 401
    before = scrape(server)
    response = httpx.post(
        server.base_url + "/api/enrich",
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"body": f"see {pages}/article", "channel": "live-http"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert response.json()["links"]["outcome"] == "success"
    answer = asyncio.run(ws_enrich(server, f"and {pages}/other"))
    assert answer["type"] == "result" and answer["links"]["outcome"] == "success"
    after = scrape(server)

    def moved(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    # With Redis the socket's run happened in a worker process: the sum shows it all the same.
    assert moved("controlui_runs_total", outcome="success", channel="live-http") == 1
    assert moved("controlui_runs_total", outcome="success", channel="live-ws") == 1
    fetched = {"command": "link-understand", "type": "in-process", "outcome": "success"}
    assert moved("controlui_link_attempt_duration_seconds_count", **fetched) == 2
    assert moved("controlui_extraction_cpu_seconds_count") == 2
    enrich = {"method": "POST", "route": "/api/enrich"}
    assert moved("controlui_http_requests_total", status="200", **enrich) == 1
    assert moved("controlui_http_request_duration_seconds_count", **enrich) == 1
    assert moved("controlui_websocket_connections_total", route="/ws/enrich/") == 1
    assert moved("controlui_websocket_requests_total", route="/ws/enrich/", outcome="result") == 1
    assert moved("controlui_websocket_messages_total", route="/ws/enrich/", direction="in") == 1
    assert metric(after, "controlui_websocket_open_connections", route="/ws/enrich/") == 0
    assert metric(after, "controlui_runs_running") == 0
    # With Redis the queue gauges read the job queue: the server's one worker is alive.
    expected_workers = 1 if server.env.get("REDIS_URL") else 0
    assert metric(after, "controlui_workers_live") == expected_workers
    assert metric(after, "controlui_queue_depth") == 0
