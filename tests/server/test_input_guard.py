"""Hostile input answered with a 4xx naming the field, never a 500 (issue 17, items 5 and 6).

Run on PostgreSQL too (``DATABASE_URL=postgres://…``): it refuses NUL and overlong values
that SQLite would store, which is where the 500s came from.
"""

from __future__ import annotations

import json

import pytest

from common.json_guard import MAX_JSON_DEPTH, json_problem, parse_json, text_problem
from enrichment.models import EnrichmentConfig, Run


def put_config(client, document):
    return client.put("/api/config", json.dumps(document), content_type="application/json")


def post_json(client, path, body):
    return client.post(path, json.dumps(body), content_type="application/json")


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": ["ok", "b\x00"]}, "a.1: contains a NUL character (U+0000)"),
        (
            {"x": {"y": "\udc00"}},
            "x.y: contains a lone surrogate (U+DC00), which is not valid Unicode",
        ),
        ({"k\x00": 1}, "'k\\x00': key contains a NUL character (U+0000)"),
        (nested(MAX_JSON_DEPTH + 1), f"nested deeper than {MAX_JSON_DEPTH} levels"),
    ],
    ids=["nul-in-list", "lone-surrogate", "nul-in-key", "too-deep"],
)
def test_json_problem_names_the_path(value, expected) -> None:
    problem = json_problem(value)
    assert problem is not None and str(problem).endswith(expected)


def test_json_problem_accepts_ordinary_unicode_and_the_depth_limit() -> None:
    assert json_problem({"t": "emoji 🎉, CJK 漢字, RTL שלום"}) is None
    assert json_problem(nested(MAX_JSON_DEPTH - 1)) is None
    assert text_problem("fine") is None


def test_parse_json_refuses_nesting_beyond_pythons_own_recursion_limit() -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        parse_json("[" * 200_000 + "]" * 200_000)


# --- the API -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/links/extract", {"message": "see \x00 https://example.com"}, "message"),
        ("/api/enrich", {"body": "hello", "channel": "sl\x00ack"}, "channel"),
        ("/api/enrich", {"body": "lone \udc00 surrogate"}, "body"),
        ("/api/scope/evaluate", {"scope": nested(900), "channel": "x"}, "scope"),
        ("/api/render", {"text": "a\x00b"}, "text"),
    ],
    ids=["nul-message", "nul-channel", "surrogate-body", "depth-900", "nul-render"],
)
def test_unstorable_json_is_a_422_naming_the_field(user_client, path, body, field) -> None:
    response = post_json(user_client, path, body)
    assert response.status_code == 422, response.content[:300]
    assert response.json()["errors"][0].startswith(field)
    assert not Run.objects.exists()


def test_nul_in_a_filter_is_a_422_naming_it(user_client) -> None:
    response = user_client.get("/api/decisions", {"url": "\x00"})
    assert response.status_code == 422
    assert response.json()["errors"] == ["url: contains a NUL character (U+0000)"]


@pytest.mark.parametrize("format", ["json", "csv"])
def test_export_validates_before_streaming(user_client, format) -> None:
    response = user_client.get("/api/decisions/export", {"url": "\x00", "format": format})
    assert response.status_code == 422
    assert not response.streaming
    assert "url" in response.json()["detail"]


@pytest.mark.parametrize("format", ["json", "csv"])
def test_export_with_a_bad_date_is_a_422_before_any_byte(user_client, format) -> None:
    response = user_client.get("/api/decisions/export", {"since": "yesterday", "format": format})
    assert response.status_code == 422 and "since" in response.json()["detail"]


def test_limit_and_run_id_bounds_are_422s(user_client) -> None:
    assert user_client.get("/api/decisions", {"limit": 3_000_000_000}).status_code == 422
    assert user_client.get(f"/api/decisions/{2**64}").status_code == 422
    assert user_client.get("/api/decisions/0").status_code == 422


@pytest.mark.parametrize(
    ("document", "error"),
    [
        (
            {"tools": {"web": {"fetch": {"userAgent": "u" * 301}}}},
            "tools.web.fetch.userAgent: at most 300 characters, got 301",
        ),
        (
            {"tools": {"web": {"fetch": {"maxChars": 3e9}}}},
            "tools.web.fetch.maxChars: must be at most 2147483647",
        ),
        (
            {"tools": {"links": {"models": [{"type": "cli", "command": "c" * 501}]}}},
            "tools.links.models[0].command: at most 500 characters, got 501",
        ),
        ({"agents": {"list": [{"id": "a" * 101}]}}, "agents.list[0].id: at most 100 characters"),
        (
            {
                "tools": {
                    "links": {
                        "scope": {"rules": [{"action": "deny", "match": {"channel": "c" * 101}}]}
                    }
                }
            },
            "tools.links.scope.rules[0].match.channel: at most 100 characters",
        ),
        (
            {"tools": {"web": {"fetch": {"userAgent": "bot\x00"}}}},
            "tools.web.fetch.userAgent: contains a NUL character",
        ),
        ({"tools": {"media": nested(900)}}, "tools.media"),
    ],
    ids=["user-agent", "max-chars-3e9", "command", "agent-id", "channel", "nul", "depth-900"],
)
def test_config_put_refuses_values_the_columns_cannot_hold(staff_client, document, error) -> None:
    before = put_config(staff_client, {}).json()
    response = put_config(staff_client, document)
    assert response.status_code == 422, response.content[:300]
    assert any(item.startswith(error) for item in response.json()["errors"]), response.json()
    assert staff_client.get("/api/config").json() == before  # nothing partially written
    assert EnrichmentConfig.objects.filter(is_active=True).count() == 1


def test_unexpected_errors_answer_json_without_a_traceback(
    user_client, settings, monkeypatch
) -> None:
    settings.DEBUG = True
    from enrichment import selectors

    def explode(**kwargs):
        raise RuntimeError("secret internals at /srv/app.py line 3")

    monkeypatch.setattr(selectors, "decision_list", explode)
    response = user_client.get("/api/decisions")
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal error (logged)."}
    assert b"Traceback" not in response.content and b"secret" not in response.content


def test_openapi_documents_error_answers_and_limit_bounds(user_client) -> None:
    schema = user_client.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/decisions"]["get"]
    assert {"400", "401", "422"} <= set(operation["responses"])
    limit = next(p for p in operation["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 200)
    assert "Error" in schema["components"]["schemas"]


@pytest.mark.parametrize("path", ["/api/files/extract", "/api/enrich/upload"])
def test_multipart_without_a_boundary_is_a_400_not_a_500(user_client, path) -> None:
    response = user_client.generic("POST", path, b"x", content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Malformed request body: Invalid boundary")
