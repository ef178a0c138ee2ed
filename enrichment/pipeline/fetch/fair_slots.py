"""A cap per key (a page's host) on the extraction pool's slots: fairness between senders.

Without it, a few slow pages of one host (4.4 MB of hidden spans, sent three times) could
hold every extraction process while another user's ordinary link waited behind them. Each
key may hold at most ``cap`` slots at once; its next page waits for one of its own to end,
while other hosts' pages go straight to the pool.

    slots = FairSlots(cap=1)
    async with slots.hold("slow.example"):
        await pool.run(...)
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit


class FairSlots:
    """At most ``cap`` holders per key; the others wait in arrival order (one event loop)."""

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError("a key needs at least one slot")
        self.cap = cap
        self._held: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def held(self, key: str) -> int:
        return self._held.get(key, 0)

    def waiting(self, key: str) -> int:
        return len(self._waiting.get(key, ()))

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        if self._held.get(key, 0) < self.cap:
            self._held[key] = self._held.get(key, 0) + 1
        else:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(key, deque()).append(waiter)
            try:
                await waiter  # a releasing holder hands its slot over (still counted)
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._release(key)  # handed over just as we were cancelled: pass it on
                else:
                    queue = self._waiting.get(key)
                    if queue is not None and waiter in queue:
                        queue.remove(waiter)
                        if not queue:
                            del self._waiting[key]
                raise
        try:
            yield
        finally:
            self._release(key)

    def _release(self, key: str) -> None:
        queue = self._waiting.get(key)
        while queue:
            waiter = queue.popleft()
            if not waiter.done():
                if not queue:
                    del self._waiting[key]
                waiter.set_result(None)
                return
        self._waiting.pop(key, None)
        self._held[key] -= 1
        if not self._held[key]:
            del self._held[key]


def unfair_pool(processes: int, cap: int) -> str | None:
    """Why a pool of ``processes`` with ``cap`` slots per key is not fair, or None.

    Fairness needs a process that one key's pages cannot take: with ``cap`` at least the
    pool's size, one sender's slow pages can hold every process while other links wait.

    >>> unfair_pool(2, 1) is None
    True
    >>> unfair_pool(1, 1).startswith("pages of one host may hold the one extraction process")
    True
    """
    if cap < processes:
        return None
    held = (
        "the one extraction process" if processes == 1 else f"all {processes} extraction processes"
    )
    return (
        f"pages of one host may hold {held} at once "
        f"(EXTRACTION_WORKERS={processes}, EXTRACTION_SLOTS_PER_HOST={cap})"
    )


def slot_key(args: tuple[object, ...]) -> str:
    """The key of an extraction: the host of its URL (the first argument), else "files"."""
    first = args[0] if args else None
    if isinstance(first, str) and "://" in first:
        return (urlsplit(first).hostname or "").lower() or "files"
    return "files"
