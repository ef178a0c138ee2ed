"""Dashboard pages answer hostile query strings with a 4xx or a page, never a 500
(issue 17, item 6; run with ``DATABASE_URL=postgres://…`` too, where NUL reaches the
database as an error instead of being matched)."""

from __future__ import annotations

import pytest

from enrichment.models import Run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "query",
    [
        {"url": "\x00"},
        {"q": "a\x00b"},
        {"channel": "\x00"},
        {"sessionKey": "x" * 5000},
        {"since": "\x00"},
        {"cursor": "\x00"},
        {"limit": "3000000000"},
    ],
    ids=[
        "nul-url",
        "nul-q",
        "nul-channel",
        "long-session-key",
        "nul-since",
        "nul-cursor",
        "huge-limit",
    ],
)
def test_history_page_refuses_bad_filters_with_a_400_naming_them(user_client, query) -> None:
    Run.objects.create(channel="slack", outcome="success")
    response = user_client.get("/decisions/", query)
    assert response.status_code == 400
    name = next(iter(query))
    assert name.encode() in response.content or b"limit" in response.content


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/explain/", {"message": "see \x00 http://x.example", "channel": "\x00"}),
        ("/tools/", {"agentId": "\x00", "provider": "\x00", "model": "\x00"}),
        ("/messages/", {"sessionKey": "\x00"}),
        ("/decisions/1/", {"url": "\x00"}),
    ],
    ids=["explain", "tools", "messages", "run-detail"],
)
def test_other_pages_never_answer_500_to_nul(user_client, path, query) -> None:
    Run.objects.create(pk=1, channel="slack", outcome="success")
    response = user_client.get(path, query)
    assert response.status_code == 400
    assert b"contains a NUL character" in response.content
