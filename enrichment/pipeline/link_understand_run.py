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

from enrichment.pipeline.link_understand import (
    IN_PROCESS_TYPE,
    CliExit,
    PageRequest,
    build_parser,
    extract_fetched,
    extract_file,
    page_output,
    parse_request,
)
from enrichment.pipeline.runner import DEFAULT_MAX_STDOUT_BYTES, STDERR_TAIL_BYTES, CommandResult
from enrichment.pipeline.ssrf import Resolver, SsrfPolicy, system_resolve
from enrichment.pipeline.templates import js_trim
from enrichment.pipeline.webfetch import (
    FetchError,
    page_cache_key,
    page_result_from_cache,
    page_result_to_cache,
)
from enrichment.pipeline.webfetch_async import fetch_guarded_async

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
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
    cache: AsyncPageCache | None = None,
    extract: Extract = _inline,
    resolve: Resolver = system_resolve,
    clock: Callable[[], float] = time.monotonic,
) -> CommandResult:
    """Run ``link-understand argv[1:]`` here; the result is what the subprocess would give.

    Only cancellation propagates; every other fault is a failed ``CommandResult``.
    """
    started = clock()

    def finish(
        status: int | None, stdout: str, stderr: str, reason: str | None = None
    ) -> CommandResult:
        elapsed_ms = int((clock() - started) * 1000)
        result = _result(status, stdout, stderr, reason, elapsed_ms, max_stdout_bytes)
        return replace(result, attempt_type=IN_PROCESS_TYPE)

    try:
        request = parse_request(build_parser(capture=True), argv[1:])
    except CliExit as exit_:
        return finish(exit_.status, exit_.stdout, exit_.stderr)
    try:
        async with asyncio.timeout(timeout_seconds):
            output = await _produce(request, policy, cache, extract, resolve)
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
    cache: AsyncPageCache | None,
    extract: Extract,
    resolve: Resolver,
) -> str:
    if request.html_file:
        path = request.html_file
        raw = await asyncio.to_thread(Path(path).read_bytes)
        output, reason = await extract(extract_file, raw, path.endswith(".gz"), request.mode,
                                       request.base_url, request.max_chars, not request.no_wrap)  # fmt: skip
        if reason is not None:
            raise _Failure(reason)
        return str(output)
    url = request.url or ""
    key = page_cache_key(url, request.mode, request.max_chars)
    use_cache = cache if not request.no_cache else None
    if use_cache is not None:
        hit = await use_cache.get(key)
        if hit is not None:
            return page_output(page_result_from_cache(hit), request)
    response = await fetch_guarded_async(
        url, policy=policy, timeout_seconds=request.timeout, resolve=resolve
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
