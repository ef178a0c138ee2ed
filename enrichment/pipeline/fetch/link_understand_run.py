"""The built-in ``link-understand`` run inside the caller's event loop (see ``link_understand``).

``run_in_process`` parses the argv with the script's parser, fetches with the async guarded
fetcher, extracts through ``extract`` (a process pool's ``run`` in the server) and returns the
``CommandResult`` the subprocess runner would have built from the script's output.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from enrichment.pipeline.config.model import WebFetchConfig
from enrichment.pipeline.fetch.link_understand import (
    EMPTY_STDIN,
    IN_PROCESS_TYPE,
    CliExit,
    PageRequest,
    cache_ttl_seconds,
    capturing_parser,
    extract_fetched,
    extract_file,
    page_output,
    parse_request,
)
from enrichment.pipeline.fetch.webfetch import (
    page_cache_key,
    page_result_from_cache,
    page_result_to_cache,
)
from enrichment.pipeline.net.http import (
    FetchError,
    clamp_max_response_bytes,
    fetch_guarded_async,
    guard_url_async,
)
from enrichment.pipeline.net.ssrf import Resolver, SsrfPolicy, system_resolve
from enrichment.pipeline.runner import DEFAULT_MAX_STDOUT_BYTES, STDERR_TAIL_BYTES, CommandResult
from enrichment.pipeline.templates import js_trim

T = TypeVar("T")
Extract = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class AsyncPageCache:
    get: Callable[[str], Awaitable[str | None]]
    set: Callable[[str, str], Awaitable[None]]


async def _inline(function: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(function, *args)


class _Failure(Exception):
    """The script would print ``<origin>: <reason>`` on stderr and exit 1."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def run_in_process(
    argv: Sequence[str],
    *,
    timeout_seconds: float,
    policy: SsrfPolicy,
    settings: WebFetchConfig | None = None,
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
    cache: AsyncPageCache | None = None,
    extract: Extract = _inline,
    resolve: Resolver = system_resolve,
    clock: Callable[[], float] = time.monotonic,
) -> CommandResult:
    """Run ``link-understand argv[1:]`` here; the result is what the subprocess would give.

    ``settings`` are the stored ``tools.web.fetch`` settings the subprocess gets in
    ``LINK_UNDERSTAND_FETCH`` (limits, user agent, cache TTL: 0 turns ``cache`` off); the
    command-line flags win over them, as in the script. Only cancellation propagates; every
    other fault is a failed ``CommandResult``.
    """
    started = clock()
    settings = settings if settings is not None else WebFetchConfig()
    if cache_ttl_seconds(settings) <= 0:
        cache = None

    def finish(
        status: int | None, stdout: str, stderr: str, reason: str | None = None
    ) -> CommandResult:
        elapsed_ms = int((clock() - started) * 1000)
        result = _result(status, stdout, stderr, reason, elapsed_ms, max_stdout_bytes)
        return replace(result, attempt_type=IN_PROCESS_TYPE)

    try:
        request = parse_request(capturing_parser(), argv[1:], settings)
    except CliExit as exit_:
        return finish(exit_.status, exit_.stdout, exit_.stderr)
    try:
        async with asyncio.timeout(timeout_seconds):
            output = await _produce(request, policy, settings, cache, extract, resolve)
    except TimeoutError:
        return finish(None, "", "", f"timed out after {timeout_seconds:g}s")
    except (FetchError, _Failure) as error:
        return finish(1, "", f"{request.origin}: {error.reason}\n")
    except OSError as error:
        return finish(1, "", f"{request.origin}: {error.strerror or error}\n")
    except asyncio.CancelledError:
        raise
    except Exception as error:  # e.g. the pool worker died: say so instead of hanging
        reason = getattr(error, "reason", None) or f"{type(error).__name__}: {error}"
        return finish(None, "", "", reason)
    return finish(0, output + "\n", "")


async def _produce(
    request: PageRequest,
    policy: SsrfPolicy,
    settings: WebFetchConfig,
    cache: AsyncPageCache | None,
    extract: Extract,
    resolve: Resolver,
) -> str:
    if request.from_stdin:
        # The server's runner gives a CLI no stdin (the subprocess reads an empty one): the
        # page-on-stdin form is OpenClaw's, and here it fails as the script would.
        raise _Failure(EMPTY_STDIN)
    if request.html_file:
        path = request.html_file
        raw = await asyncio.to_thread(Path(path).read_bytes)
        output, reason = await extract(extract_file, raw, path.endswith(".gz"), request.mode,
                                       request.base_url, request.max_chars, not request.no_wrap)  # fmt: skip
        if reason is not None:
            raise _Failure(reason)
        return str(output)
    url = request.url or ""
    key = page_cache_key(url, request.mode, request.max_chars, policy)
    use_cache = cache if not request.no_cache else None
    if use_cache is not None:
        # As ``webfetch.read_page``: the SSRF guard runs before the cache is asked, so no
        # cached page is served for a URL blocked now.
        await guard_url_async(url, policy=policy, resolve=resolve)
        hit = await use_cache.get(key)
        if hit is not None:
            return page_output(page_result_from_cache(hit), request)
    response = await fetch_guarded_async(
        url,
        policy=policy,
        timeout_seconds=request.timeout,
        resolve=resolve,
        max_redirects=settings.max_redirects,
        max_response_bytes=clamp_max_response_bytes(settings.max_response_bytes),
        user_agent=settings.user_agent,
    )
    result = await extract(extract_fetched, url, response, request.mode, request.max_chars)
    if isinstance(result, str):
        raise _Failure(result)
    if use_cache is not None:
        await use_cache.set(key, page_result_to_cache(result))
    return page_output(result, request)


def _result(
    status: int | None,
    stdout: str,
    stderr: str,
    reason: str | None,
    duration_ms: int,
    max_stdout_bytes: int,
) -> CommandResult:
    """The CommandResult ``runner.run_command`` builds from the same stdout/stderr/exit."""
    raw = stdout.encode("utf-8", errors="surrogateescape")
    tail = js_trim(
        stderr.encode("utf-8", errors="replace")[-STDERR_TAIL_BYTES:].decode(
            "utf-8", errors="replace"
        )
    )
    if reason is not None:  # timed out, or the run never finished (no exit status)
        return CommandResult("failed", reason, None, duration_ms, "", 0, tail)
    if len(raw) > max_stdout_bytes:
        return CommandResult("failed", "output too large", None, duration_ms, "", len(raw), tail)
    text = js_trim(raw.decode("utf-8", errors="replace"))
    if status:
        return CommandResult(
            "failed", f"exited with code {status}", status, duration_ms, text, len(raw), tail
        )
    if not text:
        return CommandResult("skipped", "empty output", status, duration_ms, "", len(raw), tail)
    return CommandResult("success", None, status, duration_ms, text, len(raw), tail)
