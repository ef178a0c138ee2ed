"""POST a JSON document to a webhook, through the same SSRF guard as every fetch.

The host is classified, resolved once, every answer classified, and the connection made to
the checked address (the name travels in ``Host`` and as TLS SNI), exactly as for a GET
(``net.http``). Redirects are not followed: a webhook that answers 3xx is misconfigured, and
following it would let the receiver point us anywhere. One deadline covers DNS, connect,
upload and the (capped) answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from enrichment.pipeline.net.http import (
    Deadline,
    FetchError,
    _checked_addresses,
    _is_ip_literal,
    _read_capped,
    _session,
    blocking,
    describe_error,
    parse_url,
    pinned_url,
)
from enrichment.pipeline.net.ssrf import Resolver, SsrfPolicy, system_resolve

MAX_ANSWER_BYTES = 4_000
USER_AGENT = "ControlUI-Alerts/1"


@dataclass(frozen=True)
class PostAnswer:
    status: int
    body: str  # the first MAX_ANSWER_BYTES of the answer, for the delivery record
    address: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


async def post_json_guarded_async(
    url: str,
    payload: Mapping[str, Any],
    *,
    policy: SsrfPolicy,
    resolve: Resolver = system_resolve,
    timeout_seconds: float = 10,
) -> PostAnswer:
    """POST ``payload`` as JSON to ``url``; FetchError (short reason) when it was blocked,
    could not connect or timed out. Any HTTP answer, 2xx or not, is a ``PostAnswer``."""
    deadline = Deadline(time.monotonic, timeout_seconds)
    target = parse_url(url)
    data = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "Host": target.host}
    sni = target.hostname if target.protocol == "https:" and not _is_ip_literal(target) else None
    try:
        async with asyncio.timeout(max(0.0, deadline.remaining())), _session() as session:
            addresses = await _checked_addresses(target, policy, resolve)
            last_error: aiohttp.ClientConnectorError | None = None
            for address in addresses:
                try:
                    response = await session.post(
                        pinned_url(target, address),
                        data=data,
                        headers=headers,
                        allow_redirects=False,
                        server_hostname=sni,
                    )
                except aiohttp.ClientConnectorError as error:
                    last_error = error
                    continue
                try:
                    body, _ = await _read_capped(
                        response.content.iter_chunked(MAX_ANSWER_BYTES), MAX_ANSWER_BYTES
                    )
                finally:
                    response.close()
                text = body.decode("utf-8", "replace")
                return PostAnswer(response.status, text, address)
            assert last_error is not None  # _checked_addresses never returns an empty tuple
            raise last_error
    except TimeoutError as error:
        raise deadline.expired_error() from error
    except aiohttp.ClientError as error:
        raise FetchError(f"connection failed: {describe_error(error)}") from error


post_json_guarded = blocking(post_json_guarded_async)
