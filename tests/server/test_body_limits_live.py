"""Request-body limits against a real daphne: huge bodies are refused without being held.

The daphne of this module serves nothing else, so its peak resident set size (``VmHWM``)
measures what the uploads below cost it. Bodies are generated on the fly, never stored.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveServer, live_server

MIB = 1024 * 1024
BOUNDARY = "h17aboundary"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("body-limits")) as live:
        yield live


def api_token(server: LiveServer) -> str:
    output = server.manage("create_api_token", "live-admin").stdout
    return output.strip().splitlines()[-1]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


def current_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc status")


def multipart_stream(field: str, filename: str, size: int) -> Iterator[bytes]:
    """A multipart body with one file part of ``size`` bytes, produced 1 MiB at a time."""
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; '
        f'filename="{filename}"\r\nContent-Type: text/plain\r\n\r\n'
    ).encode()
    block = b"a" * MIB
    sent = 0
    while sent < size:
        piece = block[: min(MIB, size - sent)]
        sent += len(piece)
        yield piece
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def multipart_length(field: str, filename: str, size: int) -> int:
    head = next(multipart_stream(field, filename, 0))
    return len(head) + size + len(f"\r\n--{BOUNDARY}--\r\n")


def post_stream(
    server: LiveServer,
    path: str,
    body: Iterator[bytes],
    *,
    length: int | None = None,
    token: str | None = None,
) -> tuple[httpx.Response, float]:
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if length is not None:
        headers["Content-Length"] = str(length)
    started = time.monotonic()
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        response = client.post(path, content=body, headers=headers)
    return response, time.monotonic() - started


def test_400_mb_anonymous_login_post_is_refused_and_never_held(server: LiveServer) -> None:
    size = 400 * MIB
    declared, _ = post_stream(
        server,
        "/login/",
        multipart_stream("username", "x.txt", size),
        length=multipart_length("username", "x.txt", size),
    )
    chunked, elapsed = post_stream(server, "/login/", multipart_stream("username", "x.txt", size))
    for response in (declared, chunked):
        assert response.status_code == 413
        assert response.headers["content-type"].startswith("text/html")
        assert "POST /login/ accepts at most 5 MiB (5242880 bytes)" in response.text
    assert peak_rss_mib(server.daphne_pid) < 300
    assert elapsed < 60


def test_100_mb_file_extract_is_refused_quickly_with_json_naming_the_limit(
    server: LiveServer,
) -> None:
    token = api_token(server)
    size = 100 * MIB
    response, elapsed = post_stream(
        server,
        "/api/files/extract",
        multipart_stream("file", "big.txt", size),
        length=multipart_length("file", "big.txt", size),
        token=token,
    )
    assert response.status_code == 413
    assert response.json() == {
        "detail": "Request body too large: POST /api/files/extract accepts at most "
        "6 MiB (6291456 bytes)."
    }
    assert elapsed < 15
    assert peak_rss_mib(server.daphne_pid) < 300


def test_uploads_within_the_limit_still_arrive_whole(server: LiveServer) -> None:
    token = api_token(server)
    size = 4 * MIB + 17  # above Twisted's in-memory threshold and Django's 2 MiB spool
    response, _ = post_stream(
        server,
        "/api/files/extract",
        multipart_stream("file", "notes.txt", size),
        length=multipart_length("file", "notes.txt", size),
        token=token,
    )
    assert response.status_code == 200, response.text[:500]
    block = response.json()["block"]
    # The file block carries the text (cut to maxChars): the body reached Django intact.
    assert 'name="notes.txt"' in block and "aaaa" in block


def test_small_json_body_over_the_api_default_limit_is_413(server: LiveServer) -> None:
    token = api_token(server)
    body = json.dumps({"message": "x" * (6 * MIB)}).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        response = client.post("/api/links/extract", content=body, headers=headers)
    assert response.status_code == 413
    assert "accepts at most 5 MiB (5242880 bytes)" in response.json()["detail"]


def test_memory_is_released_after_refused_uploads(server: LiveServer) -> None:
    assert current_rss_mib(server.daphne_pid) < 300
