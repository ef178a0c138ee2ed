"""``credentials_valid``: what the server edge asks before it reads an upload body."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from accounts.credentials import credentials_valid
from accounts.models import ApiToken
from accounts.tokens import token_digest, token_generate

# Transactional: the edge calls this in a worker thread and closes that thread's stale
# connections after each check, which PostgreSQL refuses inside a test's atomic block.
pytestmark = pytest.mark.django_db(transaction=True)


def make_token(user) -> tuple[str, ApiToken]:
    secret = token_generate()
    token = ApiToken.objects.create(user=user, name="t", digest=token_digest(secret), hint="x")
    return secret, token


def test_an_active_token_is_valid_and_a_revoked_or_unknown_one_is_not(user) -> None:
    secret, token = make_token(user)
    assert credentials_valid(None, secret)
    assert not credentials_valid(None, token_generate())
    token.revoked_at = timezone.now()
    token.save()
    assert not credentials_valid(None, secret)


def test_a_logged_in_session_is_valid_until_logout(user) -> None:
    client = Client()
    client.force_login(user)
    key = client.cookies["sessionid"].value
    assert credentials_valid(key, None)
    client.logout()
    assert not credentials_valid(key, None)


def test_a_forged_or_missing_session_is_not_valid() -> None:
    assert not credentials_valid("not-a-session-key", None)
    assert not credentials_valid(None, None)


def test_an_inactive_users_session_and_token_are_not_valid(user) -> None:
    client = Client()
    client.force_login(user)
    key = client.cookies["sessionid"].value
    secret, _ = make_token(user)
    user.is_active = False
    user.save()
    assert not credentials_valid(key, None)
    assert not credentials_valid(None, secret)


def test_a_session_from_before_a_password_change_is_not_valid(user) -> None:
    client = Client()
    client.force_login(user)
    key = client.cookies["sessionid"].value
    user.set_password("a-new-password-123")
    user.save()
    assert not credentials_valid(key, None)
