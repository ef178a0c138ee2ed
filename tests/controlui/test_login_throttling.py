"""Login throttling with django-axes, on the site login and the admin login (issue 17, item 7)."""

from __future__ import annotations

import pytest
from django.conf import settings

from controlui.settings import AXES_FAILURE_LIMIT

pytestmark = pytest.mark.django_db

LOGINS = {
    "site": ("/login/", "/"),
    "admin": ("/admin/login/", "/admin/"),
}


def attempt(client, path: str, username: str, password: str, address: str = "203.0.113.7"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.parametrize("login", sorted(LOGINS), ids=sorted(LOGINS))
def test_wrong_passwords_lock_the_user_out_even_with_the_right_one(
    client, staff_user, login
) -> None:
    path, _ = LOGINS[login]
    assert AXES_FAILURE_LIMIT == 5
    for _ in range(AXES_FAILURE_LIMIT - 1):
        assert attempt(client, path, "operator", "wrong").status_code == 200
    locked = attempt(client, path, "operator", "wrong")
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    # The guesses stop working: even the right password is refused during the cool-off.
    assert attempt(client, path, "operator", "operator-pass-123").status_code == 429
    assert "_auth_user_id" not in client.session


def test_one_lockout_covers_both_login_pages(client, staff_user) -> None:
    for _ in range(AXES_FAILURE_LIMIT):
        attempt(client, "/login/", "operator", "wrong")
    assert attempt(client, "/admin/login/", "operator", "operator-pass-123").status_code == 429


def test_lockout_is_per_address_so_others_can_still_log_in(client, staff_user) -> None:
    for _ in range(AXES_FAILURE_LIMIT):
        attempt(client, "/login/", "operator", "wrong", address="203.0.113.7")
    response = attempt(client, "/login/", "operator", "operator-pass-123", address="198.51.100.9")
    assert response.status_code == 302


def test_a_success_before_the_limit_resets_the_count(client, staff_user) -> None:
    for _ in range(AXES_FAILURE_LIMIT - 1):
        attempt(client, "/login/", "operator", "wrong")
    assert attempt(client, "/login/", "operator", "operator-pass-123").status_code == 302
    client.post("/logout/")
    for _ in range(AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "/login/", "operator", "wrong").status_code == 200
    assert attempt(client, "/login/", "operator", "operator-pass-123").status_code == 302


def test_axes_is_wired_for_every_login() -> None:
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"
