"""The guarded fetch of ``webfetch`` on an event loop (httpx.AsyncClient).

Same rules, hop for hop, as ``webfetch.fetch_guarded``: every hop's host is classified and
resolved once, every answer classified, the connection dialled to the checked address with the
hostname only in ``Host`` and SNI; redirects are re-checked, counted and loop-detected;
sensitive headers are dropped across origins; the body is capped at ``max_response_bytes``;
one deadline covers DNS, every hop and the body. The reasons of the ``FetchError`` raised are
the same strings, so the in-process fetcher prints what the console script prints.

DNS (``getaddrinfo``) cannot be awaited, so the check runs in a thread and the deadline waits
for it from the loop.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from functools import cache

import httpx

from enrichment.pipeline.fetch.ssrf import (
    UNRESOLVED,
    Resolver,
    SsrfPolicy,
    blocked_message,
    check_url_async,
    system_resolve,
)
from enrichment.pipeline.fetch.webfetch import (
    ACCEPT,
    ACCEPT_LANGUAGE,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_USER_AGENT,
    REDIRECT_STATUSES,
    SENSITIVE_HEADERS,
    Clock,
    FetchError,
    FetchResponse,
)

# The helpers below are shared with the blocking fetcher on purpose: one parser, one origin
# rule, one deadline, so both doors answer the same way.
from enrichment.pipeline.fetch.webfetch import _Deadline as Deadline
from enrichment.pipeline.fetch.webfetch import _describe as describe_error
from enrichment.pipeline.fetch.webfetch import _origin as origin_of
from enrichment.pipeline.fetch.webfetch import _parse_url as parse_url


@cache
def tls_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; a fresh client per hop must not pay it again.
    return httpx.create_ssl_context()


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
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Clock = time.monotonic,
) -> FetchResponse:
    """GET ``url`` through the SSRF guard without blocking the loop; raises FetchError."""
    deadline = Deadline(clock, timeout_seconds)
    headers = {
        "Accept": ACCEPT,
        "User-Agent": user_agent or DEFAULT_USER_AGENT,
        "Accept-Language": ACCEPT_LANGUAGE,
        **(extra_headers or {}),
    }
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            return await _follow(transport, url, headers, policy, resolve, max_redirects,
                                 max_response_bytes, deadline)  # fmt: skip
    except (httpx.TimeoutException, TimeoutError) as error:
        raise deadline.expired_error() from error
    except httpx.HTTPError as error:
        raise FetchError(f"connection failed: {describe_error(error)}") from error


async def guard_url_async(url: str, *, policy: SsrfPolicy, resolve: Resolver = system_resolve,
                          timeout_seconds: float = 30) -> None:  # fmt: skip
    """``webfetch.guard_url`` without blocking the loop: raise FetchError when ``url`` is not
    a fetchable http(s) URL or the SSRF guard blocks it now."""
    deadline = Deadline(time.monotonic, timeout_seconds)
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())):
            await _checked_addresses(parse_url(url), policy, resolve)
    except TimeoutError as error:
        raise deadline.expired_error() from error


async def _follow(
    transport: httpx.AsyncBaseTransport | None,
    url: str,
    headers: dict[str, str],
    policy: SsrfPolicy,
    resolve: Resolver,
    max_redirects: int,
    max_response_bytes: int,
    deadline: Deadline,
) -> FetchResponse:
    current = parse_url(url)
    final_url = url
    seen_targets: set[str] = set()
    redirects = 0
    while True:
        # A fresh connection pool per hop, as in the blocking fetcher (pools key on the IP).
        hop_transport = transport or httpx.AsyncHTTPTransport(verify=tls_context())
        async with httpx.AsyncClient(
            transport=hop_transport, trust_env=False, follow_redirects=False
        ) as client:
            response, address = await _send_pinned(client, current, headers, policy, resolve,
                                                   deadline)  # fmt: skip
            if response.status_code not in REDIRECT_STATUSES:
                return await _finish(response, final_url, address, max_response_bytes, deadline)
            location = response.headers.get("location")
            await response.aclose()
        if not location:
            raise FetchError(f"Redirect missing location header ({response.status_code})")
        redirects += 1
        if redirects > max_redirects:
            raise FetchError(f"Too many redirects (limit: {max_redirects})")
        target = parse_url(str(current.join(location.strip())))
        if str(target) in seen_targets:
            raise FetchError("Redirect loop detected")
        seen_targets.add(str(target))
        if origin_of(target) != origin_of(current):
            for name in [name for name in headers if name.lower() in SENSITIVE_HEADERS]:
                del headers[name]
        current, final_url = target, str(target)


async def _send_pinned(
    client: httpx.AsyncClient,
    url: httpx.URL,
    headers: dict[str, str],
    policy: SsrfPolicy,
    resolve: Resolver,
    deadline: Deadline,
) -> tuple[httpx.Response, str]:
    addresses = await _checked_addresses(url, policy, resolve)
    host_header = url.netloc.decode("ascii").rsplit("@", 1)[-1]
    last_error: httpx.ConnectError | None = None
    for address in addresses:
        request = client.build_request(
            "GET",
            url.copy_with(host=address),
            headers={**headers, "Host": host_header},
            extensions={"sni_hostname": url.host, "timeout": deadline.httpx_timeouts()},
        )
        try:
            return await client.send(request, stream=True), address
        except httpx.ConnectError as error:
            last_error = error
        except httpx.InvalidURL as error:
            # As in the blocking fetcher: httpx works out a redirect's next URL even with
            # follow_redirects off, so a malformed Location raises here.
            raise FetchError("Invalid redirect location") from error
    assert last_error is not None  # _checked_addresses never returns an empty tuple
    raise last_error


async def _checked_addresses(
    url: httpx.URL, policy: SsrfPolicy, resolve: Resolver
) -> tuple[str, ...]:
    # The caller's deadline (asyncio.timeout) bounds the wait; a lookup that outlives it
    # finishes in its thread and is ignored.
    verdict = await check_url_async(str(url), policy, resolve)
    if verdict.blocked:
        raise FetchError(blocked_message(verdict.reason or "blocked"))
    if not verdict.addresses:
        raise FetchError(UNRESOLVED)
    return verdict.addresses


async def _finish(
    response: httpx.Response,
    final_url: str,
    address: str,
    max_response_bytes: int,
    deadline: Deadline,
) -> FetchResponse:
    try:
        if not 200 <= response.status_code < 300:
            raise FetchError(f"HTTP {response.status_code}")
        body, truncated = await _read_capped(response.aiter_bytes(), max_response_bytes)
    finally:
        await response.aclose()
    warnings = (f"Response body truncated after {max_response_bytes} bytes.",) if truncated else ()
    return FetchResponse(
        final_url=final_url,
        status=response.status_code,
        headers=tuple((key.lower(), value) for key, value in response.headers.multi_items()),
        body=body,
        truncated=truncated,
        warnings=warnings,
        address=address,
    )


async def _read_capped(chunks: AsyncIterator[bytes], limit: int) -> tuple[bytes, bool]:
    """Read until ``limit`` bytes; one byte past it tells a capped body from an exact one."""
    buffer = bytearray()
    async for chunk in chunks:
        buffer.extend(chunk)
        if len(buffer) > limit:
            return bytes(buffer[:limit]), True
    return bytes(buffer), False
