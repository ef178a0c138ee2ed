"""The extraction pool as the links use it: a per-task deadline that replaces the process,
and a cap per host (``FairSlots``, tested on its own in tests/enrichment/pipeline/fetch)."""

from __future__ import annotations

import asyncio
import operator
import os
import time
from collections.abc import Iterator

import pytest

from common.workpool import WorkPool
from enrichment.services import pool as service_pool
from enrichment.services.links import ExtractionTimeout, fair_extract


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkPool]:
    pool = WorkPool(1)
    monkeypatch.setattr(service_pool, "work_pool", lambda: pool)
    yield pool
    pool.close()


def test_an_extraction_past_its_deadline_ends_with_a_reason_and_a_fresh_process(
    small_pool: WorkPool, settings
) -> None:
    settings.EXTRACTION_TIMEOUT_SECONDS = 1

    async def scenario() -> tuple[str, int]:
        with pytest.raises(ExtractionTimeout) as caught:
            await fair_extract(time.sleep, 30)
        return caught.value.reason, await fair_extract(operator.add, 2, 3)

    small_pool.start()
    before = small_pool.pids()
    reason, answer = asyncio.run(scenario())
    assert reason.startswith("extraction-timeout: extracting the page took over 1 s")
    assert answer == 5  # the pool still works: the stuck process was replaced
    assert small_pool.pids() != before


@pytest.mark.parametrize(("processes", "warned"), [(1, True), (2, False)])
def test_a_pool_one_host_can_fill_is_said_in_the_log_when_it_starts(
    monkeypatch: pytest.MonkeyPatch, settings, caplog, processes: int, warned: bool
) -> None:
    settings.EXTRACTION_WORKERS, settings.EXTRACTION_SLOTS_PER_HOST = processes, 1
    monkeypatch.setattr(service_pool, "warm_up_worker", os.getpid)  # no imports to wait for
    monkeypatch.setattr(service_pool, "_pool", None)
    try:
        with caplog.at_level("WARNING", logger="enrichment.services.pool"):
            assert len(service_pool.work_pool().pids()) == processes
    finally:
        service_pool.close_work_pool()
    said = [r.getMessage() for r in caplog.records if r.name == "enrichment.services.pool"]
    if warned:
        assert said == [
            "the extraction pool is not fair: pages of one host may hold the one extraction "
            "process at once (EXTRACTION_WORKERS=1, EXTRACTION_SLOTS_PER_HOST=1)"
        ]
    else:
        assert said == []
