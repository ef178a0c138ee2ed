"""Progress for long work only: a run's progress events are held back for its first moments.

A link fetched and extracted in-process answers in tens of milliseconds; a "Running
link-understand for …" frame that arrives just before the result tells the person nothing
(the list flickers) and costs a frame through the channel layer, the server and the socket
(about a fifth of all the CPU an answer took under ``bench/ws_load.py --builtin --redis``).
``HeldProgress`` passes a run's events on only once the run has lasted ``after`` seconds:
then the ones held so far go out in order, and later ones go straight through. A run that
ends sooner sends none (``close``). The dashboard's config preview shows its progress line the
same way, only once the work has taken a second.

    >>> import asyncio
    >>> async def demo(work_seconds):
    ...     sent = []
    ...     async def sink(event):
    ...         sent.append(event["text"])
    ...     progress = HeldProgress(sink, after=0.05)
    ...     await progress({"text": "running"})
    ...     await asyncio.sleep(work_seconds)
    ...     await progress.close()
    ...     return sent
    >>> asyncio.run(demo(0.0))
    []
    >>> asyncio.run(demo(0.1))
    ['running']
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

Sink = Callable[[dict[str, Any]], Awaitable[None]]


class HeldProgress:
    """An ``Emit`` for ``run_stages`` that forwards to ``sink`` once ``after`` seconds passed.

    The clock starts at construction (the start of the run). ``close`` must be awaited when
    the run ends, before its result is sent: it drops what is still held and waits for a
    release in flight, so no progress frame can follow the result.
    """

    def __init__(self, sink: Sink, *, after: float) -> None:
        self._sink = sink
        self._held: list[dict[str, Any]] = []
        self._open = after <= 0
        self._release: asyncio.Task[None] | None = None
        if not self._open:
            self._release = asyncio.get_running_loop().create_task(self._release_after(after))

    async def __call__(self, event: dict[str, Any]) -> None:
        if self._open:
            await self._sink(event)
        else:
            self._held.append(event)

    async def _release_after(self, after: float) -> None:
        await asyncio.sleep(after)
        # Events held meanwhile, and any that arrive while these are sent, go out in order.
        while self._held:
            event = self._held.pop(0)
            # Best effort, as the stages treat progress: a client gone must not fail the run.
            with contextlib.suppress(Exception):
                await self._sink(event)
        self._open = True

    async def close(self) -> None:
        self._held.clear()
        release, self._release = self._release, None
        self._open = False  # nothing more goes out once the run has ended
        if release is not None and not release.done():
            release.cancel()
            # ``wait`` (not ``await release``): a cancellation of the caller itself still
            # propagates instead of being taken for the release's.
            await asyncio.wait({release})
