"""Canvas documents and stored messages are read by their owner only (staff: all) (issue 32).

Someone else's id answers 404, by page and by API, exactly like an id that does not exist.
Rows without an owner (stored by a command, or before owners were kept) are staff-only.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.models import ApiToken
from accounts.tokens import token_digest, token_generate
from richoutput import services as canvas_services
from richoutput.models import AssistantMessage, CanvasDocument

pytestmark = pytest.mark.django_db

DOCUMENT = "/__openclaw__/canvas/documents/{}/index.html"


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-pass-12345")


@pytest.fixture
def bob_client(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def ops_client(staff_user) -> Client:
    """Staff, on a client of its own (``user_client`` and ``ops_client`` share one)."""
    client = Client()
    client.force_login(staff_user)
    return client


def post_json(client: Client, path: str, payload: dict, **headers: str):
    return client.post(path, json.dumps(payload), content_type="application/json", **headers)


def test_another_users_canvas_document_is_404_and_the_owners_is_served(
    user, user_client, bob_client, ops_client
) -> None:
    CanvasDocument.objects.create(view_id="alice-board", html="<p>alice's</p>", owner=user)
    assert bob_client.get(DOCUMENT.format("alice-board")).status_code == 404
    assert user_client.get(DOCUMENT.format("alice-board")).content == b"<p>alice's</p>"
    assert ops_client.get(DOCUMENT.format("alice-board")).status_code == 200


def test_an_ownerless_document_is_served_to_staff_only(bob_client, ops_client) -> None:
    CanvasDocument.objects.create(view_id="seeded", html="<p>seeded</p>")
    assert bob_client.get(DOCUMENT.format("seeded")).status_code == 404
    assert ops_client.get(DOCUMENT.format("seeded")).status_code == 200


def test_another_users_message_is_404_by_api_and_by_page(user, bob_client) -> None:
    mine = canvas_services.message_store(text="alice's secret", author=user)
    assert bob_client.get(f"/api/messages/{mine.pk}").status_code == 404
    assert bob_client.get(f"/messages/{mine.pk}/").status_code == 404
    assert bob_client.get("/api/messages").json() == {"items": [], "nextCursor": None}
    listed = bob_client.get("/messages/").content.decode()
    assert "alice&#x27;s secret" not in listed and "alice's secret" not in listed


def test_the_owner_and_staff_read_the_message(user, user_client, ops_client) -> None:
    mine = canvas_services.message_store(text="alice's note", author=user)
    canvas_services.message_store(text="seeded by a command")
    assert user_client.get(f"/api/messages/{mine.pk}").json()["text"] == "alice's note"
    assert [m["text"] for m in user_client.get("/api/messages").json()["items"]] == ["alice's note"]
    assert user_client.get(f"/messages/{mine.pk}/").status_code == 200
    assert {m["text"] for m in ops_client.get("/api/messages").json()["items"]} == {
        "alice's note",
        "seeded by a command",
    }


def test_every_api_write_path_records_the_owner(user, user_client) -> None:
    created = post_json(user_client, "/api/messages", {"text": "by messages"})
    rendered = post_json(user_client, "/api/render", {"text": "by render", "store": True})
    assert created.status_code == 201 and rendered.status_code == 200
    owners = dict(AssistantMessage.objects.values_list("raw_text", "owner_id"))
    assert owners == {"by messages": user.pk, "by render": user.pk}


def test_the_gateway_plugins_token_owns_what_it_stores(bob, bob_client) -> None:
    # The OpenClaw plugin posts the turn's reply to /api/render with store: true and a token.
    secret = token_generate()
    ApiToken.objects.create(user=bob, name="gateway", digest=token_digest(secret), hint="x")
    client = Client()
    response = post_json(
        client,
        "/api/render",
        {"text": "reply from the gateway", "store": True},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert response.status_code == 200
    message = AssistantMessage.objects.get(pk=response.json()["messageId"])
    assert message.owner == bob
    assert bob_client.get(f"/api/messages/{message.pk}").status_code == 200


def test_the_run_page_lists_only_replies_the_reader_may_read(user, bob, bob_client) -> None:
    from enrichment.models import Run

    run = Run.objects.create(
        session_key="agent:main:s1", original_body="hi", enriched_body="hi", outcome="no-links"
    )
    canvas_services.message_store(text="alice's reply", session_key="agent:main:s1", author=user)
    canvas_services.message_store(text="bob's reply", session_key="agent:main:s1", author=bob)
    page = bob_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "bob&#x27;s reply" in page
    assert "alice&#x27;s reply" not in page and "alice's reply" not in page
