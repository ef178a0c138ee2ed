"""Database connections outside Django's request cycle (sockets, workers)."""

from __future__ import annotations

from django.db import connections


def close_stale_connections() -> None:
    """Channels' per-event database check (``close_old_connections``), for a sync function
    to run first in its own thread hop instead of paying a hop for the check.

    A connection inside an atomic block is left alone: Django would drop it (its autocommit
    is off), and with it the caller's transaction.
    """
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()
