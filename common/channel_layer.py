"""channels_redis' layer: sends in one Redis round trip, process-local receives in batches.

``channels_redis.core.RedisChannelLayer.send`` trims the channel's expired messages, counts
the rest against the capacity, adds the message and renews the key's expiry: four commands,
each awaited in turn. Under ``bench/ws_load.py --redis`` every relayed frame of a worker paid
for them (the send was ~14% of a worker's busy samples). Here the same four commands run as one
Lua script on the server, so the channel's data in Redis is exactly what the stock layer
writes and reads (a daphne with the stock layer receives these messages, and the other way
round).

Receiving on a process-local channel (every socket's reply channel): the stock layer has each
waiting socket take turns at a lock, and the one holding it pops one message with four round
trips (move back a backup queue, BZPOPMIN, add to the backup queue, clear it) plus a task of its
own to clean up. With hundreds of sockets under ``bench/ws_load.py --redis`` that was most of
daphne's Redis work per answer. Here one pump task per process (and channel prefix) pops
every waiting message of the process' channel at once (BZMPOP with a count: one round trip that
waits when none is there; before Redis 7, ZPOPMIN with a count, then BZPOPMIN when none was
waiting) and puts each into the local buffer of the socket it is for; a socket's
receive just waits on its buffer. A message is lost only if the process dies between the pop and the socket's send,
which the stock layer's backup queue did not cover either (it lived as long as the process).
Redis going away does not end a receive: the pump waits for Redis (capped backoff) and the
sockets keep waiting. General channels and groups are the stock layer's. A reply that arrives for a
socket that has closed (its job outlived it) waits in a buffer for ``expiry`` seconds, in case
the socket asks after all, and is then dropped (the stock layer kept such buffers forever).

The capacity check and the add are now atomic: the stock layer's "may leak slightly over
capacity" (two senders counting at once) cannot happen.

    CHANNEL_LAYERS = {"default": {
        "BACKEND": "common.channel_layer.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "capacity": 1500, "expiry": 60},
    }}
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any

import redis
from channels.exceptions import ChannelFull
from channels_redis.core import RedisChannelLayer as StockRedisChannelLayer

# KEYS[1] the channel's sorted set; ARGV: expired-before score, capacity, score (now),
# serialized message, expiry seconds. Returns 0 when the channel is full, else 1.
SEND_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ARGV[1])
if redis.call('ZCOUNT', KEYS[1], '-inf', '+inf') >= tonumber(ARGV[2]) then
    return 0
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""

# KEYS[1] the group's sorted set; ARGV[1] joined-before score of expired members.
GROUP_MEMBERS_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

# KEYS the members' channel sorted sets; ARGV: one message per key, one capacity per key,
# then expired-before score, score (now), expiry seconds. Returns how many were full.
GROUP_SEND_SCRIPT = """
local full = 0
local count = #KEYS
for i = 1, count do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, ARGV[2 * count + 1])
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[count + i]) then
        redis.call('ZADD', KEYS[i], ARGV[2 * count + 2], ARGV[i])
        redis.call('EXPIRE', KEYS[i], ARGV[2 * count + 3])
    else
        full = full + 1
    end
end
return full
"""

logger = logging.getLogger(__name__)

# Messages popped per round trip by the receive pump.
RECEIVE_BATCH = 200
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, OSError)


class RedisChannelLayer(StockRedisChannelLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._send_script: Any = None
        self._group_scripts: tuple[Any, Any] | None = None
        # Sockets waiting in ``receive`` per process-local channel, and the pump serving them.
        self._waiting: Counter[str] = Counter()
        # ... and per channel in Redis (the part before "!"), with the pump serving each.
        self._waiting_on: Counter[str] = Counter()
        self._pumps: dict[str, asyncio.Task[None]] = {}
        # Buffers nobody has waited on since (monotonic time). A socket that closed while its
        # job ran leaves the late reply here; the pump drops such buffers after ``expiry``.
        self._unclaimed_since: dict[str, float] = {}
        self._next_sweep = 0.0
        # Whether the server has BZMPOP (Redis 7): unknown until the first pump asks it.
        self._bzmpop: bool | None = None

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        """Send a message onto a (general or specific) channel, as the stock layer does."""
        assert isinstance(message, dict), "message is not a dict"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        assert "__asgi_channel__" not in message
        non_local_name = channel
        if "!" in channel:
            # A process-local channel: the full name travels in the message.
            message = {**message, "__asgi_channel__": channel}
            non_local_name = self.non_local_name(channel)
            index = self.consistent_hash(non_local_name)  # the shard its receiver reads
        else:
            index = next(self._send_index_generator)
        connection = self.connection(index)
        if self._send_script is None:
            # EVALSHA, loading the script again when the server has lost it (a restart).
            self._send_script = connection.register_script(SEND_SCRIPT)
        now = time.time()
        expiry = int(self.expiry)
        added = await self._send_script(
            keys=[self.prefix + non_local_name],
            args=[
                int(now) - expiry,
                self.get_capacity(channel),
                now,
                self.serialize(message),
                expiry,
            ],
            client=connection,
        )
        if not added:
            raise ChannelFull()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        """Send to every member of ``group`` in two round trips, one when it has none.

        The stock layer takes four (expire members, list them, expire messages, add): a
        worker recording a run told the dashboards' group about it that way for every run,
        with no dashboard open as often as not. Same data in Redis as the stock layer's.
        """
        if self.ring_size != 1:  # sharded: the stock layer's per-shard sends
            await super().group_send(group, message)
            return
        assert self.require_valid_group_name(group), "Group name not valid"
        connection = self.connection(0)
        if self._group_scripts is None:
            self._group_scripts = (
                connection.register_script(GROUP_MEMBERS_SCRIPT),
                connection.register_script(GROUP_SEND_SCRIPT),
            )
        members_script, send_script = self._group_scripts
        now = time.time()
        members = await members_script(
            keys=[self._group_key(group)],
            args=[int(now) - self.group_expiry],
            client=connection,
        )
        if not members:
            return
        names = [member.decode("utf8") for member in members]
        _, messages, capacities = self._map_channel_keys_to_connection(names, message)
        keys = list(messages)
        full = await send_script(
            keys=keys,
            args=[
                *(messages[key] for key in keys),
                *(capacities[key] for key in keys),
                int(now) - int(self.expiry),
                now,
                int(self.expiry),
            ],
            client=connection,
        )
        if full:
            logger.info("%s of %s channels over capacity in group %s", full, len(names), group)

    async def receive(self, channel: str) -> dict[str, Any]:
        """The next message of ``channel``; process-local ones come through the pump."""
        if "!" not in channel:
            return await super().receive(channel)
        assert self.require_valid_channel_name(channel)
        self._unclaimed_since.pop(channel, None)
        buffer = self.receive_buffer[channel]
        if not buffer.empty():
            return self._taken(channel, buffer.get_nowait())
        real_channel = self.non_local_name(channel)
        self._waiting[channel] += 1
        self._waiting_on[real_channel] += 1
        try:
            self._pump_start(real_channel)
            message = await buffer.get()
        finally:
            for counter, key in ((self._waiting, channel), (self._waiting_on, real_channel)):
                counter[key] -= 1
                if not counter[key]:
                    del counter[key]
            if channel not in self._waiting and buffer.empty():
                # Nobody waits and nothing is left: drop the buffer, as the stock layer does.
                self.receive_buffer.pop(channel, None)
        return self._taken(channel, message)

    def _taken(self, channel: str, message: dict[str, Any]) -> dict[str, Any]:
        buffer = self.receive_buffer.get(channel)
        if buffer is not None and channel not in self._waiting:
            if buffer.empty():
                del self.receive_buffer[channel]
            else:
                self._unclaimed_since.setdefault(channel, time.monotonic())
        return message

    def _pump_start(self, real_channel: str) -> None:
        """One pump per process-local channel prefix ("specific.", "health.", ...)."""
        pump = self._pumps.get(real_channel)
        if pump is not None and not pump.done() and not pump.get_loop().is_closed():
            if pump.get_loop() is not asyncio.get_running_loop():
                raise RuntimeError("Two event loops are trying to receive() on one channel layer")
            return
        loop = asyncio.get_running_loop()
        self._pumps[real_channel] = loop.create_task(self._pump_run(real_channel))

    async def _pump_run(self, real_channel: str) -> None:
        """Pop the channel's messages while any socket waits; put each where it belongs."""
        key = self.prefix + real_channel
        index = self.consistent_hash(real_channel)
        delay = 0.1
        while self._waiting_on[real_channel] > 0:
            try:
                popped = await self._pop(self.connection(index), key)
            except Exception as exc:  # the sockets wait on this pump: it must not die
                if isinstance(exc, REDIS_DOWN):
                    logger.warning("channel layer unreachable (%s); retrying", exc)
                else:
                    logger.exception("channel layer receive failed; retrying")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.1
            for member, _score in popped:
                self._deliver(member)
            self._sweep_unclaimed()

    async def _pop(self, connection: Any, key: str) -> list[tuple[bytes, Any]]:
        """Up to ``RECEIVE_BATCH`` messages of ``key``, oldest first, waiting up to
        ``brpop_timeout`` seconds for one. With BZMPOP a message arriving while the pump waits
        costs one round trip; the fallback pays two (the ZPOPMIN that found nothing, then the
        BZPOPMIN), which under ``bench/ws_load.py --redis`` was most messages."""
        if self._bzmpop is not False:
            try:
                reply = await connection.execute_command(
                    "BZMPOP", self.brpop_timeout, 1, key, "MIN", "COUNT", RECEIVE_BATCH
                )
            except redis.ResponseError as exc:
                if "unknown command" not in str(exc).lower():
                    raise
                self._bzmpop = False  # a server before Redis 7.0
            else:
                self._bzmpop = True
                return [] if reply is None else [(member, score) for member, score in reply[1]]
        popped = await connection.zpopmin(key, RECEIVE_BATCH)
        if popped:
            return list(popped)
        blocked = await connection.bzpopmin(key, timeout=self.brpop_timeout)
        return [] if blocked is None else [(blocked[1], blocked[2])]

    def _sweep_unclaimed(self) -> None:
        """Drop the buffers nobody has waited on for ``expiry`` seconds (closed sockets').

        A live socket waits again as soon as it has handled a message; a message left for
        longer than ``expiry`` is one the layer may drop anyway (the stock layer expires it
        in Redis). At most once per ``expiry`` (5 s at the most).
        """
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + min(5.0, self.expiry)
        for channel, since in list(self._unclaimed_since.items()):
            if since < now - self.expiry and channel not in self._waiting:
                del self._unclaimed_since[channel]
                self.receive_buffer.pop(channel, None)

    def _deliver(self, content: bytes) -> None:
        try:
            message = self.deserialize(content)
            channels = message.pop("__asgi_channel__")
        except Exception:  # one undecodable message must not stop every socket's replies
            logger.exception("dropped a channel-layer message that could not be decoded")
            return
        for channel in channels if isinstance(channels, list) else [channels]:
            self.receive_buffer[channel].put_nowait(message)
            if channel not in self._waiting:
                self._unclaimed_since.setdefault(channel, time.monotonic())
