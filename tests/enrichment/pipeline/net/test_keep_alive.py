"""Kept-alive connections of the guarded fetch, against real HTTP/1.1 servers on 127.0.0.1.

What a user (or an attacker) could notice: a second fetch of the same checked address on
the same event loop goes over the connection of the first (no new handshake); one to
another address, another TLS host name, or after a body cut at the cap does not; nothing
is sent before the host is checked again; and the connections are closed with their loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trustme

from enrichment.pipeline.net import http
from enrichment.pipeline.net.http import FetchError, fetch_guarded, fetch_guarded_async
from enrichment.pipeline.net.ssrf import SsrfPolicy
from tests.enrichment.pipeline.fetch.test_webfetch import send

NAMES = ("a.test", "b.test")
BIG = 8_000_000  # more than the socket buffers hold: the fetch stops reading half way
ALLOWED = SsrfPolicy(allowed_hostnames=NAMES)


@dataclass
class Server:
    port: int = 0
    requests: list[tuple[int, str, str | None]] = field(
        default_factory=list
    )  # (client port, path, SNI)
    closed: list[int] = field(default_factory=list)  # client ports whose connection ended
    sni: dict[int, str | None] = field(default_factory=dict)


@contextlib.contextmanager
def http11_server(tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    """A keep-alive server: each request is recorded with the client port of its connection
    (one port per TCP connection) and, over TLS, the server name the client asked for."""
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps the connection open between requests

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            port = self.client_address[1]
            state.requests.append((port, self.path, state.sni.get(port)))
            body = b"x" * BIG if self.path == "/big" else b"ok " + self.path.encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                send(self, 200, body, {"Content-Type": "text/plain"})

        def finish(self) -> None:
            super().finish()
            state.closed.append(self.client_address[1])

        def log_message(self, *args: object) -> None:
            pass

    class Listening(ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self):  # type: ignore[no-untyped-def]
            sock, address = super().get_request()
            if tls is None:
                return sock, address
            tls.sni_callback = lambda conn, name, _ctx: state.sni.__setitem__(
                conn.getpeername()[1], name
            )
            return tls.wrap_socket(sock, server_side=True), address

    httpd = Listening(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.port = httpd.server_address[1]
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def resolve_to(table: dict[str, str]):
    return lambda host: [table[host]]


LOCAL = resolve_to({name: "127.0.0.1" for name in NAMES})


def ports(server: Server) -> list[int]:
    return [port for port, _path, _sni in server.requests]


def test_a_second_fetch_of_the_same_address_goes_over_the_first_connection() -> None:
    async def two_fetches(port: int) -> list[bytes]:
        first = await fetch_guarded_async(f"http://a.test:{port}/1", policy=ALLOWED, resolve=LOCAL)
        # Another name on the same checked address and port: plain HTTP, so the same
        # connection may carry it (the Host header names the site).
        second = await fetch_guarded_async(f"http://b.test:{port}/2", policy=ALLOWED, resolve=LOCAL)
        return [first.body, second.body]

    with http11_server() as server:
        assert asyncio.run(two_fetches(server.port)) == [b"ok /1", b"ok /2"]
        assert [path for _port, path, _sni in server.requests] == ["/1", "/2"]
        assert len(set(ports(server))) == 1


def test_each_fetch_is_checked_again_before_a_kept_connection_carries_it() -> None:
    async def fetches(port: int) -> str:
        await fetch_guarded_async(f"http://a.test:{port}/1", policy=ALLOWED, resolve=LOCAL)
        # The same name, now without the opt-in: refused, although a connection to that
        # very address is open and idle.
        with pytest.raises(FetchError) as refused:
            await fetch_guarded_async(f"http://a.test:{port}/2", policy=SsrfPolicy(), resolve=LOCAL)
        return refused.value.reason

    with http11_server() as server:
        assert "blocked" in asyncio.run(fetches(server.port)).lower()
        assert [path for _port, path, _sni in server.requests] == ["/1"]


def test_a_name_that_now_resolves_elsewhere_is_dialled_there_not_over_the_kept_connection() -> None:
    table = {"a.test": "127.0.0.1", "b.test": "127.0.0.1"}

    async def fetches(port: int) -> str:
        await fetch_guarded_async(
            f"http://a.test:{port}/1", policy=ALLOWED, resolve=resolve_to(table)
        )
        table["a.test"] = "127.0.0.2"  # nothing listens there
        with pytest.raises(FetchError) as failed:
            await fetch_guarded_async(
                f"http://a.test:{port}/2", policy=ALLOWED, resolve=resolve_to(table)
            )
        return failed.value.reason

    with http11_server() as server:
        assert asyncio.run(fetches(server.port)).startswith("connection failed")
        assert [path for _port, path, _sni in server.requests] == ["/1"]


def test_a_body_cut_at_the_cap_closes_its_connection() -> None:
    async def fetches(port: int) -> bool:
        capped = await fetch_guarded_async(
            f"http://a.test:{port}/big", policy=ALLOWED, resolve=LOCAL, max_response_bytes=32_000
        )
        await fetch_guarded_async(f"http://a.test:{port}/after", policy=ALLOWED, resolve=LOCAL)
        return capped.truncated

    with http11_server() as server:
        assert asyncio.run(fetches(server.port)) is True
        # The rest of the capped body is never read, so its connection is closed, not
        # handed on with megabytes still to come.
        assert len(set(ports(server))) == 2


def test_the_kept_connections_close_with_their_event_loop() -> None:
    with http11_server() as server:
        # The blocking door runs a loop of its own per call: nothing outlives it.
        fetch_guarded(f"http://a.test:{server.port}/1", policy=ALLOWED, resolve=LOCAL)
        fetch_guarded(f"http://a.test:{server.port}/2", policy=ALLOWED, resolve=LOCAL)
        assert len(set(ports(server))) == 2
        for _ in range(100):
            if sorted(server.closed) == sorted(ports(server)):
                break
            threading.Event().wait(0.02)
        assert sorted(server.closed) == sorted(ports(server))


@pytest.fixture
def tls(monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """A server context whose certificate names a.test and b.test, trusted by the fetcher."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*NAMES).configure_cert(server_context)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    monkeypatch.setattr(http, "tls_context", lambda: client_context)
    return server_context


def test_a_kept_tls_connection_never_carries_another_host_names_request(tls) -> None:
    async def fetches(port: int) -> None:
        for name, path in (("a.test", "/1"), ("b.test", "/2"), ("a.test", "/3")):
            response = await fetch_guarded_async(
                f"https://{name}:{port}{path}", policy=ALLOWED, resolve=LOCAL
            )
            assert response.body == b"ok " + path.encode()

    with http11_server(tls) as server:
        asyncio.run(fetches(server.port))
        by_path = {path: (port, sni) for port, path, sni in server.requests}
        # Same address and port, but b.test asked for its own TLS connection (its own
        # name sent and its certificate checked); a.test's third request reused its first.
        assert by_path["/1"][1] == "a.test" and by_path["/2"][1] == "b.test"
        assert by_path["/1"][0] != by_path["/2"][0]
        assert by_path["/3"] == by_path["/1"]
