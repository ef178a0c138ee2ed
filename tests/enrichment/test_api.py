from __future__ import annotations

import base64
import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from enrichment.config.changes import config_replace
from enrichment.models import Attempt, Run, UrlDecision
from tests.enrichment.conftest import summarizer_config

pytestmark = pytest.mark.django_db(transaction=True)


def post(client, path, payload):
    return client.post(path, payload, content_type="application/json")


def streamed(response) -> str:
    """The whole body of a streamed response (the export streams an async iterator)."""
    from asgiref.sync import async_to_sync

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return async_to_sync(collect)().decode()


# --- explain endpoints --------------------------------------------------------------


def test_links_extract(user_client) -> None:
    response = post(
        user_client,
        "/api/links/extract",
        {"message": "see https://example.com/a, and http://127.0.0.1/x"},
    )
    assert response.status_code == 200
    assert response.json() == {"links": ["https://example.com/a"]}


def test_links_extract_invalid_max_links_falls_back_to_three(user_client) -> None:
    message = " ".join(f"https://example.com/{i}" for i in range(5))
    assert (
        len(
            post(
                user_client, "/api/links/extract", {"message": message, "maxLinks": "lots"}
            ).json()["links"]
        )
        == 3
    )
    assert (
        len(
            post(user_client, "/api/links/extract", {"message": message, "maxLinks": 4}).json()[
                "links"
            ]
        )
        == 4
    )


def test_links_extract_oversized_message_is_refused_with_limit(user_client) -> None:
    response = post(user_client, "/api/links/extract", {"message": "x" * 1_048_577})
    assert response.status_code in (413, 422)
    assert "1048576" in response.content.decode()


@pytest.mark.parametrize(
    ("payload", "blocked", "reason_part"),
    [
        ({"url": "http://127.0.0.1/"}, True, "loopback"),
        ({"url": "http://[::ffff:10.0.0.1]/"}, True, "private"),
        ({"url": "ftp://example.com/"}, True, "scheme"),
        ({"url": "not a url"}, True, "invalid"),
        ({"url": "https://93.184.216.34/page"}, False, None),
        ({"url": "http://10.1.2.3/", "policy": {"allowPrivateNetwork": True}}, False, None),
        (
            {"url": "http://169.254.169.254/", "policy": {"allowPrivateNetwork": True}},
            True,
            "metadata",
        ),
    ],
)
def test_ssrf_check(user_client, payload, blocked, reason_part) -> None:
    body = post(user_client, "/api/ssrf/check", payload).json()
    assert body["blocked"] is blocked
    if reason_part:
        assert reason_part in body["reason"]
    else:
        assert body["reason"] is None


def test_ssrf_check_with_resolve_reports_addresses(user_client) -> None:
    body = post(
        user_client, "/api/ssrf/check", {"url": "http://localhost:8000/", "resolve": True}
    ).json()
    assert body["blocked"] is True and body["host"] == "localhost"


def test_ssrf_check_bad_policy_is_422(user_client) -> None:
    response = post(
        user_client,
        "/api/ssrf/check",
        {"url": "https://a.example", "policy": {"allowEverything": True}},
    )
    assert response.status_code == 422
    assert "allowEverything" in response.json()["detail"]


def test_scope_evaluate(user_client) -> None:
    scope = {
        "default": "allow",
        "rules": [{"action": "deny", "match": {"channel": "discord", "chatType": "group"}}],
    }
    body = post(
        user_client,
        "/api/scope/evaluate",
        {"scope": scope, "channel": "Discord", "chatType": "group"},
    ).json()
    assert body == {"decision": "deny", "matchedRule": 0}
    body = post(
        user_client, "/api/scope/evaluate", {"scope": scope, "channel": "discord", "chatType": "dm"}
    ).json()
    assert body == {"decision": "allow", "matchedRule": None}


def test_scope_evaluate_invalid_scope_is_422_naming_the_path(user_client) -> None:
    scope = {"rules": [{"action": "deny", "match": {"chatType": "room"}}]}
    response = post(user_client, "/api/scope/evaluate", {"scope": scope})
    assert response.status_code == 422
    assert any("scope.rules[0].match.chatType" in error for error in response.json()["errors"])


def test_anonymous_api_is_refused(client) -> None:
    for path in ("/api/links/extract", "/api/ssrf/check", "/api/scope/evaluate", "/api/enrich"):
        assert post(client, path, {}).status_code == 401
    assert client.get("/api/decisions").status_code == 401
    assert client.get("/api/config").status_code == 401


# --- enrichment ---------------------------------------------------------------------


def test_enrich_records_a_run_with_envelope(user_client, summarizer) -> None:
    response = post(
        user_client,
        "/api/enrich",
        {
            "body": "look http://127.0.0.1/a and http://127.0.0.1/fail",
            "channel": "slack",
            "chatType": "group",
            "sessionKey": "agent:main:slack:c1",
        },
    )
    assert response.status_code == 200, response.content
    result = response.json()
    assert result["body"].startswith(
        "look http://127.0.0.1/a and http://127.0.0.1/fail\n\n[Link]\nURL: http://127.0.0.1/a\n"
    )
    assert "Summary:\nSummary of http://127.0.0.1/a" in result["body"]
    links = result["links"]
    assert links["outcome"] == "success"
    first, second = links["urls"]
    assert first["chosen"]["outcome"] == "success"
    assert second["chosen"] is None
    assert second["attempts"][0]["outcome"] == "failed"
    assert second["attempts"][0]["reason"] == "exited with code 3"
    assert second["attempts"][0]["exitCode"] == 3
    assert "upstream broke" in second["attempts"][0]["stderrTail"]
    run = Run.objects.get(pk=result["runId"])
    assert run.outcome == "success" and run.url_count == 2 and run.channel == "slack"
    assert run.enriched_body == result["body"]
    assert UrlDecision.objects.filter(run=run).count() == 2
    assert Attempt.objects.filter(url_decision__run=run).count() == 2


def test_enrich_skips_literal_private_hosts_at_detection(user_client, summarizer) -> None:
    result = post(
        user_client,
        "/api/enrich",
        {"body": "http://127.0.0.1/ok then http://[::ffff:192.168.0.1]/"},
    ).json()
    assert [u["url"] for u in result["links"]["urls"]] == ["http://127.0.0.1/ok"]


def test_enrich_name_resolving_to_private_gets_single_ssrf_attempt(
    user_client, summarizer, monkeypatch
) -> None:
    from enrichment import resolver

    answers = {"intranet.example": ["10.0.0.5"], "news.example": ["93.184.216.34"]}
    monkeypatch.setattr(resolver, "resolve_host", lambda host: answers[host])
    result = post(
        user_client, "/api/enrich", {"body": "http://intranet.example/wiki https://news.example/a"}
    ).json()
    blocked, fetched = result["links"]["urls"]
    assert (
        blocked["blocked"] is True and blocked["reason"] == "resolves to private address 10.0.0.5"
    )
    assert blocked["addresses"] == ["10.0.0.5"]
    assert [(a["command"], a["outcome"]) for a in blocked["attempts"]] == [("ssrf", "skipped")]
    assert fetched["blocked"] is False and fetched["chosen"]["outcome"] == "success"
    assert fetched["addresses"] == ["93.184.216.34"]


def test_enrich_unresolvable_host_is_skipped_with_reason(
    user_client, summarizer, monkeypatch
) -> None:
    from enrichment import resolver

    def nowhere(host: str) -> list[str]:
        raise OSError("no such host")

    monkeypatch.setattr(resolver, "resolve_host", nowhere)
    result = post(user_client, "/api/enrich", {"body": "https://gone.example/"}).json()
    assert result["links"]["outcome"] == "skipped"
    assert result["links"]["urls"][0]["reason"] == "hostname does not resolve"


def test_enrich_validation_errors(user_client, summarizer) -> None:
    assert post(user_client, "/api/enrich", {}).status_code == 422
    assert post(user_client, "/api/enrich", {"body": 5}).status_code == 422
    response = post(user_client, "/api/enrich", {"body": "x", "chatType": "y" * 50})
    assert response.status_code == 422
    assert Run.objects.count() == 0


def test_enrich_malformed_json_is_400_not_500(user_client) -> None:
    response = user_client.post("/api/enrich", "{not json", content_type="application/json")
    assert response.status_code in (400, 422)


# --- history ------------------------------------------------------------------------


def make_run(**fields) -> Run:
    defaults = {
        "outcome": "success",
        "channel": "slack",
        "chat_type": "group",
        "session_key": "agent:main:slack:c1",
        "url_count": 1,
    }
    return Run.objects.create(**{**defaults, **fields})


def test_decisions_keyset_pagination_and_limit(user_client) -> None:
    now = timezone.now()
    runs = [make_run(created_at=now - timedelta(minutes=i)) for i in range(7)]
    page = user_client.get("/api/decisions", {"limit": 3}).json()
    assert [item["runId"] for item in page["items"]] == [r.pk for r in runs[:3]]
    seen = [item["runId"] for item in page["items"]]
    while page["nextCursor"]:
        page = user_client.get("/api/decisions", {"limit": 3, "cursor": page["nextCursor"]}).json()
        seen += [item["runId"] for item in page["items"]]
    assert seen == [r.pk for r in runs]
    assert user_client.get("/api/decisions", {"limit": 201}).status_code == 422
    assert user_client.get("/api/decisions", {"limit": 0}).status_code == 422
    assert user_client.get("/api/decisions", {"cursor": "garbage!"}).status_code == 422


def test_decisions_same_timestamp_keyset_has_no_gaps(user_client) -> None:
    now = timezone.now()
    runs = [make_run(created_at=now) for _ in range(5)]
    page = user_client.get("/api/decisions", {"limit": 2}).json()
    seen = [item["runId"] for item in page["items"]]
    while page["nextCursor"]:
        page = user_client.get("/api/decisions", {"limit": 2, "cursor": page["nextCursor"]}).json()
        seen += [item["runId"] for item in page["items"]]
    assert sorted(seen) == sorted(r.pk for r in runs) and len(seen) == 5


def test_decisions_filters(user_client) -> None:
    now = timezone.now()
    a = make_run(channel="slack", outcome="success", original_body="hello world")
    b = make_run(
        channel="discord",
        outcome="skipped",
        session_key="agent:ops:discord:x",
        created_at=now - timedelta(days=3),
    )
    UrlDecision.objects.create(run=b, position=0, url="https://docs.example.com/guide")
    c = make_run(
        channel="slack",
        outcome="scope-deny",
        chat_type="direct",
        enriched_body="[Link]\nSummary:\nquarterly numbers",
    )

    def ids(**params) -> list[int]:
        return [item["runId"] for item in user_client.get("/api/decisions", params).json()["items"]]

    assert ids(channel="slack") == [c.pk, a.pk]
    assert ids(outcome="skipped") == [b.pk]
    assert ids(chatType="direct") == [c.pk]
    assert ids(sessionKey="agent:ops") == [b.pk]
    assert ids(url="docs.example") == [b.pk]
    assert ids(q="QUARTERLY") == [c.pk]
    assert ids(q="hello") == [a.pk]
    assert ids(since=(now - timedelta(days=1)).isoformat()) == [c.pk, a.pk]
    assert ids(until=(now - timedelta(days=1)).isoformat()) == [b.pk]
    assert user_client.get("/api/decisions", {"outcome": "great"}).status_code == 422
    assert user_client.get("/api/decisions", {"since": "yesterday"}).status_code == 422


def test_decision_detail_and_404(user_client, summarizer) -> None:
    result = post(
        user_client, "/api/enrich", {"body": "http://127.0.0.1/a", "messageId": "m-1"}
    ).json()
    detail = user_client.get(f"/api/decisions/{result['runId']}").json()
    assert detail["messageId"] == "m-1"
    assert detail["links"]["urls"][0]["attempts"][0]["argv"][-1] == "http://127.0.0.1/a"
    assert detail["links"] == {**result["links"], "urls": detail["links"]["urls"]}
    assert detail["configSnapshot"]["tools"]["links"]["models"][0]["args"][-1] == "{{LinkUrl}}"
    assert user_client.get("/api/decisions/999999").status_code == 404


def test_export_csv_and_json(user_client) -> None:
    make_run(channel="slack")
    make_run(channel="discord")
    response = user_client.get("/api/decisions/export", {"format": "csv", "channel": "slack"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(streamed(response))))
    assert [row["channel"] for row in rows] == ["slack"]
    response = user_client.get("/api/decisions/export", {"format": "json"})
    assert [item["channel"] for item in json.loads(streamed(response))] == ["discord", "slack"]
    assert user_client.get("/api/decisions/export", {"format": "xml"}).status_code == 422


# --- config -------------------------------------------------------------------------


def test_config_get_default_has_link_understand(user_client) -> None:
    models = user_client.get("/api/config").json()["tools"]["links"]["models"]
    assert models == [
        {
            "type": "cli",
            "command": "link-understand",
            "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
        }
    ]


def test_config_put_requires_staff(user_client) -> None:
    response = user_client.put("/api/config", summarizer_config(), content_type="application/json")
    assert response.status_code == 403


def test_config_put_replaces_and_omitted_keys_return_to_defaults(staff_client) -> None:
    document = summarizer_config(
        maxLinks=2,
        scope={"default": "deny", "rules": [{"action": "allow", "match": {"channel": "slack"}}]},
    )
    response = staff_client.put("/api/config", document, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["tools"]["links"]["maxLinks"] == 2
    response = staff_client.put("/api/config", summarizer_config(), content_type="application/json")
    links = response.json()["tools"]["links"]
    assert "maxLinks" not in links and "scope" not in links


def test_config_put_invalid_changes_nothing(staff_client) -> None:
    before = staff_client.get("/api/config").json()
    bad = summarizer_config(
        scope={"rules": [{"action": "deny", "match": {"chatType": "room"}}, {"action": "maybe"}]}
    )
    bad["tools"]["links"]["models"][0]["args"].append("{{Link Url}}")
    response = staff_client.put("/api/config", bad, content_type="application/json")
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert any(
        e.startswith("tools.links.scope.rules[0].match.chatType") and '"room"' in e for e in errors
    )
    assert any(e.startswith("tools.links.scope.rules[1].action") for e in errors)
    assert any("tools.links.models[0].args[2]" in e for e in errors)
    assert staff_client.get("/api/config").json() == before


def test_config_put_refuses_oversized_tool_policy_lists_naming_the_limit(staff_client) -> None:
    before = staff_client.get("/api/config").json()
    huge = summarizer_config()
    huge["tools"]["deny"] = [f"tool_{i}" for i in range(1001)]
    huge["tools"]["byProvider"] = {f"provider{i}": {"profile": "minimal"} for i in range(201)}
    response = staff_client.put("/api/config", huge, content_type="application/json")
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert "tools.deny: at most 1000 entries (got 1001)" in errors
    assert "tools.byProvider: at most 200 entries (got 201)" in errors
    assert staff_client.get("/api/config").json() == before


def test_config_round_trip_is_identical(staff_client) -> None:
    document = {
        "tools": {
            "links": {
                "enabled": True,
                "maxLinks": 4,
                "timeoutSeconds": 12,
                "concurrency": 2,
                "scope": {
                    "default": "deny",
                    "rules": [
                        {
                            "action": "allow",
                            "match": {
                                "channel": "slack",
                                "chatType": "dm",
                                "keyPrefix": "agent:main",
                            },
                        }
                    ],
                },
                "models": [
                    {
                        "type": "cli",
                        "command": "link-understand",
                        "args": ["--url", "{{LinkUrl}}"],
                        "timeoutSeconds": 9,
                    }
                ],
            },
            "web": {
                "fetch": {
                    "maxChars": 20000,
                    "maxRedirects": 2,
                    "ssrfPolicy": {
                        "allowedHostnames": ["*.corp.example"],
                        "allowPrivateNetwork": True,
                    },
                }
            },
        },
        "agents": {
            "list": [
                {
                    "id": "ops",
                    "tools": {
                        "links": {
                            "maxLinks": 1,
                            "models": [{"type": "cli", "command": "other", "args": []}],
                        }
                    },
                }
            ]
        },
    }
    first = staff_client.put("/api/config", document, content_type="application/json").json()
    second = staff_client.put("/api/config", first, content_type="application/json").json()
    assert first == second
    assert first["tools"]["links"]["scope"] == document["tools"]["links"]["scope"]
    assert first["agents"] == document["agents"]


def test_enrich_uses_agent_override(user_client, staff_client) -> None:
    document = summarizer_config()
    document["agents"] = {"list": [{"id": "quiet", "tools": {"links": {"enabled": False}}}]}
    config_replace(document=document)
    result = post(
        user_client, "/api/enrich", {"body": "http://127.0.0.1/a", "agentId": "quiet"}
    ).json()
    assert result["links"]["outcome"] == "disabled"
    assert Run.objects.get(pk=result["runId"]).agent_id == "quiet"


def test_decisions_since_without_offset_is_read_as_utc(user_client) -> None:
    now = timezone.now()
    old = make_run(created_at=now - timedelta(hours=5))
    new = make_run(created_at=now)
    naive = (now - timedelta(hours=1)).replace(tzinfo=None).isoformat(timespec="seconds")
    response = user_client.get("/api/decisions", {"since": naive})
    assert response.status_code == 200
    assert [item["runId"] for item in response.json()["items"]] == [new.pk]
    assert old.pk not in [item["runId"] for item in response.json()["items"]]


@pytest.mark.parametrize(
    "stamp",
    ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"],
    ids=["before-year-1-in-utc", "after-9999-in-utc"],
)
@pytest.mark.parametrize("sort", ["-time", "time"])
def test_a_cursor_out_of_range_in_utc_is_refused_not_a_500(user_client, stamp, sort) -> None:
    # A crafted cursor whose time no database can compare (its offset takes it past year
    # 1 or 9999 in UTC): the API and the page refuse it as a cursor; the edges themselves
    # (year 1 in UTC) are pages, empty here.
    make_run(created_at=timezone.now())
    raw = f"{stamp}|5" if sort == "-time" else f"{sort}|{stamp}|5"
    cursor = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    for url in (None, "docs.example"):
        params = {"cursor": cursor, "sort": sort, **({"url": url} if url else {})}
        response = user_client.get("/api/decisions", params)
        assert response.status_code == 422, response.content
        assert response.json()["detail"] == "cursor: not a cursor returned by this API"
        page = user_client.get("/decisions/", params)
        assert page.status_code == 400 and b"not a cursor returned by this API" in page.content
    edge = base64.urlsafe_b64encode(b"0001-01-01T00:00:00+00:00|5").decode().rstrip("=")
    for url in (None, "docs.example"):
        params = {"cursor": edge, **({"url": url} if url else {})}
        assert user_client.get("/api/decisions", params).json() == {"items": [], "nextCursor": None}
