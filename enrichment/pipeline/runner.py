"""Run one CLI entry as a real subprocess, never through a shell, and report what happened.

Every fault is a value: a hang, an output flood, a crash, a missing binary or undecodable bytes
all come back as a ``CommandResult`` with a short stable reason; ``run_command`` itself only
raises on cancellation. Outcomes and reasons (SPEC §4):

==========  =========================================================================
success     non-empty stdout (after UTF-8 decoding with replacement and trimming)
skipped     "empty output"
failed      "exited with code N", "command not found: X", "timed out after Ns",
            "output too large", "killed by signal N", "cannot run X: <error>"
==========  =========================================================================

The CLI runs in a new session, i.e. its own process group. When it times out, floods stdout
or simply exits, the whole group is killed, so a child it forked and left behind (sleeping,
or holding our stdout pipe open) cannot outlive the run. A child that escaped the group with
its own ``setsid`` is found by the pipe it still holds: every process holding the write end of
our stdout/stderr pipes after the CLI exited has its process group and session killed too,
and the output read so far is recorded (``sh -c 'setsid sleep 120 & echo done'`` is a
success with "done", not a timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from enrichment.pipeline.templates import js_trim

AttemptOutcome = Literal["success", "skipped", "failed"]

DEFAULT_MAX_STDOUT_BYTES = 5 * 1024 * 1024
STDERR_TAIL_BYTES = 2048
_CHUNK_BYTES = 64 * 1024
_EXIT_POLL_SECONDS = 0.01
_RELEASE_SECONDS = 2.0


@dataclass(frozen=True)
class CommandResult:
    outcome: AttemptOutcome
    reason: str | None  # None on success
    exit_code: int | None  # None when the process never ran or was killed by us
    duration_ms: int
    stdout_text: str  # decoded and trimmed; "" when the output was too large
    stdout_bytes: int  # bytes read from stdout (stops just past the cap)
    stderr_tail: str  # the last 2 KiB of stderr, decoded and trimmed
    # None for a subprocess; the built-in fetcher run inside the server says "in-process".
    attempt_type: str | None = None


class CommandRunner(Protocol):
    """What the link pipeline needs from a runner; tests pass a fake with this shape."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = ...,
        cwd: str | None = ...,
    ) -> Awaitable[CommandResult]: ...


@dataclass
class _Captured:
    stdout: bytearray
    stdout_bytes: int = 0
    too_large: bool = False
    stderr_tail: bytes = b""


async def run_command(
    argv: Sequence[str],
    *,
    timeout_seconds: float,
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> CommandResult:
    """Run ``argv`` with a timeout and a stdout cap; see the module docstring for outcomes."""
    started = clock()

    def elapsed_ms() -> int:
        return int((clock() - started) * 1000)

    if not argv or not argv[0]:
        return CommandResult("failed", "empty command", None, 0, "", 0, "")
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        return CommandResult(
            "failed", f"command not found: {argv[0]}", None, elapsed_ms(), "", 0, ""
        )
    except OSError as error:
        reason = f"cannot run {argv[0]}: {error.strerror or error}"
        return CommandResult("failed", reason, None, elapsed_ms(), "", 0, "")

    captured = _Captured(stdout=bytearray())
    timed_out = False
    try:
        async with asyncio.timeout(timeout_seconds):
            await _capture(process, captured, max_stdout_bytes)
    except TimeoutError:
        timed_out = True
    finally:
        # Also runs on cancellation: nothing from this run may survive it.
        _kill_group(process.pid)
        await _release(process)
    return _result(process.returncode, captured, timed_out, timeout_seconds, elapsed_ms())


async def _capture(process: asyncio.subprocess.Process, captured: _Captured, cap: int) -> None:
    assert process.stdout is not None and process.stderr is not None
    stdout_task = asyncio.ensure_future(_read_stdout(process.stdout, captured, cap))
    stderr_task = asyncio.ensure_future(_read_stderr_tail(process.stderr, captured))
    exit_task = asyncio.ensure_future(_wait_for_exit(process))
    try:
        await asyncio.wait({stdout_task, exit_task}, return_when=asyncio.FIRST_COMPLETED)
        if captured.too_large:
            return
        await exit_task
        # The CLI has exited; a child it left behind may still hold the pipes open. Killing
        # the group closes them, and whatever is already buffered can still be read.
        _kill_group(process.pid)
        _kill_pipe_holders(process)
        await asyncio.wait({stdout_task, stderr_task}, timeout=_RELEASE_SECONDS)
    finally:
        for task in (stdout_task, stderr_task, exit_task):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _wait_for_exit(process: asyncio.subprocess.Process) -> None:
    # Not ``process.wait()``: on Python 3.11 it also waits for every pipe to close, which a
    # forked child holding stdout can delay until the timeout.
    while process.returncode is None:
        await asyncio.sleep(_EXIT_POLL_SECONDS)


async def _release(process: asyncio.subprocess.Process) -> None:
    """After the group was killed: drain the pipes to EOF so the process can be reaped."""
    try:
        async with asyncio.timeout(_RELEASE_SECONDS):
            for stream in (process.stdout, process.stderr):
                while stream is not None and await stream.read(_CHUNK_BYTES):
                    pass
            await process.wait()
    except TimeoutError:
        # Something that left our process group (its own setsid) still holds a pipe.
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()
        await _wait_for_exit(process)


async def _read_stdout(stream: asyncio.StreamReader, captured: _Captured, cap: int) -> None:
    while chunk := await stream.read(_CHUNK_BYTES):
        captured.stdout_bytes += len(chunk)
        if captured.stdout_bytes > cap:
            captured.too_large = True
            return
        captured.stdout.extend(chunk)


async def _read_stderr_tail(stream: asyncio.StreamReader, captured: _Captured) -> None:
    while chunk := await stream.read(_CHUNK_BYTES):
        captured.stderr_tail = (captured.stderr_tail + chunk)[-STDERR_TAIL_BYTES:]


def _kill_group(process_group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process_group, signal.SIGKILL)


def _kill_pipe_holders(process: asyncio.subprocess.Process) -> None:
    """Kill the group and session of every process still holding our pipes' write ends.

    Called once the CLI has exited and its own group was killed, so whatever still writes to
    our pipes is a descendant that escaped with ``setsid``. Linux only (``/proc``); elsewhere
    the pipes are simply closed after a grace period by ``_release``.
    """
    pipes = {_pipe_inode(stream) for stream in (process.stdout, process.stderr)}
    pipes.discard(None)
    if not pipes:
        return
    for pid in _pids_writing_to(pipes):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            session = os.getsid(pid)
            _kill_group(os.getpgid(pid))
            for member in _pids_in_session(session):
                os.kill(member, signal.SIGKILL)


def _pipe_inode(stream: asyncio.StreamReader | None) -> int | None:
    transport = getattr(stream, "_transport", None)
    pipe = transport.get_extra_info("pipe") if transport is not None else None
    if pipe is None:
        return None
    try:
        return os.fstat(pipe.fileno()).st_ino
    except (OSError, ValueError):
        return None


def _pids_writing_to(inodes: set[int | None]) -> list[int]:
    """Processes (not us) with a write-only descriptor on one of the pipes ``inodes``."""
    me = os.getpid()
    holders = []
    for entry in _proc_pids():
        if entry == me:
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
                if not target.startswith("pipe:["):
                    continue
                if int(target[6:-1]) not in inodes:
                    continue
                with open(f"/proc/{entry}/fdinfo/{fd}") as info:
                    flags = next(
                        int(line.split()[1], 8) for line in info if line.startswith("flags:")
                    )
            except (OSError, ValueError, StopIteration):
                continue
            # The read end has the same inode; only writers keep our reader from EOF.
            if flags & os.O_ACCMODE == os.O_WRONLY:
                holders.append(entry)
                break
    return holders


def _pids_in_session(session: int) -> list[int]:
    members = []
    for entry in _proc_pids():
        with contextlib.suppress(OSError):
            if os.getsid(entry) == session:
                members.append(entry)
    return members


def _proc_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _result(
    returncode: int | None,
    captured: _Captured,
    timed_out: bool,
    timeout_seconds: float,
    duration_ms: int,
) -> CommandResult:
    stderr_tail = js_trim(captured.stderr_tail.decode("utf-8", errors="replace"))

    def failed(reason: str, exit_code: int | None, text: str = "") -> CommandResult:
        return CommandResult(
            "failed", reason, exit_code, duration_ms, text, captured.stdout_bytes, stderr_tail
        )

    if timed_out:
        return failed(f"timed out after {timeout_seconds:g}s", None)
    if captured.too_large:
        return failed("output too large", None)
    text = js_trim(bytes(captured.stdout).decode("utf-8", errors="replace"))
    if returncode is not None and returncode < 0:
        return failed(f"killed by signal {-returncode}", returncode, text)
    if returncode:
        return failed(f"exited with code {returncode}", returncode, text)
    if not text:
        return CommandResult(
            "skipped",
            "empty output",
            returncode,
            duration_ms,
            "",
            captured.stdout_bytes,
            stderr_tail,
        )
    return CommandResult(
        "success", None, returncode, duration_ms, text, captured.stdout_bytes, stderr_tail
    )
