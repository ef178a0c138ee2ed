"""Runs left ``running`` by a process that stopped (a crash, a kill, a lost machine) are
closed as ``interrupted`` when a server or worker starts, and periodically (the sweeper:
runs still ``running`` past ``ENRICHMENT_JOB_DEADLINE_SECONDS``), and the dashboards are told."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from datetime import timedelta

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from enrichment.models import Run
from enrichment.services.live_feed import decision_broadcast
from enrichment.services.problems import occurrence_from_rows, problems_record

logger = logging.getLogger(__name__)

# A run still "running" after this long belongs to a process that is gone.
STALE_RUN_AGE = timedelta(hours=1)


def recover_interrupted_runs() -> None:
    """At process start, close the runs a crashed process left ``running``.

    Housekeeping must never stop a server from starting: a database that is not migrated
    yet (or not reachable for a moment) only gets a warning.
    """
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
        interrupted_runs_group(count)
        interrupted_runs_push(count)


def overdue_error(seconds: int) -> str:
    return (
        f"overdue: still running {seconds} s after it started (the job deadline); "
        "the worker running it stopped or hung"
    )


def runs_mark_overdue(deadline_seconds: int) -> int:
    """Close the runs still ``running`` more than ``deadline_seconds`` after they started."""
    cutoff = timezone.now() - timedelta(seconds=deadline_seconds)
    return Run.objects.filter(outcome=Run.Outcome.RUNNING, created_at__lt=cutoff).update(
        outcome=Run.Outcome.INTERRUPTED,
        error=overdue_error(deadline_seconds),
        finished_at=timezone.now(),
    )


def overdue_runs_count(deadline_seconds: int) -> int:
    """Runs still ``running`` past the deadline (the sweeper has not closed them yet)."""
    cutoff = timezone.now() - timedelta(seconds=deadline_seconds)
    return Run.objects.filter(outcome=Run.Outcome.RUNNING, created_at__lt=cutoff).count()


def lost_runs_count(deadline_seconds: int) -> int:
    """Runs the sweeper closed within the last ``deadline_seconds``."""
    since = timezone.now() - timedelta(seconds=deadline_seconds)
    return Run.objects.filter(
        outcome=Run.Outcome.INTERRUPTED, finished_at__gte=since, error__startswith="overdue:"
    ).count()


def dead_letter_runs_count(deadline_seconds: int) -> int:
    """Jobs the job queue gave up on (``dead-letter`` runs) within the last deadline."""
    since = timezone.now() - timedelta(seconds=deadline_seconds)
    return Run.objects.filter(outcome=Run.Outcome.DEAD_LETTER, created_at__gte=since).count()


def sweep_overdue_runs() -> int:
    """One sweep: close overdue runs, group them into their problem, tell the dashboards."""
    try:
        count = runs_mark_overdue(settings.ENRICHMENT_JOB_DEADLINE_SECONDS)
    except (DatabaseError, RuntimeError) as exc:
        logger.warning("could not sweep overdue runs: %s", exc)
        return 0
    if count:
        logger.warning("closed %d run(s) still running past the job deadline", count)
        interrupted_runs_group(count)
        interrupted_runs_push(count)
    return count


_sweeper_lock = threading.Lock()
_sweeper: threading.Thread | None = None
_sweeper_stop = threading.Event()


def sweeper_start() -> None:
    """Sweep every ``ENRICHMENT_SWEEP_SECONDS`` in a daemon thread (once per process)."""
    global _sweeper
    interval = settings.ENRICHMENT_SWEEP_SECONDS
    if not interval:
        return
    with _sweeper_lock:
        if _sweeper is not None and _sweeper.is_alive():
            return
        _sweeper_stop.clear()
        _sweeper = threading.Thread(
            target=_sweep_forever, args=(interval,), name="overdue-run-sweeper", daemon=True
        )
        _sweeper.start()


def sweeper_stop() -> None:
    """Stop the sweeper thread (tests; a server's sweeper ends with its process)."""
    _sweeper_stop.set()
    if _sweeper is not None:
        _sweeper.join(timeout=10)


def _sweep_forever(interval: float) -> None:
    while not _sweeper_stop.wait(interval):
        try:
            sweep_overdue_runs()
        except Exception:  # the sweeper must outlive any one failed sweep
            logger.exception("overdue run sweep failed")
        finally:
            with contextlib.suppress(DatabaseError, RuntimeError):
                connection.close()


def interrupted_runs_group(count: int) -> None:
    """Count the runs just closed into their problem ("Run interrupted")."""
    runs = Run.objects.filter(outcome=Run.Outcome.INTERRUPTED).order_by("-finished_at")[:count]
    try:
        problems_record([occurrence_from_rows(run, ()) for run in runs])
    except Exception as exc:  # housekeeping must not stop the start-up either
        logger.warning("could not group interrupted runs into problems: %s", exc)


def interrupted_runs_push(count: int) -> None:
    """Tell open dashboards (other servers, through Redis) about the runs just closed."""
    # The sweep marks and stamps them in one UPDATE: they are the latest finished ones.
    runs = Run.objects.filter(outcome=Run.Outcome.INTERRUPTED).order_by("-finished_at")[:count]
    try:
        for run in runs:
            async_to_sync(decision_broadcast)(run)
    except Exception as exc:  # a channel layer that is down must not stop the start-up
        logger.warning("could not push interrupted runs: %s", exc)


def runs_mark_interrupted() -> int:
    """Mark runs whose process died mid-run as ``interrupted`` (called at start-up).

    A run is abandoned when its owner is a dead process on this host, or when it has been
    running far longer than any timeout allows (its owner was on another machine).
    """
    host = socket.gethostname()
    abandoned = []
    for pk, owner, created in Run.objects.filter(outcome=Run.Outcome.RUNNING).values_list(
        "id", "owner", "created_at"
    ):
        owner_host, _, pid = owner.rpartition(":")
        if created < timezone.now() - STALE_RUN_AGE or (
            owner_host == host and not _process_alive(pid)
        ):
            abandoned.append(pk)
    return Run.objects.filter(pk__in=abandoned, outcome=Run.Outcome.RUNNING).update(
        outcome=Run.Outcome.INTERRUPTED,
        error="the process running it stopped before it finished",
        finished_at=timezone.now(),
    )


def _process_alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False  # we are starting up: nothing of ours is running yet
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
