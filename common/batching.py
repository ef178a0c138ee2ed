"""Writes of concurrent tasks gathered into one thread hop (and one transaction).

A process under load runs many enrichments at once, each ending with a few small inserts and
an update. Written one by one, every run pays a thread hop, a transaction and the ORM's work
of building each statement; ``Gathered`` hands the items that arrive while one batch is being
written to the next call of ``write_many`` together. Once batches are shared (the last one
held more than one item), the next waits until ``spacing`` seconds after the last began, so
more items join it; a batch of one turns that off again. A quiet process (or one writing
for a single client, one item after the other) writes each item at once; a busy one many per
statement.

``write_many`` runs in Django's sync thread (``sync_to_async``, thread-sensitive) and answers
one outcome per item, in order: a value, or the exception that item's caller gets.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from asgiref.sync import sync_to_async

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


def together_or_alone(
    items: Sequence[T],
    together: Callable[[Sequence[T]], Sequence[R]],
    alone: Callable[[T], R],
) -> list[R | Exception]:
    """A ``write_many``: all ``items`` in one ``together`` call; when that raises, each item
    with ``alone``, so only an item the database refuses fails (with its own exception)."""
    if len(items) > 1:
        try:
            return list(together(items))
        except Exception as exc:
            logger.info(
                "writing %d items together failed (%r); writing each alone", len(items), exc
            )
    outcomes: list[R | Exception] = []
    for item in items:
        try:
            outcomes.append(alone(item))
        except Exception as exc:
            outcomes.append(exc)
    return outcomes


class _Queue(Generic[T, R]):
    def __init__(self) -> None:
        self.items: list[tuple[T, asyncio.Future[R]]] = []
        self.writer: asyncio.Task[None] | None = None
        self.last_write = float("-inf")  # loop time the last batch started
        self.shared = False  # the last batch held more than one item


class Gathered(Generic[T, R]):
    """``await gathered(item)`` writes ``item`` with whatever else is waiting, at most
    ``most`` per batch (and, while batches are shared, one batch per ``spacing`` seconds),
    and returns its own outcome (or raises its own exception)."""

    def __init__(
        self,
        write_many: Callable[[Sequence[T]], Sequence[R | BaseException]],
        *,
        most: int,
        spacing: float = 0.0,
        drop_cancelled: bool = False,
    ) -> None:
        if most < 1 or spacing < 0:
            raise ValueError("most must be at least 1 and spacing not negative")
        self.write_many = write_many
        self.most = most
        self.spacing = spacing
        # A caller cancelled before its item is taken into a batch takes the item back
        # (otherwise every item is written, whoever stopped waiting for it).
        self.drop_cancelled = drop_cancelled
        # One queue per event loop (daphne has one; tests start many).
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue[T, R]] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _Queue()
        future: asyncio.Future[R] = loop.create_future()
        queue.items.append((item, future))
        if queue.writer is None:
            # In a context of its own: the writer outlives the request that started it, and
            # must not send its writes to that request's thread (a sync view's
            # ``async_to_sync`` executor quits with the request) but to Django's shared
            # sync thread.
            queue.writer = loop.create_task(self._drain(queue), context=contextvars.Context())
        try:
            # A cancelled caller does not cancel a write: only its wait ends.
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if self.drop_cancelled:
                queue.items = [entry for entry in queue.items if entry[1] is not future]
            raise

    async def _drain(self, queue: _Queue[T, R]) -> None:
        loop = asyncio.get_running_loop()
        try:
            while queue.items:
                wait = queue.last_write + self.spacing - loop.time()
                if queue.shared and wait > 0:
                    await asyncio.sleep(wait)  # busy: let more items join this batch
                queue.last_write = loop.time()
                batch, queue.items = queue.items[: self.most], queue.items[self.most :]
                queue.shared = len(batch) > 1
                try:
                    outcomes = await sync_to_async(self.write_many)([item for item, _ in batch])
                    if len(outcomes) != len(batch):
                        raise RuntimeError(
                            f"write_many answered {len(outcomes)} outcomes for {len(batch)} items"
                        )
                except BaseException as exc:  # the whole batch failed: every caller hears it
                    outcomes = [exc] * len(batch)
                    if isinstance(exc, asyncio.CancelledError):
                        queue.items = batch + queue.items  # the loop is closing: leave them
                        raise
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if future.done():
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
        finally:
            queue.writer = None
            for _, future in queue.items:  # only left when the writer itself was cancelled
                if not future.done():
                    future.cancel()
            queue.items.clear()
