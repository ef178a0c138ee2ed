"""Run again from the admin: an interrupted or failed run's message is sent again as a new
run; the old run stays as it was; other runs are left alone."""

from __future__ import annotations

import pytest

from enrichment.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


def run_again(staff_client, *runs: Run):  # type: ignore[no-untyped-def]
    return staff_client.post(
        "/admin/enrichment/run/",
        {"action": "run_again", "_selected_action": [run.pk for run in runs]},
        follow=True,
    )


@pytest.mark.parametrize(
    ("outcome", "error"),
    [
        ("interrupted", "overdue: still running 300 s after it started (the job deadline)"),
        ("dead-letter", "dead-letter: the job queue gave up after 6 attempt(s): database down"),
    ],
)
def test_an_interrupted_or_given_up_run_runs_again_as_a_new_run(
    staff_client, settings, outcome, error
) -> None:
    settings.ENRICHMENT_USE_WORKERS = False
    lost = Run.objects.create(
        original_body="hello again",
        channel="telegram",
        session_key="s-1",
        outcome=outcome,
        error=error,
    )

    page = run_again(staff_client, lost).content.decode()

    new = Run.objects.exclude(pk=lost.pk).get()
    assert f"Run {lost.pk} ran again as run {new.pk}." in page
    assert new.original_body == "hello again"
    assert new.channel == "telegram" and new.session_key == "s-1"
    assert new.outcome not in ("running", "interrupted", "dead-letter")
    lost.refresh_from_db()
    assert lost.outcome == outcome  # kept for the record


def test_runs_that_ended_well_are_not_run_again(staff_client, settings) -> None:
    settings.ENRICHMENT_USE_WORKERS = False
    done = Run.objects.create(original_body="fine", outcome="success")

    page = run_again(staff_client, done).content.decode()

    assert "nothing to run again" in page
    assert Run.objects.count() == 1


def test_at_most_ten_runs_at_once(staff_client, settings) -> None:
    settings.ENRICHMENT_USE_WORKERS = False
    runs = [Run.objects.create(original_body="x", outcome="error") for _ in range(11)]

    page = run_again(staff_client, *runs).content.decode()

    assert "Select at most 10 interrupted, failed or dead-letter runs" in page
    assert Run.objects.count() == 11
