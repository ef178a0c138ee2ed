"""``common.memory_layer``: the in-memory layer with its expiry sweep throttled."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from channels.layers import InMemoryChannelLayer as StockLayer

from common import memory_layer
from common.memory_layer import InMemoryChannelLayer


async def test_messages_and_groups_work_as_in_the_stock_layer() -> None:
    layer = InMemoryChannelLayer()
    first, second = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("dashboards", first)
    await layer.group_add("dashboards", second)
    await layer.group_send("dashboards", {"type": "run.new", "run": 7})
    await layer.send(first, {"type": "direct"})
    assert await layer.receive(first) == {"type": "run.new", "run": 7}
    assert await layer.receive(first) == {"type": "direct"}
    assert await layer.receive(second) == {"type": "run.new", "run": 7}


async def test_an_expired_message_is_still_never_delivered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_layer, "SWEEP_INTERVAL", 0.2)
    layer = InMemoryChannelLayer(expiry=0.1)
    await layer.send("reply.x", {"type": "late"})
    await asyncio.sleep(0.35)  # past the message's expiry and the next sweep
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive("reply.x"), timeout=0.2)


async def test_one_sweep_per_interval_however_many_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    sweeps = []
    monkeypatch.setattr(StockLayer, "_clean_expired", lambda self: sweeps.append(1))
    # All the sends within one interval, however slow the machine (a stall of a second on a
    # busy CI machine let a second sweep in).
    monkeypatch.setattr(memory_layer, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    layer = InMemoryChannelLayer()
    waiting = [await layer.new_channel() for _ in range(50)]
    for channel in waiting:
        await layer.group_add("dashboards", channel)
    for number in range(80):  # under the capacity of 100
        await layer.group_send("dashboards", {"type": "run.new", "run": number})
    assert len(sweeps) == 1  # the stock layer sweeps all 50 channels on each of the 80 sends
    assert len(layer.channels) == 50 and all(q.qsize() == 80 for q in layer.channels.values())
