"""The one process pool: results, failures, deadlines, crashes, memory cap, bounds,
and an event loop that never waits on it."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.workpool import WorkerCrashed, WorkPool, WorkTimeout
from tests.common import pool_jobs
from tests.processes import process_gone


@pytest.fixture
def pool() -> Iterator[WorkPool]:
    pool = WorkPool(2)
    pool.start()
    yield pool
    pool.close()


async def warm(pool: WorkPool) -> set[int]:
    return set(await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0.2) for _ in range(2))))


async def test_runs_in_another_process_and_reuses_it(pool: WorkPool) -> None:
    first = await pool.run(pool_jobs.pid_after, 0)
    second = await pool.run(pool_jobs.pid_after, 0)
    assert first != os.getpid()
    assert {first, second} <= set(pool.pids())


async def test_never_runs_more_jobs_than_workers_at_once(pool: WorkPool) -> None:
    await warm(pool)
    started = time.monotonic()
    pids = await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0.4) for _ in range(4)))
    assert len(set(pids)) == 2
    assert time.monotonic() - started >= 0.8  # two rounds of two


async def test_an_exception_in_the_job_is_raised_and_the_worker_lives_on(pool: WorkPool) -> None:
    before = await warm(pool)
    with pytest.raises(ValueError, match="bad page"):
        await pool.run(pool_jobs.refuse, "bad page")
    assert set(pool.pids()) == before


async def test_a_job_past_its_deadline_stops_its_process_and_the_next_job_runs(
    pool: WorkPool, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(WorkTimeout) as caught:
        await pool.run(pool_jobs.spin_and_record, str(pid_file), 60, timeout=1.5)
    assert caught.value.reason == "timed out after 1.5s"
    assert time.monotonic() - started < 10
    assert process_gone(int(pid_file.read_text()))
    assert len(await warm(pool)) == 2  # a fresh process took its place


async def test_a_cancelled_caller_stops_the_process_and_frees_its_slot(
    pool: WorkPool, tmp_path: Path
) -> None:
    await warm(pool)
    pid_file = tmp_path / "pid"
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(1.0):  # the caller's own deadline (as links have)
            await pool.run(pool_jobs.spin_and_record, str(pid_file), 60)
    assert process_gone(int(pid_file.read_text()))
    pids = await asyncio.wait_for(
        asyncio.gather(*(pool.run(pool_jobs.pid_after, 0.2) for _ in range(2))), 30
    )
    assert len(set(pids)) == 2  # both slots answer again


@pytest.mark.parametrize(
    ("job", "args", "reason"),
    [
        (pool_jobs.die_by_signal, (), "worker process crashed (killed by signal 9)"),
        (pool_jobs.exit_hard, (3,), "worker process crashed (exited with code 3)"),
    ],
    ids=["sigkill", "exit"],
)
async def test_a_crashed_worker_fails_its_job_clearly_and_is_replaced(
    pool: WorkPool, job: object, args: tuple[object, ...], reason: str
) -> None:
    before = await warm(pool)
    with pytest.raises(WorkerCrashed) as crashed:
        await asyncio.wait_for(pool.run(job, *args), 30)  # type: ignore[arg-type]
    assert crashed.value.reason == reason
    after = await warm(pool)
    assert len(after) == 2 and after != before


async def test_the_memory_cap_is_a_memory_error_in_the_job_not_server_memory() -> None:
    pool = WorkPool(1, memory_bytes=512 * 1024 * 1024)
    try:
        with pytest.raises(MemoryError):
            await pool.run(pool_jobs.allocate, 2048, timeout=30)
        assert await pool.run(pool_jobs.allocate, 16, timeout=30) == 16 * 1024 * 1024
    finally:
        pool.close()


async def test_waiting_for_a_job_never_blocks_the_event_loop(
    pool: WorkPool, tmp_path: Path
) -> None:
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
        result = await pool.run(pool_jobs.spin_and_record, str(tmp_path / "pid"), 2, timeout=30)
    finally:
        tick.cancel()
    assert result == "finished" and len(gaps) > 50
    # The job spins for 2 s: a loop that waited on it would show one gap that long. (A busy
    # CI machine stalls a process for a few hundred ms now and then: that is not the pool.)
    assert max(gaps) < 1.0


async def test_closing_stops_every_worker() -> None:
    pool = WorkPool(2)
    await warm(pool)
    pids = pool.pids()
    pool.close()
    assert all(process_gone(pid) for pid in pids)


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError):
        WorkPool(0)
