"""``manage.py restate_runs``: runs written without their derived statuses get them, from
their stored decisions; ``--since`` limits it; bad input is refused by name."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from enrichment.models import Attempt, Run, UrlDecision

pytestmark = pytest.mark.django_db


def written_without_statuses(created: str, *outcomes: str, unresolved: bool = False) -> Run:
    """A run as a writer that knows nothing of the stored statuses leaves it."""
    run = Run.objects.create(outcome="skipped", created_at=datetime.fromisoformat(created))
    row = UrlDecision.objects.create(
        run=run,
        position=0,
        url="https://example.com/",
        blocked=unresolved,
        reason="hostname does not resolve" if unresolved else "",
    )
    for position, outcome in enumerate(outcomes):
        Attempt.objects.create(
            url_decision=row, position=position, command=f"cli-{position}", outcome=outcome
        )
    return run


def flags(run: Run) -> tuple[bool, bool, bool]:
    run.refresh_from_db()
    return run.attempts_failed, run.fallback_used, run.dns_failed


def test_restate_fills_the_statuses_from_the_stored_decisions() -> None:
    failed = written_without_statuses("2026-12-01T10:00:00+00:00", "failed", "failed")
    fallback = written_without_statuses("2026-12-02T10:00:00+00:00", "failed", "success")
    dns = written_without_statuses("2026-12-03T10:00:00+00:00", unresolved=True)
    plain = written_without_statuses("2026-12-03T11:00:00+00:00", "success")
    assert flags(failed) == flags(fallback) == (False, False, False)

    out = StringIO()
    call_command("restate_runs", stdout=out)

    assert "Restated 4 runs" in out.getvalue()
    assert flags(failed) == (True, False, False)
    assert flags(fallback) == (False, True, False)
    assert flags(dns) == (False, False, True)
    assert flags(plain) == (False, False, False)


def test_since_leaves_older_runs_alone() -> None:
    older = written_without_statuses("2026-11-01T10:00:00+00:00", "failed")
    newer = written_without_statuses("2026-12-02T10:00:00+00:00", "failed")
    out = StringIO()
    call_command("restate_runs", "--since", "2026-12-01", stdout=out)
    assert "Restated 1 runs" in out.getvalue()
    assert flags(older) == (False, False, False) and flags(newer) == (True, False, False)
    assert Run.objects.filter(created_at__lt=datetime(2026, 12, 1, tzinfo=UTC)).count() == 1


def test_a_bad_since_is_refused_by_name() -> None:
    with pytest.raises(CommandError) as caught:
        call_command("restate_runs", "--since", "yesterday-ish")
    assert "--since: not an ISO 8601 date/time: 'yesterday-ish'" in str(caught.value)
