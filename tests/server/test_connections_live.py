"""Connection guards against a real daphne, with real sockets (server/connections.py).

Timeouts are shortened by settings so the test runs in seconds: headers must arrive within
2 s, a keep-alive connection idles out after 3 s, a silent WebSocket after 3 s (daphne pings
every second), and one address holds at most 12 connections.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
import websockets

from tests.live import LiveServer, live_server

HEADER_TIMEOUT = 2
IDLE_TIMEOUT = 3
CAP = 12

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {
        "HTTP_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
        "HTTP_IDLE_TIMEOUT_SECONDS": str(IDLE_TIMEOUT),
        "WEBSOCKET_IDLE_TIMEOUT_SECONDS": str(IDLE_TIMEOUT),
        "MAX_CONNECTIONS_PER_CLIENT": str(CAP),
    }
    args = ("--ping-interval", "1", "--ping-timeout", "10")
    with live_server(tmp_path_factory.mktemp("connections"), env, daphne_args=args) as live:
        yield live


def connect(server: LiveServer) -> socket.socket:
    address = urlsplit(server.base_url)
    sock = socket.create_connection((address.hostname, address.port), timeout=15)
    return sock


def read_until_closed(sock: socket.socket, deadline: float) -> bytes:
    received = b""
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        received += chunk
    return received


def test_slowloris_headers_are_cut_off_at_the_header_timeout(server: LiveServer) -> None:
    sock = connect(server)
    sock.settimeout(0.4)
    started = time.monotonic()
    sock.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    received, closed_at = b"", None
    for line in range(40):  # a header line every 0.4 s, never the blank line that ends them
        try:
            sock.sendall(f"X-Slow-{line}: 1\r\n".encode())
            chunk = sock.recv(4096)
            if not chunk:
                closed_at = time.monotonic()
                break
            received += chunk
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed_at = time.monotonic()
            break
    sock.close()
    assert closed_at is not None, "the slow connection was never closed"
    assert HEADER_TIMEOUT - 0.5 <= closed_at - started <= HEADER_TIMEOUT + 2
    assert received.startswith(b"HTTP/1.1 408 Request Timeout")
    assert b"Request headers not received within 2 s" in received


def test_a_silent_connection_is_closed_at_the_header_timeout(server: LiveServer) -> None:
    sock = connect(server)
    started = time.monotonic()
    received = read_until_closed(sock, started + 10)
    assert time.monotonic() - started <= HEADER_TIMEOUT + 2
    assert received.startswith(b"HTTP/1.1 408")


def test_keep_alive_serves_requests_then_closes_when_idle(server: LiveServer) -> None:
    sock = connect(server)
    for _ in range(2):  # two requests on one connection, slower together than the deadline
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        time.sleep(HEADER_TIMEOUT * 0.75)
    started = time.monotonic()
    assert read_until_closed(sock, started + 10) == b""
    assert time.monotonic() - started <= IDLE_TIMEOUT + 2


def test_connections_over_the_per_address_cap_are_refused_with_429(
    server: LiveServer,
) -> None:
    held = [connect(server) for _ in range(CAP)]
    time.sleep(0.2)
    refused = connect(server)
    answer = read_until_closed(refused, time.monotonic() + 5)
    assert answer.startswith(b"HTTP/1.1 429 Too Many Requests")
    assert f"at most {CAP} at once".encode() in answer
    for sock in held:
        sock.close()
    time.sleep(0.3)
    assert httpx.get(server.base_url + "/api/health", timeout=10).status_code == 200


async def test_a_websocket_that_answers_pings_outlives_every_http_deadline(
    server: LiveServer,
) -> None:
    headers = {"Cookie": server.cookie_header()}
    async with websockets.connect(
        server.ws_url + "/ws/ping/", origin=server.base_url, additional_headers=headers
    ) as ws:
        await asyncio.wait_for(ws.recv(), timeout=10)  # hello
        await asyncio.sleep(IDLE_TIMEOUT + HEADER_TIMEOUT + 1)
        pong = await ws.ping()
        await asyncio.wait_for(pong, timeout=5)  # still open: the pings kept it alive


def test_a_websocket_that_goes_silent_is_closed_after_its_idle_timeout(
    server: LiveServer,
) -> None:
    cookie = server.cookie_header().encode()
    sock = connect(server)
    sock.sendall(
        b"GET /ws/ping/ HTTP/1.1\r\nCookie: "
        + cookie
        + b"\r\nHost: "
        + urlsplit(server.base_url).netloc.encode()
        + b"\r\n"
        b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        b"Origin: " + server.base_url.encode() + b"\r\n\r\n"
    )
    started = time.monotonic()
    received = read_until_closed(sock, started + 15)  # pings arrive; never answered
    assert received.startswith(b"HTTP/1.1 101")
    assert b'"hello"' in received  # logged in: the consumer accepted and greeted it
    assert IDLE_TIMEOUT - 0.5 <= time.monotonic() - started <= IDLE_TIMEOUT + 2


async def test_a_frame_over_daphnes_limit_is_closed_with_1009_and_a_reason(
    server: LiveServer,
) -> None:
    headers = {"Cookie": server.cookie_header()}
    async with websockets.connect(
        server.ws_url + "/ws/enrich/",
        origin=server.base_url,
        additional_headers=headers,
        max_size=None,
        open_timeout=30,
    ) as ws:
        closed = None
        try:  # the close may arrive while the frame is still being sent
            await ws.send("x" * (40 * 1024 * 1024))
            for _ in range(10):
                await asyncio.wait_for(ws.recv(), timeout=30)
        except websockets.ConnectionClosed as exc:
            closed = exc
    assert closed is not None and closed.rcvd is not None, "dropped without a close frame"
    assert closed.rcvd.code == 1009
    assert "exceeds payload limit of 33554432 octets" in closed.rcvd.reason


async def test_memory_after_socket_churn_stays_bounded(server: LiveServer) -> None:
    """1,000 logged-in /ws/decisions/ sockets, opened and closed 10 at a time (under the cap):
    daphne keeps at most 64 MiB of what they cost (bench/hostile_load.py: 5,000)."""
    from tests.server.test_body_limits_live import current_rss_mib

    headers = {"Cookie": server.cookie_header()}

    async def one() -> None:
        async with websockets.connect(
            server.ws_url + "/ws/decisions/", origin=server.base_url, additional_headers=headers
        ):
            pass

    await one()
    start = current_rss_mib(server.daphne_pid)
    for _ in range(100):
        await asyncio.gather(*(one() for _ in range(CAP - 2)))
    await asyncio.sleep(1)
    assert current_rss_mib(server.daphne_pid) - start <= 64
