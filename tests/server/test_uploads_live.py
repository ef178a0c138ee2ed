"""Uploads against a real daphne: credentials before the body, a hard cap, nothing held.

The daphne of this module serves nothing else, so its peak resident set size (``VmHWM``)
against its resident size when idle measures what the uploads cost it; a probe thread asks
for ``/api/health`` meanwhile to show the event loop keeps answering.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.live import LiveServer, live_server
from tests.server.test_body_limits_live import (
    BOUNDARY,
    api_token,
    current_rss_mib,
    peak_rss_mib,
    post_stream,
)

MIB = 1024 * 1024
UPLOAD_BYTES = 200 * MIB
RSS_HEADROOM_MIB = 64

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("uploads")) as live:
        for _ in range(3):  # warm: the first requests import and cache what they need
            httpx.get(live.base_url + "/api/health", timeout=30)
        yield live


@pytest.fixture(scope="module")
def idle_rss(server: LiveServer) -> float:
    return current_rss_mib(server.daphne_pid)


def upload_stream(size: int) -> Iterator[bytes]:
    """``payload`` (the JSON of POST /api/enrich) then one file of ``size`` bytes."""
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="payload"\r\n\r\n'
        '{"body": "see the file"}\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; '
        'filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    block = b"z" * MIB
    sent = 0
    while sent < size:
        piece = block[: min(MIB, size - sent)]
        sent += len(piece)
        yield piece
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def upload_length(size: int) -> int:
    return sum(len(part) for part in upload_stream(0)) + size


class Probe:
    """GET /api/health every 50 ms in a thread; the latencies of the answers. Any answer
    counts (with Redis down the health is 503 "degraded"): a failure is no answer."""

    def __init__(self, server: LiveServer) -> None:
        self.url = server.base_url + "/api/health"
        self.latencies: list[float] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    ok = client.get(self.url).status_code in (200, 503)
                except httpx.HTTPError:
                    ok = False
                if ok:
                    self.latencies.append(time.monotonic() - started)
                else:
                    self.failures += 1
                self._stop.wait(0.05)

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


def test_anonymous_200_mib_upload_is_401_before_its_body_is_kept(
    server: LiveServer, idle_rss: float
) -> None:
    with Probe(server) as probe:
        declared, _ = post_stream(
            server,
            "/api/enrich/upload",
            upload_stream(UPLOAD_BYTES),
            length=upload_length(UPLOAD_BYTES),
        )
        chunked, _ = post_stream(server, "/api/enrich/upload", upload_stream(UPLOAD_BYTES))
    for response in (declared, chunked):
        assert response.status_code == 401, response.text[:300]
        assert response.json()["detail"].startswith("Authentication required")
    assert peak_rss_mib(server.daphne_pid) - idle_rss <= RSS_HEADROOM_MIB
    assert probe.failures == 0 and probe.latencies


def test_forged_session_cookie_is_401_too(server: LiveServer) -> None:
    headers = {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Cookie": "sessionid=not-a-session",
    }
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        response = client.post(
            "/api/enrich/upload", content=upload_stream(50 * MIB), headers=headers
        )
    assert response.status_code == 401


def test_logged_in_200_mib_file_is_413_at_the_file_cap_and_never_held(
    server: LiveServer, idle_rss: float
) -> None:
    token = api_token(server)
    with Probe(server) as probe:
        response, _ = post_stream(
            server,
            "/api/enrich/upload",
            upload_stream(UPLOAD_BYTES),
            length=upload_length(UPLOAD_BYTES),
            token=token,
        )
    assert response.status_code == 413, response.text[:300]
    assert response.json() == {
        "detail": "File 'big.bin' too large: the limit is 25 MiB (26214400 bytes) per file."
    }
    assert peak_rss_mib(server.daphne_pid) - idle_rss <= RSS_HEADROOM_MIB
    assert probe.failures == 0 and probe.latencies


def test_logged_in_upload_within_the_cap_is_enriched(server: LiveServer) -> None:
    token = api_token(server)
    size = 3 * MIB  # past Django's in-memory threshold: parsed to a temporary file
    response, _ = post_stream(
        server, "/api/enrich/upload", upload_stream(size), length=upload_length(size), token=token
    )
    assert response.status_code == 200, response.text[:500]
    assert response.json()["body"].startswith("see the file")


def test_a_chunked_upload_reaches_django_whole(server: LiveServer) -> None:
    token = api_token(server)
    response, _ = post_stream(server, "/api/enrich/upload", upload_stream(3 * MIB), token=token)
    assert response.status_code == 200, response.text[:500]
    assert response.json()["body"].startswith("see the file")


def test_an_anonymous_api_write_is_401_at_the_edge(server: LiveServer) -> None:
    response = httpx.post(
        server.base_url + "/api/links/extract", json={"message": "x" * 100_000}, timeout=30
    )
    assert response.status_code == 401
    assert response.json()["detail"].startswith("Authentication required")


def test_a_logged_in_session_uploads_too(server: LiveServer) -> None:
    cookies = server.login_cookies(username="live-user", password="live-user-pass-123")
    headers = {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items()),
        "X-CSRFToken": cookies["csrftoken"],
        "Referer": server.base_url + "/",
    }
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        response = client.post(
            "/api/enrich/upload", content=upload_stream(3 * MIB), headers=headers
        )
    assert response.status_code == 200, response.text[:500]
