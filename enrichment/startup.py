from __future__ import annotations

import contextlib
import logging

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


def recover_interrupted_runs() -> None:
    """At process start, close the runs a crashed process left ``running``.

    Housekeeping must never stop a server from starting: a database that is not migrated
    yet (or not reachable for a moment) only gets a warning.
    """
    from enrichment.services import runs_mark_interrupted

    try:
        count = runs_mark_interrupted()
    except (DatabaseError, RuntimeError) as exc:  # RuntimeError: DB access blocked (tests)
        logger.warning("could not check for interrupted runs: %s", exc)
        return
    finally:
        # This runs in the main thread at import, which never ends a request: its connection
        # would stay checked out of the pool for the life of the process.
        with contextlib.suppress(DatabaseError, RuntimeError):
            connection.close()
    if count:
        logger.warning("marked %d run(s) left running by a stopped process as interrupted", count)
        interrupted_runs_push(count)


def interrupted_runs_push(count: int) -> None:
    """Tell open dashboards (other servers, through Redis) about the runs just closed."""
    from asgiref.sync import async_to_sync

    from enrichment.models import Run
    from enrichment.services import decision_broadcast

    # The sweep marks and stamps them in one UPDATE: they are the latest finished ones.
    runs = Run.objects.filter(outcome=Run.Outcome.INTERRUPTED).order_by("-finished_at")[:count]
    try:
        for run in runs:
            async_to_sync(decision_broadcast)(run)
    except Exception as exc:  # a channel layer that is down must not stop the start-up
        logger.warning("could not push interrupted runs: %s", exc)
