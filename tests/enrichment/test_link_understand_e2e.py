"""End to end: the built-in ``link-understand`` fetching pages from a local server, driven
through ``/ws/enrich/`` on a real daphne with the default link model (issue: web fetch)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import websockets

from tests.live import LiveServer, live_server

pytestmark = pytest.mark.slow

PAGES = Path(__file__).resolve().parents[2] / "bench" / "data" / "extraction"
GROUND_TRUTH = json.loads((PAGES / "ground-truth.json").read_text())

STORE_DEFAULT_WITH_LOCAL_PAGES = """
from enrichment.config.changes import config_replace
config_replace(document={
    "tools": {
        "links": {"models": [{"type": "cli", "command": "link-understand",
                              "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}]},
        "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
    }
})
"""


class PageHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        if self.path == "/to-private":
            self.send_response(302)
            self.send_header("Location", "http://10.0.0.5/admin")
            self.end_headers()
            return
        if self.path.startswith("/slow/"):
            time.sleep(6)
        name = self.path.rsplit("/", 1)[-1]
        page = PAGES / name
        if not name.endswith(".html") or not page.is_file():
            self.send_error(404)
            return
        body = page.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def pages() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[LiveServer]:
    # Progress frames go out once a run has lasted 3 s (default 0.5 s): a quick run on a busy
    # CI machine still answers with its result alone, and the slow page (past the 5 s
    # "Fetching page content..." notice) still gets its progress.
    with live_server(
        tmp_path_factory.mktemp("e2e"), extra_env={"PROGRESS_AFTER_MS": "3000"}
    ) as live:
        live.manage("shell", "-c", STORE_DEFAULT_WITH_LOCAL_PAGES)
        yield live


async def enrich(server: LiveServer, body: str, request_id: str = "e2e") -> list[dict]:
    frames: list[dict] = []
    headers = {"Cookie": server.cookie_header()}
    async with websockets.connect(
        server.ws_url + "/ws/enrich/", origin=server.base_url, additional_headers=headers
    ) as socket:
        await socket.send(
            json.dumps(
                {
                    "type": "enrich",
                    "id": request_id,
                    "message": {"body": body, "channel": "webchat"},
                }
            )
        )
        while not frames or frames[-1]["type"] not in ("result", "error"):
            frames.append(json.loads(await asyncio.wait_for(socket.recv(), timeout=90)))
    return frames


async def test_two_local_pages_are_fetched_and_enveloped(server, pages) -> None:
    one, two = f"{pages}/news-harbour-bridge.html", f"{pages}/recipe-lentil-soup.html"
    frames = await enrich(server, f"Did you see {one} and also {two} today")
    result = frames[-1]
    assert result["type"] == "result", result
    # Only progress frames come before the result (whether any come at all depends on how
    # long the run lasts against PROGRESS_AFTER_MS: that hold is tested in test_progress.py).
    assert {frame["type"] for frame in frames[:-1]} <= {"progress"}
    body = result["body"]
    assert body.startswith(
        f"Did you see {one} and also {two} today\n\n[Link 1/2]\nURL: {one}\nSource: link-understand\nSummary:\n"
    )
    assert f"\n\n[Link 2/2]\nURL: {two}\nSource: link-understand\nSummary:\n" in body
    assert body.index("[Link 1/2]") < body.index("[Link 2/2]")
    # The extracted article text (not the page chrome) is what the agent reads.
    first_sentence = GROUND_TRUTH["news-harbour-bridge"]["articleBody"].split(".")[0]
    assert first_sentence in body
    assert "EXTERNAL_UNTRUSTED_CONTENT" in body

    cookies = server.login_cookies()
    detail = httpx.get(f"{server.base_url}/api/decisions/{result['runId']}", cookies=cookies).json()
    assert detail["links"]["outcome"] == "success"
    for url_decision, url in zip(detail["links"]["urls"], (one, two), strict=True):
        assert url_decision["url"] == url
        assert url_decision["chosen"]["outcome"] == "success"
        assert url_decision["chosen"]["argv"] == [
            "link-understand",
            "--url",
            url,
            "--format",
            "markdown",
        ]
        assert url_decision["chosen"]["exitCode"] == 0


async def test_redirect_to_private_address_fails_inside_the_fetcher(server, pages) -> None:
    frames = await enrich(server, f"look {pages}/to-private", request_id="redirect")
    result = frames[-1]
    attempt = result["links"]["urls"][0]["attempts"][0]
    assert result["links"]["outcome"] == "skipped"
    assert attempt["outcome"] == "failed" and attempt["exitCode"] == 1
    assert "Blocked: " in attempt["stderrTail"] and "10.0.0.5" in attempt["stderrTail"]
    assert result["body"] == f"look {pages}/to-private"


async def test_missing_page_is_a_failed_attempt_with_the_http_status(server, pages) -> None:
    frames = await enrich(server, f"broken {pages}/nothing-here.html", request_id="missing")
    attempt = frames[-1]["links"]["urls"][0]["attempts"][0]
    assert attempt["outcome"] == "failed"
    assert "HTTP 404" in attempt["stderrTail"]


async def test_slow_page_sends_the_pending_notice(server, pages) -> None:
    url = f"{pages}/slow/news-library-hours.html"
    frames = await enrich(server, f"slow one {url}", request_id="slow")
    texts = [frame["text"] for frame in frames if frame["type"] == "progress"]
    assert "Fetching page content..." in texts
    assert frames[-1]["type"] == "result"
    assert frames[-1]["links"]["outcome"] == "success"
