"""The one pool of worker processes for CPU-heavy work: page extraction, file and PDF text.

A small, bounded pool of pre-warmed processes driven from an event loop. Every worker is a
process with its own pipe, so a job past its deadline (or whose caller gave up) kills exactly
its worker, and a worker that dies (a segfault, the OOM killer) fails exactly the job it was
running; either way a fresh worker takes its slot at once and the pool keeps its size. Every
worker runs under an address-space cap (``RLIMIT_AS``), so a runaway allocation (a PDF
bomb's streams) is a ``MemoryError`` in the job, not swap on the server.

    pool = WorkPool(2, initializer=warm_up)            # processes spawn and import now
    text = await pool.run(extract_page, body, timeout=10)  # waits for a free worker

Why not a library: ``concurrent.futures`` cannot stop a running job, and one dead worker
breaks the whole executor. pebble can, but measured in place of this pool
(``bench/ws_load.py --builtin``, 2026-12-05) it cost 20% of the messages per second (172
against 214) and 0.6 ms more CPU per message in daphne (its three manager threads contend
for the GIL with the event loop) plus 0.8 ms more in the workers (a lock and an
acknowledgement per job on one shared pipe). Here a job is one message each way on its
worker's own pipe, read by the event loop itself.

Jobs and results travel pickled, so the function must be importable (module level) and its
arguments and result picklable; an exception raised by the job is raised again by ``run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import resource
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_MEMORY_BYTES = 2 * 1024 * 1024 * 1024


class WorkError(Exception):
    """The job did not produce a result; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkTimeout(WorkError):
    pass


class WorkerCrashed(WorkError):
    pass


class PoolClosed(WorkError):
    pass


def _serve(
    connection: Connection, memory_bytes: int | None, warm_up: Callable[[], object] | None
) -> None:
    """Worker main loop: cap, warm up once, then answer jobs until the parent goes away."""
    if memory_bytes:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if warm_up is not None:
        warm_up()
    while True:
        try:
            function, args, kwargs = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", function(*args, **kwargs))
        except Exception as error:  # handed back to the caller, the worker lives on
            reply = ("error", error)
        try:
            connection.send(reply)
        except Exception as error:  # an unpicklable result or exception
            connection.send(("error", RuntimeError(f"cannot return the result: {error}")))


def measuring_cpu(function: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``function(*args)`` and the CPU seconds it took in this process (run it in a worker:
    ``await pool.run(measuring_cpu, extract, page)`` says what the extraction cost, which
    the caller's own clock cannot see)."""
    started = time.process_time()
    value = function(*args)
    return value, time.process_time() - started


class _Worker:
    def __init__(self, context: BaseContext, pool: WorkPool) -> None:
        self.name = pool.name
        self.connection, child_end = context.Pipe()
        self.process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_serve,
            args=(child_end, pool.memory_bytes, pool.initializer),
            daemon=True,
            name=pool.name,
        )
        self.process.start()
        child_end.close()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.connection.close()
        # Reap it aside: join() may take a moment and must not hold up the event loop.
        threading.Thread(target=self.process.join, daemon=True).start()

    def death_reason(self) -> str:
        self.process.join(timeout=1.0)
        code = self.process.exitcode
        if code is None:
            return f"{self.name} stopped answering"
        if code < 0:
            return f"{self.name} crashed (killed by signal {-code})"
        return f"{self.name} crashed (exited with code {code})"


class WorkPool:
    def __init__(
        self,
        size: int,
        *,
        initializer: Callable[[], object] | None = None,
        memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
        name: str = "worker process",
    ) -> None:
        """``initializer`` runs once in each worker (imports, warm-up); ``name`` says what a
        worker is in the reason a crash gives ("extraction worker crashed (killed by
        signal 9)")."""
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self.initializer = initializer
        self.memory_bytes = memory_bytes
        self.name = name
        # spawn, not fork: the serving process has threads (and a reactor) a fork would copy.
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._idle: list[_Worker] = []
        self._waiters: deque[asyncio.Future[_Worker]] = deque()
        self._closed = False
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return bool(self._workers)

    def start(self) -> None:
        """Start every worker now (each imports and warms up in parallel)."""
        with self._lock:
            if self._closed:
                raise PoolClosed("the pool is closed")
            while len(self._workers) < self.size:
                worker = _Worker(self._context, self)
                self._workers.append(worker)
                self._idle.append(worker)

    def pids(self) -> list[int]:
        return [worker.process.pid for worker in self._workers if worker.process.pid]

    async def run(
        self, function: Callable[..., T], *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> T:
        """``function(*args, **kwargs)`` in a worker; raises what it raises, ``WorkTimeout``
        past ``timeout`` seconds in the worker, or ``WorkerCrashed``.

        Cancelling the caller (its own deadline, a client gone) kills the worker mid-job and
        puts a fresh one in its place, so nothing stays busy on a result nobody waits for.
        """
        if not self.started:
            self.start()
        worker = await self._acquire()
        try:
            worker.connection.send((function, args, kwargs))
            async with asyncio.timeout(timeout):
                status, value = await self._receive(worker)
        except TimeoutError:
            self._replace(worker)
            raise WorkTimeout(f"timed out after {timeout:g}s") from None
        except BaseException:
            self._replace(worker)
            raise
        self._release(worker)
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._workers, self._idle = self._workers, [], []
        for worker in workers:
            worker.kill()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done() and not waiter.get_loop().is_closed():
                waiter.get_loop().call_soon_threadsafe(_fail, waiter)

    async def _acquire(self) -> _Worker:
        if self._closed:
            raise PoolClosed("the pool is closed")
        with contextlib.suppress(IndexError):  # another thread's loop may take it first
            return self._idle.pop()
        waiter: asyncio.Future[_Worker] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release(waiter.result())  # handed over just as we were cancelled
            raise

    def _release(self, worker: _Worker) -> None:
        if worker not in self._workers:
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done() and not waiter.get_loop().is_closed():
                if waiter.get_loop() is _running_loop():
                    waiter.set_result(worker)
                else:  # a caller on another loop (a sync caller's own): hand over there
                    waiter.get_loop().call_soon_threadsafe(_hand_over, waiter, worker, self)
                return
        self._idle.append(worker)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            if worker not in self._workers:
                return
            self._workers.remove(worker)
            if self._closed:
                return
            fresh = _Worker(self._context, self)
            self._workers.append(fresh)
        self._release(fresh)

    async def _receive(self, worker: _Worker) -> tuple[str, Any]:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        descriptor = worker.connection.fileno()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(descriptor, readable)
        try:
            await ready
        finally:
            loop.remove_reader(descriptor)
        try:
            # The worker writes its answer in one piece right after the header we just saw.
            reply: tuple[str, Any] = worker.connection.recv()
        except (EOFError, OSError):
            raise WorkerCrashed(await asyncio.to_thread(worker.death_reason)) from None
        return reply


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _hand_over(waiter: asyncio.Future[_Worker], worker: _Worker, pool: WorkPool) -> None:
    if waiter.done():  # cancelled meanwhile: the next waiter (or the idle list) gets it
        pool._release(worker)  # noqa: SLF001
    else:
        waiter.set_result(worker)


def _fail(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_exception(PoolClosed("the pool is closed"))
