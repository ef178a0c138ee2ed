"""Derived status: "media" and "attempts failed" badges and filters beside the stored outcome."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from enrichment.models import Attempt, Run, UrlDecision
from tests.enrichment.stored import restate

pytestmark = pytest.mark.django_db

IMAGE_RECORD = {"capability": "image", "outcome": "success", "attachments": []}


def run_with_attempts(outcomes: list[str], **fields) -> Run:
    run = Run.objects.create(outcome=fields.pop("outcome", "skipped"), **fields)
    row = UrlDecision.objects.create(run=run, position=0, url="https://example.com/")
    for position, outcome in enumerate(outcomes):
        Attempt.objects.create(url_decision=row, position=position, command="cli", outcome=outcome)
    restate(run)
    return run


@pytest.fixture
def runs() -> dict[str, Run]:
    return {
        # Every CLI failed: a failure, though the stored outcome says "skipped".
        "all-failed": run_with_attempts(["failed", "failed"]),
        # Empty output: a harmless skip.
        "harmless": run_with_attempts(["skipped"]),
        # Fallback worked: success, not a failure.
        "fallback": run_with_attempts(["failed", "success"], outcome="success"),
        # Blocked by the SSRF guard only: not an attempt failure.
        "ssrf": run_with_attempts([]),
        "image": Run.objects.create(
            outcome="no-links",
            media=[IMAGE_RECORD],
            original_body="whiteboard",
            enriched_body="[Image]\nUser text:\nwhiteboard\nDescription:\nA PNG image",
        ),
    }


def listed(client, query: str) -> set[int]:
    response = client.get("/api/decisions?" + query)
    assert response.status_code == 200, response.content
    return {item["runId"] for item in response.json()["items"]}


def test_status_filters_find_media_runs_and_failed_attempts(user_client, runs) -> None:
    assert listed(user_client, "status=media") == {runs["image"].pk}
    assert listed(user_client, "status=attempts-failed") == {runs["all-failed"].pk}
    # The stored outcome is unchanged: both still list under their own outcome.
    assert runs["all-failed"].pk in listed(user_client, "outcome=skipped")
    assert runs["image"].pk in listed(user_client, "outcome=no-links")


def test_unknown_status_is_a_400_naming_it(user_client) -> None:
    response = user_client.get("/decisions/?status=broken")
    assert response.status_code == 400
    assert "status: unknown status &#x27;broken&#x27;" in response.content.decode()


def test_history_rows_carry_the_derived_badges(user_client, runs) -> None:
    html = user_client.get("/decisions/").content.decode()
    assert html.count("badge badge-attempts-failed") == 1
    assert html.count("badge badge-media") == 1
    filtered = user_client.get("/decisions/?status=attempts-failed").content.decode()
    assert f'href="/decisions/{runs["all-failed"].pk}/' in filtered
    assert f'href="/decisions/{runs["harmless"].pk}/' not in filtered
    assert re.search(
        r'name="status" value="attempts-failed" form="history-filters" checked', filtered
    )


def test_run_page_tells_media_work_from_nothing_appended(user_client, runs) -> None:
    html = user_client.get(f"/decisions/{runs['image'].pk}/").content.decode()
    assert "badge badge-media" in html
    assert "Nothing was appended" not in html
    assert "Media understanding rewrote the body" in html
    failed = user_client.get(f"/decisions/{runs['all-failed'].pk}/").content.decode()
    assert "badge badge-attempts-failed" in failed
    harmless = user_client.get(f"/decisions/{runs['harmless'].pk}/").content.decode()
    assert "badge-attempts-failed" not in harmless


def test_overview_recent_runs_carry_the_badges(user_client, runs) -> None:
    html = user_client.get("/").content.decode()
    assert "badge badge-attempts-failed" in html and "badge badge-media" in html


def test_history_page_query_count_does_not_grow_with_rows(
    user_client, django_assert_max_num_queries, runs
) -> None:
    for _ in range(30):
        run_with_attempts(["failed"])
    # session, user, saved views, the page (the derived statuses are on its rows), the count,
    # one facet grouping, the status counts, the durations; on PostgreSQL 4 more for each of
    # the count's, the facets' and the durations' time budgets
    budgets = 12 if connection.vendor == "postgresql" else 0
    with django_assert_max_num_queries(8 + budgets):
        user_client.get("/decisions/?status=attempts-failed")
