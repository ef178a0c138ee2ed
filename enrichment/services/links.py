"""The built-in ``link-understand`` inside the serving process (daphne or a worker).

A link model whose command is the bare name ``link-understand`` runs through
``pipeline.fetch.link_understand_run.run_in_process``: the fetch on this event loop, the
extraction in the process pool (``services.pool``; trafilatura holds the GIL, so threads
would not help), the page cache in Django's cache (Redis when configured, shared with the
console script). Every other command runs as a subprocess, exactly as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisSerializer

from common import metrics
from common.workpool import WorkTimeout, measuring_cpu
from enrichment.pipeline.config.model import Config, WebFetchConfig
from enrichment.pipeline.fetch.cli_environment import fetch_environment
from enrichment.pipeline.fetch.fair_slots import slot_key
from enrichment.pipeline.fetch.link_understand import cache_ttl_seconds, is_builtin
from enrichment.pipeline.fetch.link_understand_run import AsyncPageCache, run_in_process
from enrichment.pipeline.net.http import tls_context
from enrichment.pipeline.net.ssrf import Resolver
from enrichment.pipeline.runner import (
    DEFAULT_MAX_STDOUT_BYTES,
    CommandResult,
    CommandRunner,
    run_command,
)
from enrichment.services.pool import fair_run, work_pool

T = TypeVar("T")


class ExtractionTimeout(Exception):
    """One extraction ran past ``EXTRACTION_TIMEOUT_SECONDS``; its process was replaced."""

    def __init__(self, seconds: float) -> None:
        self.reason = (
            f"extraction-timeout: extracting the page took over {seconds:g} s "
            "(its process was stopped)"
        )
        super().__init__(self.reason)


async def fair_extract(function: Callable[..., T], *args: Any) -> T:
    """Extract in the pool, at most ``EXTRACTION_SLOTS_PER_HOST`` pages of one host at once
    (``services.pool.fair_run``), its CPU time counted for ``/metrics``.

    Each extraction has ``EXTRACTION_TIMEOUT_SECONDS`` once it holds a process (below a
    link's own timeout, so a hostile page ends with a reason naming it); past that its
    process is stopped and replaced.
    """
    seconds = float(settings.EXTRACTION_TIMEOUT_SECONDS)
    try:
        value, cpu_seconds = await fair_run(
            slot_key(args), measuring_cpu, function, *args, timeout=seconds
        )
    except WorkTimeout:
        raise ExtractionTimeout(seconds) from None
    metrics.extraction_observe(cpu_seconds)
    return value


def start_extraction_pool() -> None:
    """Server and worker start-up: spawn and warm the pool before the first request, and
    load the CA bundle the fetcher's TLS connections verify with (~50 ms, paid by the first
    https link otherwise)."""
    work_pool()
    tls_context()


def _in_memory_cache() -> bool:
    """The default cache without Redis lives in this process's memory: it never waits on I/O,
    so it is asked on the event loop: the thread hops around the get and the set of each
    page were ~10% of daphne's GIL-holding samples under ``bench/ws_load.py --builtin``, far
    more than the calls."""
    return isinstance(caches[DEFAULT_CACHE_ALIAS], LocMemCache)


# Django's Redis cache, asked on the event loop through an asyncio client (the thread hop
# and the blocking client around each get and set were ~7% of a runworker's GIL-holding
# samples), with the keys and values Django's own ``cache.get``/``cache.set`` use, so the
# console script shares the pages. Any other cache backend is asked from a thread.
_SERIALIZER = RedisSerializer()
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def _redis_cache() -> tuple[RedisCache, aioredis.Redis] | None:
    """The default cache and an asyncio client of its server, when it is Redis on one server
    with Django's default serializer (as ``controlui/settings.py`` configures it)."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    params = settings.CACHES[DEFAULT_CACHE_ALIAS]
    location = params.get("LOCATION")
    single = isinstance(location, str) and not any(sep in location for sep in ",;")
    if not isinstance(backend, RedisCache) or not single or params.get("OPTIONS"):
        return None
    loop = asyncio.get_running_loop()
    if loop not in _async_clients:
        _async_clients[loop] = aioredis.Redis.from_url(
            str(location), socket_connect_timeout=2, socket_timeout=10
        )
    return backend, _async_clients[loop]


async def _cache_call(function: Callable[..., T], *args: Any) -> T:
    if _in_memory_cache():
        return function(*args)
    return await asyncio.to_thread(function, *args)


async def _cache_get(key: str) -> str | None:
    try:
        redis_cache = _redis_cache()
        if redis_cache is None:
            value = await _cache_call(cache.get, key)
        else:
            backend, client = redis_cache
            raw = await client.get(backend.make_and_validate_key(key))
            value = None if raw is None else _SERIALIZER.loads(raw)
    except Exception:  # like the script: an unavailable cache is no cache, not a failure
        return None
    return value if isinstance(value, str) else None


async def _cache_set(key: str, value: str, *, ttl_seconds: float) -> None:
    with contextlib.suppress(Exception):
        redis_cache = _redis_cache()
        if redis_cache is None:
            await _cache_call(cache.set, key, value, ttl_seconds)
            return
        backend, client = redis_cache
        timeout = backend.get_backend_timeout(ttl_seconds)  # whole seconds, as Django's
        if timeout != 0:  # 0: Django would delete the key; page_cache never passes it
            expiry = None if timeout is None else int(timeout)
            await client.set(
                backend.make_and_validate_key(key), _SERIALIZER.dumps(value), ex=expiry
            )


def page_cache(settings: WebFetchConfig) -> AsyncPageCache | None:
    """Django's cache with the stored ``cacheTtlMinutes`` (0: no cache), as the script uses."""
    ttl_seconds = cache_ttl_seconds(settings)
    if ttl_seconds <= 0:
        return None
    return AsyncPageCache(get=_cache_get, set=partial(_cache_set, ttl_seconds=ttl_seconds))


def link_runner(
    *, settings: WebFetchConfig, subprocess: CommandRunner, resolve: Resolver
) -> CommandRunner:
    """The runner for link models: the bare ``link-understand`` in-process, anything else
    through ``subprocess``. ``settings`` are the stored ``tools.web.fetch`` settings (SSRF
    policy, limits, user agent, cache TTL) that the subprocess gets in its environment
    (``linkcli.fetch_environment``)."""
    cache_for_run = page_cache(settings)

    async def run(
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
        cwd: str | None = None,
    ) -> CommandResult:
        if not is_builtin(argv):
            return await subprocess(
                argv, timeout_seconds=timeout_seconds, max_stdout_bytes=max_stdout_bytes, cwd=cwd
            )
        return await run_in_process(
            argv,
            timeout_seconds=timeout_seconds,
            policy=settings.ssrf_policy,
            settings=settings,
            max_stdout_bytes=max_stdout_bytes,
            cache=cache_for_run,
            extract=fair_extract,
            resolve=resolve,
        )

    return run


def cli_environment(config: Config) -> dict[str, str]:
    """What every CLI entry runs with: this venv's scripts on PATH and the stored fetch policy."""
    env = dict(os.environ)
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = scripts + os.pathsep + env.get("PATH", "")
    env.update(fetch_environment(config.web_fetch))  # the stored tools.web.fetch settings
    return env


async def run_cli(
    config: Config,
    argv: Sequence[str],
    *,
    timeout_seconds: float,
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
    cwd: str | None = None,
) -> CommandResult:
    """A CLI entry as a subprocess; its environment is built when one runs (a copy of
    ``os.environ`` per message was ~2% of a worker's CPU with the built-in fetcher)."""
    return await run_command(
        argv,
        timeout_seconds=timeout_seconds,
        max_stdout_bytes=max_stdout_bytes,
        cwd=cwd,
        env=cli_environment(config),
    )
