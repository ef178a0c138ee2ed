"""``common.channel_layer``: channels_redis' layer, one-trip sends, pumped receives.

Against the machine's Redis, under a prefix of its own that is deleted afterwards. The
stock layer is the reference: what one sends, the other receives, both ways.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis
import redis.asyncio as aioredis
from channels.exceptions import ChannelFull
from channels_redis.core import RedisChannelLayer as StockLayer

from common.channel_layer import RedisChannelLayer
from tests.live import free_port


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


async def assert_sockets_receive_their_own_in_order(
    ours: RedisChannelLayer, stock: StockLayer, sockets: int
) -> list[str]:
    """Three messages to each of ``sockets`` waiting sockets: each gets its own, in order.
    Returns the sockets' channels."""
    channels = [await ours.new_channel("reply.") for _ in range(sockets)]
    waiting = [asyncio.create_task(ours.receive(channel)) for channel in channels]
    await asyncio.sleep(0.05)  # every socket is waiting before anything is sent
    for number in range(3):
        for index, channel in enumerate(channels):
            await stock.send(channel, {"type": "frame", "socket": index, "n": number})
    firsts = await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert [(m["socket"], m["n"]) for m in firsts] == [(s, 0) for s in range(sockets)]
    for index, channel in enumerate(channels):
        rest = [await asyncio.wait_for(ours.receive(channel), 5) for _ in range(2)]
        assert [(m["socket"], m["n"]) for m in rest] == [(index, 1), (index, 2)]
    return channels


async def test_many_sockets_each_receive_their_own_messages_in_order(
    redis_url: str, prefix: str
) -> None:
    ours, stock = layers(redis_url, prefix)
    await assert_sockets_receive_their_own_in_order(ours, stock, 30)
    assert not ours.receive_buffer  # nothing left behind once every message is read
    await ours.flush()


@pytest.fixture
def redis_without_bzmpop(tmp_path) -> Iterator[str]:
    """A private redis-server (never the shared one) without BZMPOP, as before Redis 7."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--dir", str(tmp_path), "--rename-command", "BZMPOP", ""]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "private redis did not start"
            time.sleep(0.05)
    with pytest.raises(redis.ResponseError, match="unknown command"):
        client.execute_command("BZMPOP", 0.01, 1, "nothing", "MIN")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


async def test_sockets_receive_in_order_from_a_redis_without_bzmpop(
    redis_without_bzmpop: str,
) -> None:
    ours, stock = layers(redis_without_bzmpop, "old")
    channels = await assert_sockets_receive_their_own_in_order(ours, stock, 5)
    # A reply sent while the pump waits (BZPOPMIN) arrives too.
    late = asyncio.create_task(ours.receive(channels[0]))
    await asyncio.sleep(0.2)
    await stock.send(channels[0], {"type": "late"})
    assert await asyncio.wait_for(late, 5) == {"type": "late"}
    await ours.flush()


async def test_channels_of_every_prefix_are_received_at_once(redis_url: str, prefix: str) -> None:
    ours, stock = layers(redis_url, prefix)
    # In Redis each prefix is a channel of its own ("health." is /api/health's probe).
    reply, probe = await ours.new_channel("specific."), await ours.new_channel("health.")
    waiting = [asyncio.create_task(ours.receive(channel)) for channel in (reply, probe)]
    await asyncio.sleep(0.05)
    await stock.send(reply, {"type": "frame"})
    await stock.send(probe, {"type": "health.ping"})
    received = await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert received == [{"type": "frame"}, {"type": "health.ping"}]
    await ours.flush()


async def test_a_socket_that_stops_waiting_does_not_take_others_messages(
    redis_url: str, prefix: str
) -> None:
    ours, stock = layers(redis_url, prefix)
    gone, staying = await ours.new_channel("reply."), await ours.new_channel("reply.")
    leaving = asyncio.create_task(ours.receive(gone))
    await asyncio.sleep(0.05)
    leaving.cancel()  # the socket closed while it waited
    await stock.send(staying, {"type": "frame", "n": 1})
    assert (await asyncio.wait_for(ours.receive(staying), 5))["n"] == 1
    # A message sent before its socket asks is kept for it.
    await stock.send(staying, {"type": "frame", "n": 2})
    await asyncio.sleep(0.05)
    assert (await asyncio.wait_for(ours.receive(staying), 5))["n"] == 2
    await ours.flush()


async def test_a_group_message_reaches_every_local_member(redis_url: str, prefix: str) -> None:
    ours, stock = layers(redis_url, prefix)
    members = [await ours.new_channel("reply.") for _ in range(3)]
    for channel in members:
        await ours.group_add("decisions", channel)
    waiting = [asyncio.create_task(ours.receive(channel)) for channel in members]
    await asyncio.sleep(0.05)
    await stock.group_send("decisions", {"type": "decision.recorded", "run": 7})
    received = await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert received == [{"type": "decision.recorded", "run": 7}] * 3
    await ours.flush()


async def test_a_receive_waits_for_redis_instead_of_failing() -> None:
    with socket.socket() as probe:  # a port nothing listens on: Redis is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ours = RedisChannelLayer(hosts=[f"redis://127.0.0.1:{port}/0"], prefix="down")
    channel = await ours.new_channel("reply.")
    waiting = asyncio.create_task(ours.receive(channel))
    done, _ = await asyncio.wait({waiting}, timeout=0.5)
    assert not done  # still waiting (the stock layer raised ConnectionError here)
    waiting.cancel()


async def test_group_sends_reach_stock_receivers_and_skip_full_or_expired_members(
    redis_url: str, prefix: str
) -> None:
    ours, _ = layers(redis_url, prefix, capacity=1, group_expiry=60)
    await ours.group_send("nobody", {"type": "x"})  # a group with no members: nothing happens
    # Three processes' sockets (a process' sockets share one channel in Redis).
    first, second, third = (StockLayer(hosts=[redis_url], prefix=prefix) for _ in range(3))
    fresh, other, full = [await layer.new_channel("reply.") for layer in (first, second, third)]
    for channel in (fresh, other, full):
        await first.group_add("decisions", channel)
    await ours.send(full, {"type": "earlier"})  # capacity 1: this member is full
    client = aioredis.Redis.from_url(redis_url)
    gone = await first.new_channel("reply.")
    await client.zadd(f"{prefix}:group:decisions", {gone: 1})  # joined long ago: expired
    await ours.group_send("decisions", {"type": "decision.recorded", "run": 3})
    recorded = {"type": "decision.recorded", "run": 3}
    assert await asyncio.wait_for(first.receive(fresh), 5) == recorded
    assert await asyncio.wait_for(second.receive(other), 5) == recorded
    assert await asyncio.wait_for(third.receive(full), 5) == {"type": "earlier"}
    with pytest.raises(TimeoutError):  # the group's message found it full and was dropped
        await asyncio.wait_for(third.receive(full), 0.3)
    assert await client.zscore(f"{prefix}:group:decisions", gone) is None
    await client.aclose()
    await ours.flush()


async def test_with_two_redis_shards_a_reply_reaches_the_shard_its_socket_reads(
    redis_url: str, prefix: str
) -> None:
    # channels_redis 4.x hashes a process-local channel's full name to pick the shard it
    # sends to, but reads the shard of the part before "!": with two servers a reply could
    # land where nobody reads. Ours sends where the receiver reads.
    hosts = [redis_url, redis_url.rsplit("/", 1)[0] + "/15"]  # another database: a 2nd server
    sender = RedisChannelLayer(hosts=hosts, prefix=prefix)
    shards: set[int] = set()
    replies = 0
    while shards != {0, 1} or replies < 8:  # processes whose channels hash to either shard
        receiver = RedisChannelLayer(hosts=hosts, prefix=prefix)
        channel = await receiver.new_channel("reply.")
        shards.add(receiver.consistent_hash(receiver.non_local_name(channel)))
        await sender.send(channel, {"type": "frame", "n": replies})
        assert await asyncio.wait_for(receiver.receive(channel), 5) == {
            "type": "frame",
            "n": replies,
        }
        replies += 1
    await sender.flush()


async def test_the_receive_pump_survives_a_redis_error_and_keeps_serving(
    redis_url: str, prefix: str
) -> None:
    ours, stock = layers(redis_url, prefix)
    channel = await ours.new_channel("reply.")
    client = aioredis.Redis.from_url(redis_url)
    key = prefix + ours.non_local_name(channel)
    await client.set(key, "not a sorted set")  # every pop now fails with WRONGTYPE
    waiting = asyncio.create_task(ours.receive(channel))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await client.delete(key)
    await stock.send(channel, {"type": "frame"})
    assert await asyncio.wait_for(waiting, 5) == {"type": "frame"}
    await client.aclose()
    await ours.flush()


async def test_late_replies_to_a_closed_socket_are_dropped_after_the_expiry(
    redis_url: str, prefix: str
) -> None:
    ours, _ = layers(redis_url, prefix, expiry=1)
    live, gone = await ours.new_channel(), await ours.new_channel()
    closed = asyncio.create_task(ours.receive(gone))
    await asyncio.sleep(0.05)
    closed.cancel()  # the socket closed while its job was still running
    waiting = asyncio.create_task(ours.receive(live))  # another socket keeps the pump going
    await ours.send(gone, {"type": "late reply"})
    await asyncio.sleep(0.3)
    assert gone in ours.receive_buffer  # kept for a while: its socket might still ask
    await asyncio.sleep(1.0)  # past the expiry
    await ours.send(live, {"type": "next"})
    assert await asyncio.wait_for(waiting, 5) == {"type": "next"}
    assert gone not in ours.receive_buffer and ours._unclaimed_since == {}
    await ours.flush()


async def test_a_socket_between_two_receives_still_gets_its_message(
    redis_url: str, prefix: str
) -> None:
    ours, stock = layers(redis_url, prefix, expiry=1)
    busy, other = await ours.new_channel(), await ours.new_channel()
    waiting = asyncio.create_task(ours.receive(other))  # keeps the pump going
    await stock.send(busy, {"type": "one"})
    await stock.send(busy, {"type": "two"})
    assert await asyncio.wait_for(ours.receive(busy), 5) == {"type": "one"}
    await asyncio.sleep(0.5)  # handling "one": not waiting, within the expiry
    await stock.send(other, {"type": "wake"})
    assert await asyncio.wait_for(waiting, 5) == {"type": "wake"}
    assert await asyncio.wait_for(ours.receive(busy), 5) == {"type": "two"}
    await ours.flush()
