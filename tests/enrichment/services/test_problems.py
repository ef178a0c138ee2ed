"""Failures of recorded runs grouped into problems, through the real enrichment path."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from enrichment.models import Problem, ProblemRun, Run
from enrichment.services.problems import (
    occurrence_from_rows,
    problem_set_state,
    problems_record,
)
from enrichment.services.runs import run_fail, runs_recorded

pytestmark = pytest.mark.django_db(transaction=True)

FAILING_CLI = {
    "tools": {
        "links": {"models": [{"type": "cli", "command": "/bin/false"}]},
        "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
    }
}


@pytest.fixture
def failing_cli(db, monkeypatch) -> None:
    from enrichment import resolver
    from enrichment.config.changes import config_replace

    config_replace(document=FAILING_CLI)
    answers = {"intranet.example": ["10.0.0.5"], "127.0.0.1": ["127.0.0.1"]}
    monkeypatch.setattr(resolver, "resolve_host", lambda host: answers[host])


def enrich(client, body: str, session: str = "agent:main:slack:dm:1") -> dict:
    payload = {"body": body, "sessionKey": session}
    response = client.post("/api/enrich", json.dumps(payload), content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def problem(kind: str) -> Problem:
    return Problem.objects.get(kind=kind)


def failed_run(error: str, **fields) -> Run:
    run = Run.objects.create(session_key=fields.pop("session_key", "s1"), **fields)
    run_fail(run=run, error=error, duration_ms=5)
    return run


def test_runs_failing_alike_group_into_one_problem_each(user_client, failing_cli) -> None:
    first = enrich(user_client, "see http://intranet.example/a and http://127.0.0.1/x", "s:one")
    second = enrich(user_client, "again http://INTRANET.example/b http://127.0.0.1/y", "s:two")
    enrich(user_client, "nothing to see here", "s:three")

    blocked = problem("blocked-host")
    assert (blocked.subject, blocked.count, blocked.session_count) == ("intranet.example", 2, 2)
    assert blocked.state == Problem.State.OPEN
    assert blocked.recent_sessions == ["s:two", "s:one"]
    assert blocked.last_run_id == second["runId"]
    assert blocked.first_seen == Run.objects.get(pk=first["runId"]).created_at
    cli = problem("command-failed")
    assert (cli.subject, cli.count) == ("/bin/false", 2)
    assert sum(cli.hourly.values()) == 2
    assert Problem.objects.count() == 2
    assert set(ProblemRun.objects.values_list("run_id", flat=True)) == {
        first["runId"],
        second["runId"],
    }


def test_errors_group_by_their_reason_without_numbers_or_urls(db) -> None:
    failed_run("timeout after 12 s fetching https://a.test/1")
    failed_run("timeout after 31 s fetching https://b.test/2", session_key="s2")
    failed_run("KeyError: 'x'")
    errors = Problem.objects.filter(kind="run-error").order_by("-count")
    assert [(item.subject, item.count) for item in errors] == [
        ("timeout after N s fetching <url>", 2),
        ("KeyError: <text>", 1),
    ]
    assert errors[0].session_count == 2


def test_a_resolved_problem_reopens_when_it_happens_again(db) -> None:
    failed_run("boom")
    item = Problem.objects.get()
    problem_set_state(problem_id=item.pk, state="resolved")
    assert Problem.objects.get().state == "resolved"
    failed_run("boom")
    item.refresh_from_db()
    assert (item.state, item.count) == ("open", 2)


def test_a_resolved_problem_stays_resolved_when_older_runs_are_recounted(db) -> None:
    run = failed_run("boom")
    item = Problem.objects.get()
    problem_set_state(problem_id=item.pk, state="resolved")
    call_command("rebuild_problems", stdout=StringIO(), stderr=StringIO())  # replays the old run
    item.refresh_from_db()
    assert (item.state, item.count, item.last_run_id) == ("resolved", 1, run.pk)


def test_an_ignored_problem_stays_ignored(db) -> None:
    failed_run("boom")
    item = Problem.objects.get()
    problem_set_state(problem_id=item.pk, state="ignored")
    failed_run("boom")
    item.refresh_from_db()
    assert (item.state, item.count) == ("ignored", 2)


def test_a_run_recorded_twice_counts_once(db) -> None:
    run = failed_run("boom")
    assert problems_record([occurrence_from_rows(run, ())]) == 0
    assert Problem.objects.get().count == 1


def test_a_run_without_failure_costs_no_query(db) -> None:
    run = Run.objects.create(outcome=Run.Outcome.SUCCESS)
    with CaptureQueriesContext(connection) as queries:
        runs_recorded([occurrence_from_rows(run, ())])
    assert len(queries) == 0
    assert not Problem.objects.exists()


def test_a_problem_keeps_its_history_when_its_runs_are_pruned(db) -> None:
    failed_run("boom", session_key="s1")
    failed_run("boom", session_key="s2")
    Run.objects.all().delete()  # retention
    item = Problem.objects.get()
    assert (item.count, item.session_count) == (2, 2)
    assert ProblemRun.objects.filter(problem=item).count() == 2


def test_rebuild_recounts_from_stored_runs_and_keeps_states(db, user_client, failing_cli) -> None:
    enrich(user_client, "see http://intranet.example/a http://127.0.0.1/x", "s:one")
    failed_run("boom")
    ignored = problem("run-error")
    problem_set_state(problem_id=ignored.pk, state="ignored")
    before = {item.fingerprint: (item.count, item.session_count) for item in Problem.objects.all()}
    old = timezone.now() - timedelta(days=3)
    Run.objects.update(created_at=old)  # as seed_demo redates its runs
    out = StringIO()
    call_command("rebuild_problems", stdout=out, stderr=StringIO())
    assert "3 problems from 3 failures" in out.getvalue()
    after = {item.fingerprint: (item.count, item.session_count) for item in Problem.objects.all()}
    assert after == before
    assert problem("run-error").state == "ignored"
    assert {item.first_seen for item in Problem.objects.all()} == {old}
    assert all(item.last_seen == old for item in Problem.objects.all())


@pytest.mark.parametrize("state", ["", "OPEN", "closed", "x" * 1000, "resolved\x00"])
def test_a_bad_state_is_refused_and_nothing_changes(db, state: str) -> None:
    from common.errors import InvalidInput

    failed_run("boom")
    item = Problem.objects.get()
    with pytest.raises(InvalidInput, match="state must be one of open, resolved, ignored"):
        problem_set_state(problem_id=item.pk, state=state)
    assert Problem.objects.get().state == "open"


def test_processes_recording_the_same_new_failure_at_once_make_one_problem(db) -> None:
    """Two writers (threads, each with its own connection) record runs failing alike at the
    same moment: one problem counting both. Run with DATABASE_URL=postgres://… as well."""
    import threading

    from django.db import connections

    if connection.vendor == "sqlite":
        pytest.skip("SQLite serializes writers with one database lock")
    runs = [Run.objects.create(outcome=Run.Outcome.ERROR, error="boom") for _ in range(8)]
    barrier = threading.Barrier(len(runs))
    errors: list[BaseException] = []

    def record(run: Run) -> None:
        try:
            barrier.wait()
            problems_record([occurrence_from_rows(run, ())])
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=record, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    problem = Problem.objects.get()
    assert problem.count == len(runs)
    assert ProblemRun.objects.filter(problem=problem).count() == len(runs)
