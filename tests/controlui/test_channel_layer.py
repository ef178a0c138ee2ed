"""``controlui.plumbing.channel_layer``: channels_redis' layer with a one-round-trip send.

Against the machine's Redis, under a prefix of its own that is deleted afterwards. The
stock layer is the reference: what one sends, the other receives, both ways.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from channels.exceptions import ChannelFull
from channels_redis.core import RedisChannelLayer as StockLayer

from controlui.plumbing.channel_layer import RedisChannelLayer


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    name = f"layer{uuid.uuid4().hex[:10]}"
    yield name
    client = aioredis.Redis.from_url(redis_url)
    async for key in client.scan_iter(match=f"{name}*"):
        await client.delete(key)
    await client.aclose()


def layers(redis_url: str, prefix: str, **config: object) -> tuple[StockLayer, StockLayer]:
    settings = {"hosts": [redis_url], "prefix": prefix, **config}
    return RedisChannelLayer(**settings), StockLayer(**settings)


@pytest.mark.parametrize("local", [False, True], ids=["general", "process-local"])
async def test_the_stock_layer_receives_what_it_sends_and_the_other_way_round(
    redis_url: str, prefix: str, local: bool
) -> None:
    ours, stock = layers(redis_url, prefix)
    for sender, receiver in [(ours, stock), (stock, ours)]:
        channel = await receiver.new_channel("reply.") if local else "worker-jobs"
        message = {"type": "enrich.frame", "frame": {"id": "m1", "body": "é " * 100}}
        await sender.send(channel, message)
        assert await receiver.receive(channel) == message
    await ours.flush()
    await stock.flush()


async def test_messages_arrive_in_the_order_they_were_sent(redis_url: str, prefix: str) -> None:
    ours, stock = layers(redis_url, prefix)
    channel = await stock.new_channel("reply.")
    for number in range(5):
        await ours.send(channel, {"type": "frame", "n": number})
    assert [(await stock.receive(channel))["n"] for _ in range(5)] == [0, 1, 2, 3, 4]
    await stock.flush()


async def test_a_full_channel_refuses_the_message(redis_url: str, prefix: str) -> None:
    ours, stock = layers(redis_url, prefix, capacity=2)
    await ours.send("jobs", {"type": "a"})
    await ours.send("jobs", {"type": "b"})
    with pytest.raises(ChannelFull):
        await ours.send("jobs", {"type": "c"})
    assert [(await stock.receive("jobs"))["type"] for _ in range(2)] == ["a", "b"]
    await ours.send("jobs", {"type": "d"})  # room again once read
    assert (await stock.receive("jobs"))["type"] == "d"
    await stock.flush()


async def test_a_send_sets_the_channel_to_expire(redis_url: str, prefix: str) -> None:
    ours, _ = layers(redis_url, prefix, expiry=30)
    await ours.send("jobs", {"type": "a"})
    client = aioredis.Redis.from_url(redis_url)
    assert 0 < await client.ttl(f"{prefix}jobs") <= 30
    await client.aclose()
    await ours.flush()


async def test_the_script_is_loaded_again_when_redis_lost_it(redis_url: str, prefix: str) -> None:
    ours, stock = layers(redis_url, prefix)
    await ours.send("jobs", {"type": "a"})
    ours._send_script.sha = "0" * 40  # as after a Redis restart: no such script there
    await ours.send("jobs", {"type": "b"})
    assert [(await stock.receive("jobs"))["type"] for _ in range(2)] == ["a", "b"]
    await stock.flush()
