"""Run CPU-heavy work (PDF text extraction) in a child process: bounded, capped, killable.

A PDF bomb (a few pages of 70 MB deflated streams) took 17 s of CPU and 390 MB on daphne's
event loop. Here each job runs in its own child process forked from a clean ``forkserver``
(never from daphne itself, whose threads and sockets a fork would copy), with

- at most ``max_workers`` jobs at once per process (callers wait for a slot, the loop
  does not: async callers poll for it);
- an address-space cap (``RLIMIT_AS``), so a runaway allocation is a ``MemoryError`` in
  the child, not swap on the server;
- a deadline, after which the child is killed (a thread could not be) and ``WorkTimeout``
  raised.

    pool = WorkPool(max_workers=2)
    block = await pool.run_async(extract_file_block, data, timeout=20, name=..., mime=...)

``func`` and its arguments must pickle (a module-level function, plain values).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import resource
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024
_SLOT_POLL_SECONDS = 0.01
_PRELOAD = ["enrichment.pipeline.files.extraction", "pypdf"]


class WorkError(Exception):
    """The job did not produce a result; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkTimeout(WorkError):
    pass


class WorkPool:
    def __init__(
        self, *, max_workers: int | None = None, memory_bytes: int = DEFAULT_MEMORY_BYTES
    ) -> None:
        self.max_workers = max_workers or max(1, min(4, os.cpu_count() or 1))
        self.memory_bytes = memory_bytes
        self._slots = threading.BoundedSemaphore(self.max_workers)
        self._context: Any = None
        self._context_lock = threading.Lock()

    def run(self, func: Callable[..., T], *args: Any, timeout: float, **kwargs: Any) -> T:
        """Blocking: for sync views and threads. Raises WorkTimeout / WorkError."""
        with self._slots:
            process, receiver = self._start(func, args, kwargs)
            try:
                ready = receiver.poll(timeout)
                return self._collect(process, receiver, ready, timeout)
            finally:
                self._reap(process, receiver)

    async def run_async(
        self, func: Callable[..., T], *args: Any, timeout: float, **kwargs: Any
    ) -> T:
        """Like ``run``, without ever blocking the event loop (cancellation kills the job)."""
        while not self._slots.acquire(blocking=False):
            await asyncio.sleep(_SLOT_POLL_SECONDS)
        try:
            starting = asyncio.ensure_future(asyncio.to_thread(self._start, func, args, kwargs))
            try:
                process, receiver = await asyncio.shield(starting)
            except asyncio.CancelledError:
                # Cancelled while the child was being started: it must not outlive us.
                process, receiver = await starting
                self._reap(process, receiver)
                raise
            try:
                ready = await _wait_readable(receiver, timeout)
                return self._collect(process, receiver, ready, timeout)
            finally:
                self._reap(process, receiver)
        finally:
            self._slots.release()

    def _start(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Connection]:
        context = self._get_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=_child, args=(sender, self.memory_bytes, func, args, kwargs), daemon=True
        )
        process.start()
        sender.close()  # only the child writes; its exit then shows as EOF here
        return process, receiver

    def _get_context(self) -> Any:
        with self._context_lock:
            if self._context is None:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(_PRELOAD)
                # The forkserver listens on a Unix socket in multiprocessing's temp dir, whose
                # path may be at most ~107 bytes: pin that dir under the system's short temp
                # root, whatever TMPDIR or tempfile.tempdir say at the first job.
                _pin_short_socket_dir()
                self._context = context
            return self._context

    @staticmethod
    def _collect(process: Any, receiver: Connection, ready: bool, timeout: float) -> Any:
        if not ready:
            raise WorkTimeout(f"timed out after {timeout:g}s")
        try:
            status, value = receiver.recv()
        except (EOFError, OSError):
            process.join(1)
            raise WorkError(f"worker died (exit code {process.exitcode})") from None
        if status == "ok":
            return value
        raise WorkError(str(value))

    @staticmethod
    def _reap(process: Any, receiver: Connection) -> None:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join(5)
        with contextlib.suppress(ValueError):
            process.close()


async def _wait_readable(receiver: Connection, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(True)

    loop.add_reader(receiver.fileno(), wake)
    try:
        async with asyncio.timeout(timeout):
            await ready
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(receiver.fileno())


def _child(
    sender: Connection,
    memory_bytes: int,
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        result: tuple[str, Any] = ("ok", func(*args, **kwargs))
    except MemoryError:
        result = ("error", f"memory limit reached ({memory_bytes // (1024 * 1024)} MiB)")
    except Exception as error:  # reported to the caller as a value, never a traceback
        result = ("error", f"{type(error).__name__}: {error}"[:300])
    sender.send(result)
    sender.close()


_shared: WorkPool | None = None
_shared_lock = threading.Lock()


def _pin_short_socket_dir() -> None:
    import tempfile
    from multiprocessing import process, util

    config = process.current_process()._config  # type: ignore[attr-defined]
    if config.get("tempdir") is None:
        previous = tempfile.tempdir
        tempfile.tempdir = "/tmp" if os.path.isdir("/tmp") else None
        try:
            util.get_temp_dir()  # created now, cached for the process, removed at exit
        finally:
            tempfile.tempdir = previous


def shared_pool() -> WorkPool:
    """The process-wide pool (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WorkPool()
        return _shared
