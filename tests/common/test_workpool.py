"""The killable worker pool: results, failures, timeouts, memory cap, bounds, the loop."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from common.workpool import WorkError, WorkPool, WorkTimeout


def add(a: int, b: int) -> int:
    return a + b


def fail(message: str) -> None:
    raise ValueError(message)


def spin_and_record(pid_file: str, seconds: float) -> str:
    Path(pid_file).write_text(str(os.getpid()))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass
    return "finished"


def allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * 1024 * 1024))


def process_gone(pid: int, wait_seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_result_comes_back() -> None:
    assert WorkPool(max_workers=1).run(add, 2, 3, timeout=30) == 5


def test_an_exception_is_a_work_error_naming_it() -> None:
    with pytest.raises(WorkError) as caught:
        WorkPool(max_workers=1).run(fail, "bad page", timeout=30)
    assert caught.value.reason == "ValueError: bad page"


def test_timeout_kills_the_worker(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(WorkTimeout) as caught:
        WorkPool(max_workers=1).run(spin_and_record, str(pid_file), 60, timeout=1.5)
    assert caught.value.reason == "timed out after 1.5s"
    assert time.monotonic() - started < 10
    assert process_gone(int(pid_file.read_text()))


def test_memory_cap_is_a_work_error_not_server_memory() -> None:
    pool = WorkPool(max_workers=1, memory_bytes=512 * 1024 * 1024)
    with pytest.raises(WorkError) as caught:
        pool.run(allocate, 2048, timeout=30)
    assert caught.value.reason == "memory limit reached (512 MiB)"
    assert pool.run(allocate, 16, timeout=30) == 16 * 1024 * 1024


def test_jobs_beyond_max_workers_wait_for_a_slot(tmp_path: Path) -> None:
    pool = WorkPool(max_workers=1)

    async def two() -> list[str]:
        return list(
            await asyncio.gather(
                pool.run_async(spin_and_record, str(tmp_path / "a"), 0.8, timeout=30),
                pool.run_async(spin_and_record, str(tmp_path / "b"), 0.8, timeout=30),
            )
        )

    started = time.monotonic()
    assert asyncio.run(two()) == ["finished", "finished"]
    assert time.monotonic() - started >= 1.6


async def test_async_run_never_blocks_the_event_loop(tmp_path: Path) -> None:
    pool = WorkPool(max_workers=1)
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    tick = asyncio.ensure_future(ticker())
    try:
        result = await pool.run_async(spin_and_record, str(tmp_path / "pid"), 2, timeout=30)
    finally:
        tick.cancel()
    assert result == "finished" and len(gaps) > 50
    assert max(gaps) < 0.2


async def test_cancelling_an_async_job_kills_its_worker(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    pool = WorkPool(max_workers=1)
    task = asyncio.ensure_future(pool.run_async(spin_and_record, str(pid_file), 60, timeout=120))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert process_gone(int(pid_file.read_text()))
    assert await pool.run_async(add, 1, 1, timeout=30) == 2  # the slot was released
