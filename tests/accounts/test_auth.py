from __future__ import annotations

from io import StringIO

import pytest
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_digest
from controlui.asgi import application

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/", "/admin/"])
def test_anonymous_pages_redirect_to_login(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_login_page_is_public_and_login_works(client, user) -> None:
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_wrong_password_shows_error(client, user) -> None:
    response = client.post("/login/", {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_logout_requires_post_and_ends_session(user_client) -> None:
    assert user_client.post("/logout/").status_code == 302
    assert user_client.get("/").status_code == 302


def test_anonymous_api_gets_401_with_detail(client) -> None:
    for docs in ("/api/docs", "/api/openapi.json"):
        response = client.get(docs)
        assert response.status_code == 302 and "/login/" in response["Location"]
    response = client.get("/api/me")
    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]


def test_api_docs_render_for_logged_in_user(user_client) -> None:
    response = user_client.get("/api/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower() or b"redoc" in response.content.lower()


def test_create_api_token_command_prints_token_and_stores_only_hash(user) -> None:
    out = StringIO()
    call_command("create_api_token", "alice", "--name", "gateway", stdout=out)
    secret = out.getvalue().strip()
    assert secret.startswith("cui_") and len(secret) > 30
    token = ApiToken.objects.get()
    assert token.digest == token_digest(secret) and secret not in (token.digest, token.hint)
    assert token.name == "gateway"


def test_create_api_token_unknown_user() -> None:
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        call_command("create_api_token", "ghost")


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_bearer_token_valid_revoked_missing(client, user) -> None:
    token, secret = ApiToken.issue(user=user)
    url = "/api/me"
    assert client.get(url, **bearer(secret)).json() == {"username": "alice", "isStaff": False}
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert client.get(url, **bearer(secret + "x")).status_code == 401
    assert client.get(url).status_code == 401
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    assert client.get(url, **bearer(secret)).status_code == 401


def test_token_of_inactive_user_is_refused(client, user) -> None:
    _, secret = ApiToken.issue(user=user)
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert client.get("/api/me", **bearer(secret)).status_code == 401


def test_admin_creates_token_and_shows_it_once(staff_client, user) -> None:
    response = staff_client.post(
        "/admin/accounts/apitoken/add/", {"user": user.pk, "name": "ci"}, follow=True
    )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    assert any("cui_" in m for m in shown)
    secret = next(m for m in shown if "cui_" in m).split(": ", 1)[1]
    assert ApiToken.objects.get().digest == token_digest(secret)


@pytest.mark.django_db(transaction=True)
async def test_websocket_anonymous_closed_with_4401(in_memory_layer) -> None:
    communicator = WebsocketCommunicator(
        application,
        "/ws/ping/",
        headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")],
    )
    connected, _ = await communicator.connect()
    assert connected
    output = await communicator.receive_output()
    assert output == {"type": "websocket.close", "code": 4401}
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_websocket_authenticated_user_is_answered(in_memory_layer, django_user_model) -> None:
    from common.consumers import PingConsumer

    user = await django_user_model.objects.acreate(username="bob")
    communicator = WebsocketCommunicator(PingConsumer.as_asgi(), "/ws/ping/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    assert await communicator.receive_json_from() == {"type": "hello", "user": "bob"}
    await communicator.send_json_to({"n": 1})
    assert await communicator.receive_json_from() == {"type": "pong", "echo": {"n": 1}}
    await communicator.disconnect()
