"""The guarded HTTP fetch: the only door from the enrichment pipeline to the network.

Every hop (the first request and each redirect) is parsed, its host classified, its name
resolved **once**, every answer classified, and the TCP connection made to the checked address
itself. The hostname travels only in the ``Host`` header and as TLS SNI / certificate name,
so a DNS answer that changes between check and connect (DNS rebinding) cannot redirect us.

Worked example of a redirect chain with ``max_redirects=3``::

    GET http://a.test/      -> 302 Location: /b        (hop 1, same origin)
    GET http://a.test/b     -> 301 Location: http://c.test/   (hop 2, cross-origin: the
                                 Authorization/Cookie headers are dropped from here on)
    GET http://c.test/      -> 200                      final_url = "http://c.test/"

A fourth redirect would fail with ``Too many redirects (limit: 3)``; a hop back to an already
visited redirect target fails with ``Redirect loop detected``. The body is capped at
``max_response_bytes``; one deadline covers DNS, every hop and the body.

It runs on the caller's event loop (aiohttp: a C HTTP parser, about a third of httpx's CPU
per request); the blocking ``fetch_guarded`` runs this same code on a loop of its
own, so the console script and the in-process fetcher answer alike. DNS (``getaddrinfo``)
cannot be awaited, so the check runs in a thread and the deadline waits for it from the loop.

Connections are kept alive, one pool per event loop (``_pooled_session``): a TCP (and TLS)
handshake per fetch was about a tenth of daphne's CPU per enrichment of a link, and a
worker's (``bench/ws_load.py --builtin``: per message 4.4 -> 4.0-4.3 ms in daphne, 7.1-7.6
-> 6.1-6.5 ms in a worker, measured against a local keep-alive page server). A kept connection is reused only by a request whose host was checked
again and gave the same address, to the same port and scheme, and (TLS) for the same host
name: aiohttp's pool key holds the dialled address, port, TLS context and SNI name, so a
TLS connection opened for one hostname never carries another's request. A body cut at the
cap or an answer not read (an error status, a redirect) closes its connection; only one
read to its end goes back to the pool. The pool is closed with its loop (when the loop
shuts its async generators down: ``run_blocking``, ``asyncio.run``).
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
import re
import ssl
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, ParamSpec, TypeVar

import ada_url
import aiohttp
import certifi
from yarl import URL  # aiohttp's own URL type: how a parsed, pinned URL is handed to it

from enrichment.pipeline.net.ssrf import (
    UNRESOLVED,
    Resolver,
    SsrfPolicy,
    blocked_message,
    check_url_async,
    system_resolve,
)

# Header lines up to 64 KiB (aiohttp's default is 8 KiB; pages with large cookies exceed it).
MAX_HEADER_LINE = 65_536
READ_CHUNK = 65_536

DEFAULT_USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_2) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"
)
ACCEPT = "text/markdown, text/html;q=0.9, */*;q=0.1"
ACCEPT_LANGUAGE = "en-US,en;q=0.9"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "cookie2"})
DEFAULT_MAX_RESPONSE_BYTES = 2_000_000
KEEPALIVE_SECONDS = 15.0  # an idle kept connection is closed after this
MIN_RESPONSE_BYTES = 32_000
MAX_RESPONSE_BYTES = 10_000_000

Clock = Callable[[], float]
T = TypeVar("T")
P = ParamSpec("P")


class FetchError(Exception):
    """A fetch that did not produce a usable response; ``reason`` is short and stable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class FetchResponse:
    final_url: str
    status: int
    headers: tuple[tuple[str, str], ...]  # (lower-cased name, value), in received order
    body: bytes
    truncated: bool  # the body was cut at max_response_bytes
    warnings: tuple[str, ...]
    address: str  # the IP address the final hop was connected to

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    @property
    def content_type(self) -> str | None:
        return self.header("content-type")


def clamp_max_response_bytes(value: float | None) -> int:
    """Notes A2: floor, clamp to [32,000, 10,000,000]; missing, non-finite or <= 0 -> default."""
    if value is None or not math.isfinite(value) or value <= 0:
        return DEFAULT_MAX_RESPONSE_BYTES
    return min(MAX_RESPONSE_BYTES, max(MIN_RESPONSE_BYTES, math.floor(value)))


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on an event loop of its own and return its result.

    Unlike ``asyncio.run`` it does not wait for the loop's threads on the way out: a DNS
    lookup that outlived the deadline (getaddrinfo cannot be interrupted) finishes in its
    thread while the caller already has its "timed out" answer.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()  # shuts the default executor down without waiting


def parse_url(raw: str) -> ada_url.URL:
    """An http(s) URL with a host, parsed as browsers do (WHATWG, the same parser as the SSRF
    check), or FetchError("Invalid URL: must be http or https")."""
    try:
        url = ada_url.URL(raw.strip())
    except (ValueError, TypeError) as error:
        raise FetchError("Invalid URL: must be http or https") from error
    if url.protocol not in ("http:", "https:") or not url.hostname:
        raise FetchError("Invalid URL: must be http or https")
    return url


def origin_of(url: ada_url.URL) -> tuple[str, str, int | None]:
    default_port = {"http:": 80, "https:": 443}.get(url.protocol)
    return (url.protocol[:-1], url.hostname.lower(), int(url.port) if url.port else default_port)


class Deadline:
    """One budget for the whole operation (DNS, all hops, body)."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        self._clock = clock
        self._seconds = seconds
        self._ends_at = clock() + seconds

    def remaining(self) -> float:
        return self._ends_at - self._clock()

    def expired_error(self) -> FetchError:
        return FetchError(f"timed out after {self._seconds:g}s")


@cache
def tls_context() -> ssl.SSLContext:
    """Verified TLS with Mozilla's CA bundle (certifi), or the bundle ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` name. Loading a bundle costs milliseconds: once per process."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    return ssl.create_default_context(cafile=certifi.where())


async def fetch_guarded_async(
    url: str,
    *,
    policy: SsrfPolicy,
    resolve: Resolver = system_resolve,
    max_redirects: int = 3,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    timeout_seconds: float = 30,
    user_agent: str = DEFAULT_USER_AGENT,
    extra_headers: Mapping[str, str] | None = None,
    clock: Clock = time.monotonic,
) -> FetchResponse:
    """GET ``url`` through the SSRF guard; raises FetchError with a short reason. One deadline
    (``timeout_seconds``) covers DNS, every hop and reading the body."""
    deadline = Deadline(clock, timeout_seconds)
    headers = {
        "Accept": ACCEPT,
        "User-Agent": user_agent or DEFAULT_USER_AGENT,
        "Accept-Language": ACCEPT_LANGUAGE,
        **(extra_headers or {}),
    }
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            return await _follow(await _pooled_session(), url, headers, policy, resolve,
                                 max_redirects, max_response_bytes)  # fmt: skip
    except TimeoutError as error:
        raise deadline.expired_error() from error
    except aiohttp.ClientError as error:
        raise FetchError(f"connection failed: {describe_error(error)}") from error


async def guard_url_async(url: str, *, policy: SsrfPolicy, resolve: Resolver = system_resolve,
                          timeout_seconds: float = 30) -> None:  # fmt: skip
    """Raise FetchError when ``url`` is not a fetchable http(s) URL or the SSRF guard blocks
    it now (its name resolves to a blocked address today, whatever it resolved to when a
    page was cached)."""
    deadline = Deadline(time.monotonic, timeout_seconds)
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            await _checked_addresses(parse_url(url), policy, resolve)
    except TimeoutError as error:
        raise deadline.expired_error() from error


def blocking(function: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking door of an async function (the console script, tests): the same code,
    run on an event loop of its own (``run_blocking``), so it must not be called from a
    running loop's thread."""

    @functools.wraps(function)
    def door(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_blocking(function(*args, **kwargs))

    return door


def describe_error(error: BaseException) -> str:
    """The first line of a connection error, without aiohttp's restatement of the address."""
    cause = error.os_error if isinstance(error, aiohttp.ClientConnectorError) else error
    text = str(cause).strip().splitlines()
    return text[0][:200] if text else type(error).__name__


def _session(*, keep_alive: bool = False) -> aiohttp.ClientSession:
    """A session whose connections go to the address they were opened for, and (without
    ``keep_alive``) are closed after their one request."""
    kept: dict[str, Any] = {"keepalive_timeout": KEEPALIVE_SECONDS} if keep_alive else {}
    connector = aiohttp.TCPConnector(
        force_close=not keep_alive,
        limit=0,  # the callers bound concurrency (link slots, the pool of extraction)
        ssl=tls_context(),
        **kept,
    )
    return aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),  # no hop sends what another hop set
        timeout=aiohttp.ClientTimeout(total=None),  # the one deadline governs
        trust_env=False,  # no proxy from the environment can bypass the pinning
        max_line_size=MAX_HEADER_LINE,
        max_field_size=MAX_HEADER_LINE,
    )


@dataclass
class _Pool:
    session: aiohttp.ClientSession
    closer: AsyncGenerator[None, None]  # held here: the loop only keeps a weak reference


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()


async def _pooled_session() -> aiohttp.ClientSession:
    """The running loop's session of kept-alive connections (see the module's docstring)."""
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None or pool.session.closed:
        session = _session(keep_alive=True)
        pool = _Pool(session, _closed_with_the_loop(session))
        _POOLS[loop] = pool
        # Its first step registers it with the loop, whose shutdown_asyncgens() closes it.
        await anext(pool.closer)
    return pool.session


async def _closed_with_the_loop(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await session.close()


async def _follow(
    session: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str],
    policy: SsrfPolicy,
    resolve: Resolver,
    max_redirects: int,
    max_response_bytes: int,
) -> FetchResponse:
    current = parse_url(url)
    final_url = url  # reported unchanged when there is no redirect (notes A4)
    seen_targets: set[str] = set()
    redirects = 0
    while True:
        response, address = await _send_pinned(session, current, headers, policy, resolve)
        if response.status not in REDIRECT_STATUSES:
            return await _finish(response, final_url, address, max_response_bytes)
        location = response.headers.get("location")
        response.close()  # a redirect's body is never read
        if not location:
            raise FetchError(f"Redirect missing location header ({response.status})")
        redirects += 1
        if redirects > max_redirects:
            raise FetchError(f"Too many redirects (limit: {max_redirects})")
        target = _redirect_target(current, location)
        # Only redirect targets are remembered, so a hop back to the start URL is caught on
        # its second occurrence (reference behaviour).
        if target.href in seen_targets:
            raise FetchError("Redirect loop detected")
        seen_targets.add(target.href)
        if origin_of(target) != origin_of(current):
            for name in [name for name in headers if name.lower() in SENSITIVE_HEADERS]:
                del headers[name]
        current, final_url = target, target.href


_HAS_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _redirect_target(current: ada_url.URL, location: str) -> ada_url.URL:
    """The next hop's URL. A Location with a scheme must be a whole http(s) URL with a host
    (``http:%2F%2F127.0.0.1/x`` and ``http://[::1/x`` are refused, before anything is
    resolved); one without is resolved against the current URL."""
    given = location.strip()
    try:
        if _HAS_SCHEME.match(given):
            return parse_url(given)
        return parse_url(ada_url.URL(given, base=current.href).href)
    except (ValueError, FetchError) as error:
        raise FetchError("Invalid redirect location") from error


async def _send_pinned(
    session: aiohttp.ClientSession,
    url: ada_url.URL,
    headers: dict[str, str],
    policy: SsrfPolicy,
    resolve: Resolver,
) -> tuple[aiohttp.ClientResponse, str]:
    """Send one hop to each checked address in turn until one accepts the connection."""
    addresses = await _checked_addresses(url, policy, resolve)
    host_header = url.host  # the name as parsed (IDNA, default port left out), never userinfo
    # SNI and the certificate name: the host name; an IP literal sends none.
    sni = url.hostname if url.protocol == "https:" and not _is_ip_literal(url) else None
    last_error: aiohttp.ClientConnectorError | None = None
    for address in addresses:
        try:
            response = await session.get(
                pinned_url(url, address),
                headers={**headers, "Host": host_header},
                allow_redirects=False,
                server_hostname=sni,
            )
        except aiohttp.ClientConnectorError as error:
            last_error = error
            continue
        return response, address
    assert last_error is not None  # _checked_addresses never returns an empty tuple
    raise last_error


def pinned_url(url: ada_url.URL, address: str) -> URL:
    """``url`` with its host replaced by the checked address (IPv6 in brackets), as sent.
    The URL is already normalised by the one parser; aiohttp gets it as its own URL type,
    marked encoded so nothing is quoted twice.

    >>> str(pinned_url(ada_url.URL("https://other.test:8443/a?b=1"), "2001:db8::1"))
    'https://[2001:db8::1]:8443/a?b=1'
    """
    host = f"[{address}]" if ":" in address else address
    userinfo = url.username + (f":{url.password}" if url.password else "")
    authority = (f"{userinfo}@" if userinfo else "") + host + (f":{url.port}" if url.port else "")
    return URL(f"{url.protocol}//{authority}{url.pathname}{url.search}", encoded=True)


def _is_ip_literal(url: ada_url.URL) -> bool:
    return url.hostname.startswith("[") or url.hostname.replace(".", "").isdigit()


async def _checked_addresses(
    url: ada_url.URL, policy: SsrfPolicy, resolve: Resolver
) -> tuple[str, ...]:
    """Classify the host, resolve it once, classify every answer (any blocked answer blocks).

    The same answers are then dialled, so nothing is resolved again between check and connect.
    The caller's deadline (asyncio.timeout) bounds the wait; a lookup that outlives it
    finishes in its thread and is ignored.
    """
    verdict = await check_url_async(url.href, policy, resolve)
    if verdict.blocked:
        raise FetchError(blocked_message(verdict.reason or "blocked"))
    if not verdict.addresses:
        raise FetchError(UNRESOLVED)
    return verdict.addresses


async def _finish(
    response: aiohttp.ClientResponse,
    final_url: str,
    address: str,
    max_response_bytes: int,
) -> FetchResponse:
    try:
        if not 200 <= response.status < 300:
            raise FetchError(f"HTTP {response.status}")
        body, truncated = await _read_capped(
            response.content.iter_chunked(READ_CHUNK), max_response_bytes
        )
    finally:
        response.close()  # never drains the rest of a capped body
    warnings = (f"Response body truncated after {max_response_bytes} bytes.",) if truncated else ()
    return FetchResponse(
        final_url=final_url,
        status=response.status,
        headers=_decoded_headers(response.raw_headers),
        body=body,
        truncated=truncated,
        warnings=warnings,
        address=address,
    )


def _decoded_headers(raw: tuple[tuple[bytes, bytes], ...]) -> tuple[tuple[str, str], ...]:
    """(lower-cased name, value) in received order; values are UTF-8 when they all decode as
    UTF-8, else Latin-1 (each byte one character), so no header is ever dropped."""
    values = b"".join(value for _, value in raw)
    try:
        values.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = "latin-1"
    return tuple((name.decode("latin-1").lower(), value.decode(encoding)) for name, value in raw)


async def _read_capped(chunks: AsyncIterator[bytes], limit: int) -> tuple[bytes, bool]:
    """Read until ``limit`` bytes; reading one byte past it tells a capped body from one that
    is exactly ``limit`` long (the later reference behaviour)."""
    buffer = bytearray()
    async for chunk in chunks:
        buffer.extend(chunk)
        if len(buffer) > limit:
            return bytes(buffer[:limit]), True
    return bytes(buffer), False


fetch_guarded = blocking(fetch_guarded_async)
guard_url = blocking(guard_url_async)
