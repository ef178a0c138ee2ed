"""This process's one pool of worker processes (``common.workpool``): the page extraction of
the built-in ``link-understand`` and the text of files and PDFs (uploads, attachments).

It starts with the server (``controlui/asgi.py``, imported by daphne and by ``runworker``)
with ``EXTRACTION_WORKERS`` processes, each warmed up (trafilatura, the file extractors and
pypdf imported) before the first request; a process that never started it (``manage.py
enrich``, tests) starts it on first use.

Fairness: a job holds one of its key's slots (``FairSlots``: at most
``EXTRACTION_SLOTS_PER_HOST`` at once per page host, and as many for all files together)
while it waits for and runs in a process, so one sender's slow pages or one PDF bomb cannot
hold every process while other users' links wait.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from common.workpool import WorkPool
from enrichment.pipeline.fetch.fair_slots import FairSlots, unfair_pool

T = TypeVar("T")
logger = logging.getLogger(__name__)

_pool: WorkPool | None = None
_pool_lock = threading.Lock()
_fair_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FairSlots] = (
    weakref.WeakKeyDictionary()
)


def warm_up_worker() -> None:
    """What every worker imports before its first job, so no job pays for it."""
    import pypdf  # noqa: F401

    import enrichment.pipeline.files.extraction  # noqa: F401
    from enrichment.pipeline.fetch.link_understand import warm_up

    warm_up()


def work_pool() -> WorkPool:
    """The pool, started (every process spawned and warming up) on the first call."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkPool(
                settings.EXTRACTION_WORKERS, initializer=warm_up_worker, name="extraction worker"
            )
            _pool.start()
            atexit.register(close_work_pool)
            problem = unfair_pool(settings.EXTRACTION_WORKERS, settings.EXTRACTION_SLOTS_PER_HOST)
            if problem is not None:  # said where operators look (manage.py check: W002)
                logger.warning("the extraction pool is not fair: %s", problem)
        return _pool


def close_work_pool() -> None:
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.close()


async def fair_run(
    key: str, function: Callable[..., T], *args: Any, timeout: float, **kwargs: Any
) -> T:
    """``function(*args, **kwargs)`` in the pool, holding one of ``key``'s slots; past
    ``timeout`` seconds in a process, that process is stopped and ``WorkTimeout`` raised."""
    slots = _fair_slots.setdefault(
        asyncio.get_running_loop(), FairSlots(settings.EXTRACTION_SLOTS_PER_HOST)
    )
    async with slots.hold(key):
        return await work_pool().run(function, *args, timeout=timeout, **kwargs)
