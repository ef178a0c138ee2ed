"""Fairness of the extraction pool: one host's pages hold at most ``cap`` slots at once."""

from __future__ import annotations

import asyncio
import doctest

import pytest

from enrichment.pipeline.fetch import fair_slots
from enrichment.pipeline.fetch.fair_slots import FairSlots, slot_key, unfair_pool


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_one_hosts_pages_wait_for_each_other_while_other_hosts_go_ahead() -> None:
    async def scenario() -> list[str]:
        slots = FairSlots(cap=1)
        order: list[str] = []
        release = {name: asyncio.Event() for name in ("slow1", "slow2", "slow3", "other")}

        async def page(host: str, name: str) -> None:
            async with slots.hold(host):
                order.append(f"start {name}")
                await release[name].wait()
            order.append(f"end {name}")

        tasks = [
            asyncio.create_task(page("slow.example", "slow1")),
            asyncio.create_task(page("slow.example", "slow2")),
            asyncio.create_task(page("slow.example", "slow3")),
            asyncio.create_task(page("news.example", "other")),
        ]
        await _settle()
        assert order == ["start slow1", "start other"]  # the other host did not wait
        assert slots.held("slow.example") == 1 and slots.waiting("slow.example") == 2
        release["other"].set()
        release["slow1"].set()
        await _settle()
        assert order[-1] == "start slow2"  # handed over in arrival order
        release["slow2"].set()
        release["slow3"].set()
        await asyncio.gather(*tasks)
        assert slots.held("slow.example") == 0 and slots.waiting("slow.example") == 0
        return order

    assert asyncio.run(scenario())[-1] == "end slow3"


def test_a_cancelled_waiter_leaves_no_slot_taken() -> None:
    async def scenario() -> None:
        slots = FairSlots(cap=1)
        gate = asyncio.Event()

        async def page() -> None:
            async with slots.hold("h"):
                await gate.wait()

        first = asyncio.create_task(page())
        second = asyncio.create_task(page())  # waits
        await _settle()
        second.cancel()
        await _settle()
        assert slots.waiting("h") == 0
        gate.set()
        await first
        assert slots.held("h") == 0
        async with slots.hold("h"):  # free again
            assert slots.held("h") == 1

    asyncio.run(scenario())


def test_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        FairSlots(cap=0)


def test_the_key_is_the_host_of_the_url_else_files() -> None:
    assert slot_key(("https://Slow.Example:8443/a?b", object())) == "slow.example"
    assert slot_key((b"%PDF", False)) == "files"
    assert slot_key(()) == "files"


def test_a_pool_is_fair_only_with_a_process_no_host_can_take() -> None:
    assert unfair_pool(2, 1) is None and unfair_pool(3, 2) is None
    for processes, cap, held in ((1, 1, "the one"), (2, 2, "all 2"), (2, 3, "all 2")):
        problem = unfair_pool(processes, cap)
        assert problem is not None and f"may hold {held} extraction process" in problem
        assert f"EXTRACTION_SLOTS_PER_HOST={cap}" in problem
    assert doctest.testmod(fair_slots).failed == 0
