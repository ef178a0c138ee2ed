"""A small, bounded pool of pre-warmed worker processes driven from an event loop.

Why not ``concurrent.futures.ProcessPoolExecutor``: a job it runs cannot be stopped, and one
dead worker breaks the whole executor. Here every worker is a process with its own pipe, so
a job that times out or is cancelled kills exactly its worker, and a worker that dies
(segfault, OOM killer) fails exactly the job it was running; either way a fresh worker takes
its slot at once and the pool keeps its size.

    pool = ProcessPool(2, warmup=warm_extractor)   # processes start and import now
    pool.start()
    text = await pool.run(extract_page, url, body)  # waits for a free worker when all are busy

Jobs and results travel pickled, so the function must be importable (module level) and its
arguments and result picklable; an exception raised by the job is raised again by ``run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

T = TypeVar("T")


class WorkerCrashed(Exception):
    """The worker running a job died before answering; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PoolClosed(Exception):
    pass


def _serve(connection: Connection, warmup: Callable[[], object] | None) -> None:
    """Worker main loop: warm up once, then answer jobs until the parent goes away."""
    if warmup is not None:
        warmup()
    while True:
        try:
            function, args = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", function(*args))
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
    def __init__(self, context: BaseContext, warmup: Callable[[], object] | None) -> None:
        self.connection, child_end = context.Pipe()
        self.process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(child_end, warmup), daemon=True, name="extraction-worker"
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
            return "extraction worker stopped answering"
        if code < 0:
            return f"extraction worker crashed (killed by signal {-code})"
        return f"extraction worker crashed (exited with code {code})"


class ProcessPool:
    def __init__(
        self,
        size: int,
        *,
        warmup: Callable[[], object] | None = None,
        start_method: str = "spawn",
    ) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self._warmup = warmup
        # spawn, not fork: the serving process has threads (and a reactor) a fork would copy.
        self._context = multiprocessing.get_context(start_method)
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
                worker = _Worker(self._context, self._warmup)
                self._workers.append(worker)
                self._idle.append(worker)

    def pids(self) -> list[int]:
        return [worker.process.pid for worker in self._workers if worker.process.pid]

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run ``function(*args)`` in a worker; raises what it raises, or WorkerCrashed.

        Cancelling the caller (a timeout, a client gone) kills the worker mid-job and puts a
        fresh one in its place, so nothing stays busy on a result nobody waits for.
        """
        if not self.started:
            self.start()
        worker = await self._acquire()
        try:
            worker.connection.send((function, args))
            status, value = await self._receive(worker)
        except BaseException:
            self._replace(worker)
            raise
        self._release(worker)
        if status == "error":
            raise value
        return value  # type: ignore[no-any-return]

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
        if self._idle:
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
                waiter.set_result(worker)
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
            fresh = _Worker(self._context, self._warmup)
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


def _fail(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_exception(PoolClosed("the pool is closed"))
