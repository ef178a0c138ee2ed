"""channels_redis' layer, sending a message in one Redis round trip instead of four.

``channels_redis.core.RedisChannelLayer.send`` trims the channel's expired messages, counts
the rest against the capacity, adds the message and renews the key's expiry: four commands,
each awaited in turn. Under ``bench/ws_load.py --redis`` every relayed frame of a worker paid
for them (the send was ~14% of a worker's busy samples). Here the same four commands run as one
Lua script on the server, so the channel's data in Redis is exactly what the stock layer
writes and reads (a daphne with the stock layer receives these messages, and the other way
round); receiving and groups are the stock layer's.

The capacity check and the add are now atomic: the stock layer's "may leak slightly over
capacity" (two senders counting at once) cannot happen.

    CHANNEL_LAYERS = {"default": {
        "BACKEND": "controlui.plumbing.channel_layer.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL], "capacity": 1500, "expiry": 60},
    }}
"""

from __future__ import annotations

import time
from typing import Any

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


class RedisChannelLayer(StockRedisChannelLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._send_script: Any = None

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
            index = self.consistent_hash(channel)
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
