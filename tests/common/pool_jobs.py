"""Jobs for the process-pool tests (module level, so spawned workers can import them)."""

from __future__ import annotations

import os
import signal
import time


def pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def hang() -> None:
    time.sleep(3600)


def die_by_signal() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def exit_hard(code: int) -> None:
    os._exit(code)


def refuse(text: str) -> None:
    raise ValueError(text)


def add(a: int, b: int) -> int:
    return a + b


def spin_and_record(pid_file: str, seconds: float) -> str:
    from pathlib import Path

    Path(pid_file).write_text(str(os.getpid()))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass
    return "finished"


def allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * 1024 * 1024))
