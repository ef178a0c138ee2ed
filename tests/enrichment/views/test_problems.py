"""/problems/ and /problems/<id>/: list, filters, paging, empty state, state buttons."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from enrichment.models import Problem, Run
from enrichment.services.runs import run_fail

pytestmark = pytest.mark.django_db


def failed_run(error: str, session_key: str = "s1") -> Run:
    run = Run.objects.create(session_key=session_key)
    run_fail(run=run, error=error, duration_ms=5)
    return run


def problem_ids(html: str) -> list[int]:
    return [int(value) for value in re.findall(r'data-problem-id="(\d+)"', html)]


def test_anonymous_visitors_are_sent_to_log_in(client) -> None:
    for path in ("/problems/", "/problems/1/"):
        response = client.get(path)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_empty_state_explains_what_shows_up(user_client) -> None:
    html = user_client.get("/problems/").content.decode()
    assert 'id="problems-empty"' in html and "No open problems" in html


def test_list_sorted_by_last_seen_with_counts_and_trend(user_client) -> None:
    failed_run("first kind of error")
    failed_run("second kind of error")
    failed_run("first kind of error", session_key="s2")
    first = Problem.objects.get(subject="first kind of error")
    second = Problem.objects.get(subject="second kind of error")
    html = user_client.get("/problems/").content.decode()
    assert problem_ids(html) == [first.pk, second.pk]
    row = html.split(f'data-problem-id="{first.pk}"', 1)[1].split("</tr>", 1)[0]
    assert 'data-label="Runs" class="num">2<' in row
    assert 'data-label="Sessions" class="num">2<' in row
    assert "Runs per hour, last 24 hours: 2 in total" in row
    assert row.count("<rect") == 24 + 7
    assert 'Open <span class="count">2</span>' in html


def test_state_filter_and_kind_filter(user_client) -> None:
    failed_run("boom")
    failed_run("bang")
    resolved = Problem.objects.get(subject="bang")
    resolved.state = "resolved"
    resolved.save()
    open_one = Problem.objects.get(subject="boom")
    assert problem_ids(user_client.get("/problems/").content.decode()) == [open_one.pk]
    resolved_page = user_client.get("/problems/?state=resolved").content.decode()
    assert problem_ids(resolved_page) == [resolved.pk]
    assert len(problem_ids(user_client.get("/problems/?state=all").content.decode())) == 2
    assert problem_ids(user_client.get("/problems/?kind=blocked-host").content.decode()) == []
    assert (
        len(problem_ids(user_client.get("/problems/?state=all&kind=run-error").content.decode()))
        == 2
    )


def test_pages_of_25_with_next_and_previous(user_client) -> None:
    for number in range(30):
        failed_run(f"error {chr(65 + number % 26)}{chr(65 + number // 26)}")
    first = user_client.get("/problems/").content.decode()
    assert len(problem_ids(first)) == 25 and 'id="page-older"' in first and "Page 1 of 2" in first
    second = user_client.get("/problems/?page=2").content.decode()
    assert len(problem_ids(second)) == 5 and 'id="page-newer"' in second
    assert not set(problem_ids(first)) & set(problem_ids(second))
    # A page past the end shows the last page.
    assert problem_ids(user_client.get("/problems/?page=99").content.decode()) == problem_ids(
        second
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("state=closed", "state must be one of open, resolved, ignored, all"),
        ("kind=%3Cscript%3E", "kind must be one of"),
        ("page=0", "page must be a whole number"),
        ("page=-1", "page must be a whole number"),
        ("page=%EF%BC%91", "page must be a whole number"),  # a fullwidth digit
        ("page=99999999999999999999", "page must be a whole number"),
    ],
    ids=["state", "kind-html", "page-zero", "page-negative", "page-fullwidth", "page-huge"],
)
def test_bad_filters_are_a_400_naming_the_parameter(user_client, query: str, message: str) -> None:
    response = user_client.get(f"/problems/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert "<script>" not in html


def test_detail_shows_facts_runs_and_escapes_failure_text(user_client) -> None:
    run = failed_run("<script>alert(1)</script> failed <img src=x onerror=alert(2)>")
    problem = Problem.objects.get()
    html = user_client.get(f"/problems/{problem.pk}/").content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f'href="/decisions/{run.pk}/"' in html
    assert 'id="problem-count">1<' in html
    assert "?outcome=error" in html  # the history's runs of this kind


def test_detail_marks_runs_that_were_pruned(user_client) -> None:
    run = failed_run("boom")
    Run.objects.filter(pk=run.pk).delete()
    html = user_client.get(f"/problems/{Problem.objects.get().pk}/").content.decode()
    assert "pruned" in html and f'href="/decisions/{run.pk}/"' not in html


def test_state_buttons_post_and_redirect(user_client) -> None:
    failed_run("boom")
    problem = Problem.objects.get()
    page = user_client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'value="resolved"' in page and 'value="ignored"' in page and 'value="open"' not in page
    response = user_client.post(f"/problems/{problem.pk}/", {"state": "resolved"})
    assert response.status_code == 302 and response["Location"] == f"/problems/{problem.pk}/"
    problem.refresh_from_db()
    assert problem.state == "resolved"
    page = user_client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'value="open"' in page and "Reopen" in page


def test_a_bad_state_post_is_a_400_and_changes_nothing(user_client) -> None:
    failed_run("boom")
    problem = Problem.objects.get()
    response = user_client.post(f"/problems/{problem.pk}/", {"state": "<b>closed</b>"})
    assert response.status_code == 400
    assert "state must be one of open, resolved, ignored" in response.content.decode()
    assert "<b>closed</b>" not in response.content.decode()
    problem.refresh_from_db()
    assert problem.state == "open"


def test_state_post_needs_the_csrf_token(user) -> None:
    failed_run("boom")
    problem = Problem.objects.get()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(f"/problems/{problem.pk}/", {"state": "ignored"}).status_code == 403
    problem.refresh_from_db()
    assert problem.state == "open"


def test_unknown_problem_is_a_404(user_client) -> None:
    assert user_client.get("/problems/999999/").status_code == 404
    assert user_client.post("/problems/999999/", {"state": "open"}).status_code == 404
    assert user_client.get("/problems/99999999999999999999999/").status_code == 404


def test_problem_list_needs_a_fixed_number_of_queries(
    user_client, django_assert_max_num_queries
) -> None:
    for number in range(20):
        failed_run(f"error {number}x{'y' * number}")
    with django_assert_max_num_queries(8):
        assert user_client.get("/problems/?state=all").status_code == 200


def test_overview_top_failing_tables_link_their_problems(user_client) -> None:
    from enrichment.models import Attempt, UrlDecision
    from enrichment.services.problems import occurrence_from_stored, problems_record

    run = Run.objects.create(outcome=Run.Outcome.SUCCESS, url_count=2)
    blocked = UrlDecision.objects.create(run=run, position=0, url="http://Intranet.example/x",
                                         blocked=True, reason="private")  # fmt: skip
    fetched = UrlDecision.objects.create(run=run, position=1, url="https://a.test/")
    Attempt.objects.create(url_decision=fetched, position=0, command="summarize", outcome="failed")
    Attempt.objects.create(url_decision=blocked, position=0, command="ssrf", outcome="skipped")
    problems_record(
        [occurrence_from_stored(Run.objects.prefetch_related("url_decisions__attempts").get())]
    )
    host = Problem.objects.get(kind="blocked-host", subject="intranet.example")
    command = Problem.objects.get(kind="command-failed", subject="summarize")
    html = user_client.get("/").content.decode()
    assert f'href="/problems/{host.pk}/"' in html
    assert f'href="/problems/{command.pk}/"' in html
    assert Problem.objects.count() == 2
