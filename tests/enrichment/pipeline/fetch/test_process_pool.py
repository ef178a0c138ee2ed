"""The extraction pool: bounded, and no job can leave a worker stuck or take the pool down."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import pytest

from enrichment.pipeline.fetch.process_pool import ProcessPool, WorkerCrashed
from tests.enrichment.pipeline.fetch import pool_jobs


@pytest.fixture
def pool() -> Iterator[ProcessPool]:
    pool = ProcessPool(2)
    pool.start()
    yield pool
    pool.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed worker may linger as a zombie until it is reaped.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


async def test_runs_in_another_process_and_reuses_it(pool: ProcessPool) -> None:
    first = await pool.run(pool_jobs.pid_after, 0)
    second = await pool.run(pool_jobs.pid_after, 0)
    assert first != os.getpid()
    assert {first, second} <= set(pool.pids())


async def test_never_runs_more_jobs_than_workers_at_once(pool: ProcessPool) -> None:
    await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0) for _ in range(2)))  # warm
    started = time.monotonic()
    pids = await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0.4) for _ in range(4)))
    elapsed = time.monotonic() - started
    assert len(set(pids)) == 2
    assert elapsed >= 0.8  # two rounds of two


async def test_an_exception_in_the_job_is_raised_and_the_worker_lives_on(pool: ProcessPool) -> None:
    before = sorted(pool.pids())
    with pytest.raises(ValueError, match="bad page"):
        await pool.run(pool_jobs.refuse, "bad page")
    assert sorted(pool.pids()) == before


async def test_a_timed_out_job_kills_its_worker_and_the_next_job_still_runs(
    pool: ProcessPool,
) -> None:
    await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0) for _ in range(2)))
    stuck = set(pool.pids())
    # Both workers get a hanging job; neither may stay busy after the timeout.
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await asyncio.gather(pool.run(pool_jobs.hang), pool.run(pool_jobs.hang))
    assert len(pool.pids()) == 2 and not set(pool.pids()) & stuck
    results = await asyncio.wait_for(
        asyncio.gather(*(pool.run(pool_jobs.pid_after, 0) for _ in range(2))), 30
    )
    assert set(results) <= set(pool.pids())
    await asyncio.sleep(0.3)
    assert not any(alive(pid) for pid in stuck)


async def test_a_cancelled_job_frees_its_slot(pool: ProcessPool) -> None:
    task = asyncio.ensure_future(pool.run(pool_jobs.hang))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pids = await asyncio.wait_for(
        asyncio.gather(*(pool.run(pool_jobs.pid_after, 0.1) for _ in range(2))), 30
    )
    assert len(set(pids)) == 2  # both slots answer again


@pytest.mark.parametrize(
    ("job", "args", "reason"),
    [
        (pool_jobs.die_by_signal, (), "extraction worker crashed (killed by signal 9)"),
        (pool_jobs.exit_hard, (3,), "extraction worker crashed (exited with code 3)"),
    ],
    ids=["sigkill", "exit"],
)
async def test_a_crashed_worker_fails_its_job_clearly_and_is_replaced(
    pool: ProcessPool, job: object, args: tuple[object, ...], reason: str
) -> None:
    await asyncio.gather(*(pool.run(pool_jobs.pid_after, 0) for _ in range(2)))
    before = set(pool.pids())
    with pytest.raises(WorkerCrashed) as crashed:
        await asyncio.wait_for(pool.run(job, *args), 30)  # type: ignore[arg-type]
    assert crashed.value.reason == reason
    after = set(pool.pids())
    assert len(after) == 2 and after != before
    pids = await asyncio.wait_for(
        asyncio.gather(*(pool.run(pool_jobs.pid_after, 0) for _ in range(2))), 30
    )
    assert set(pids) <= after


async def test_closing_kills_every_worker() -> None:
    pool = ProcessPool(2)
    pool.start()
    pids = pool.pids()
    pool.close()
    await asyncio.sleep(0.5)
    assert not any(alive(pid) for pid in pids)


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError):
        ProcessPool(0)
