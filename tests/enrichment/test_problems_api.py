"""/api/problems: list, detail, PATCH state; bad input is a 4xx naming the problem."""

from __future__ import annotations

import json

import pytest

from enrichment.models import Problem, Run
from enrichment.services.runs import run_fail

pytestmark = pytest.mark.django_db


def failed_run(error: str, session_key: str = "s1") -> Run:
    run = Run.objects.create(session_key=session_key)
    run_fail(run=run, error=error, duration_ms=5)
    return run


def patch(client, path: str, body: object, content_type: str = "application/json"):
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.patch(path, data, content_type=content_type)


def test_the_api_needs_authentication(client) -> None:
    assert client.get("/api/problems").status_code == 401
    assert patch(client, "/api/problems/1", {"state": "resolved"}).status_code == 401


def test_list_and_detail(user_client) -> None:
    run = failed_run("boom 1")
    failed_run("boom 2", session_key="s2")
    failed_run("other")
    body = user_client.get("/api/problems").json()
    assert body["count"] == 2 and body["page"] == 1 and body["pages"] == 1
    first = body["items"][0]
    assert (first["subject"], first["count"], first["sessionCount"]) == ("other", 1, 1)
    boom = body["items"][1]
    assert (boom["kind"], boom["subject"], boom["count"], boom["state"]) == (
        "run-error", "boom N", 2, "open"
    )  # fmt: skip
    assert len(boom["trend24h"]) == 24 and sum(boom["trend24h"]) == 2
    assert len(boom["trend7d"]) == 7 and boom["trend7d"][-1] == 2
    detail = user_client.get(f"/api/problems/{boom['id']}").json()
    assert detail["recentSessions"] == ["s2", "s1"]
    assert [item["stored"] for item in detail["latestRuns"]] == [True, True]
    assert detail["latestRuns"][1]["runId"] == run.pk
    assert user_client.get("/api/problems?limit=1&page=2").json()["items"][0]["id"] == boom["id"]


def test_patch_state_then_filters_follow(user_client) -> None:
    failed_run("boom")
    problem = Problem.objects.get()
    response = patch(user_client, f"/api/problems/{problem.pk}", {"state": "ignored"})
    assert response.status_code == 200 and response.json()["state"] == "ignored"
    assert user_client.get("/api/problems").json()["count"] == 0
    assert user_client.get("/api/problems?state=ignored").json()["count"] == 1
    failed_run("boom")  # happens again: still ignored
    assert user_client.get(f"/api/problems/{problem.pk}").json()["state"] == "ignored"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"state": "closed"}, 422),
        ({"state": "RESOLVED"}, 422),
        ({}, 422),
        ({"state": "resolved", "count": 0}, 422),
        ({"state": None}, 422),
        ([1, 2], 422),
        ("{not json", 400),
        ("\x00" * 10, 400),
    ],
    ids=["unknown", "case", "missing", "extra-field", "null", "list", "malformed", "nul"],
)
def test_bad_patch_bodies_are_refused_and_change_nothing(user_client, body, status) -> None:
    failed_run("boom")
    problem = Problem.objects.get()
    response = patch(user_client, f"/api/problems/{problem.pk}", body)
    assert response.status_code == status, response.content[:300]
    assert "detail" in response.json()
    assert Problem.objects.get().state == "open"


@pytest.mark.parametrize(
    "query",
    [
        "state=closed",
        "page=0",
        "page=abc",
        "limit=0",
        "limit=101",
        "kind=nope",
        "kind=" + "x" * 5000,
    ],
)
def test_bad_list_parameters_are_4xx(user_client, query: str) -> None:
    response = user_client.get(f"/api/problems?{query}")
    assert 400 <= response.status_code < 500, response.content[:300]
    assert "detail" in response.json()


def test_unknown_or_out_of_range_ids_are_404_or_422(user_client) -> None:
    assert user_client.get("/api/problems/12345").status_code == 404
    assert patch(user_client, "/api/problems/12345", {"state": "open"}).status_code == 404
    assert user_client.get("/api/problems/0").status_code == 422
    assert user_client.get(f"/api/problems/{2**63}").status_code == 422
    assert user_client.get("/api/problems/abc").status_code in (404, 422)
