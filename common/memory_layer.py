"""Channels' in-memory layer (the embedded default), with its expiry sweep throttled.

The stock ``InMemoryChannelLayer`` sweeps every channel and group for expired messages and
memberships on **every** send, receive and group send. Each open socket keeps a channel
there while it waits, so with hundreds of sockets every answer's dashboard broadcast walked
them all (~1 ms of daphne per answer under ``bench/ws_load.py --builtin``). Messages expire
after ``expiry`` seconds (60 by default) and memberships after a day, so sweeping at most once
per ``SWEEP_INTERVAL`` changes when something expires by at most that much.

    CHANNEL_LAYERS = {"default": {"BACKEND": "common.memory_layer.InMemoryChannelLayer"}}
"""

from __future__ import annotations

import time

from channels.layers import InMemoryChannelLayer as StockInMemoryChannelLayer

SWEEP_INTERVAL = 1.0  # seconds


class InMemoryChannelLayer(StockInMemoryChannelLayer):
    _next_sweep = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + SWEEP_INTERVAL
        super()._clean_expired()
