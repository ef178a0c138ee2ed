"""Whether the credentials a request carries belong to an active user, from headers alone.

The server edge asks this before it reads an upload body (``server.daphne_body``), so an
anonymous or forged request is answered ``401`` without its body being stored. Synchronous
(ORM): the edge calls it in a worker thread, never on the event loop.
"""

from __future__ import annotations

from importlib import import_module

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.db import close_old_connections
from django.utils.crypto import constant_time_compare

from accounts.models import ApiToken
from accounts.tokens import token_digest


def credentials_valid(session_key: str | None, bearer_token: str | None) -> bool:
    """True when the bearer token is active, or the session is a live login of an active user."""
    try:
        if bearer_token:
            return ApiToken.objects.active().filter(digest=token_digest(bearer_token)).exists()
        if session_key:
            return _session_user_active(session_key)
        return False
    finally:
        close_old_connections()


def _session_user_active(session_key: str) -> bool:
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user_id = store.get(SESSION_KEY)
    if user_id is None:
        return False
    user_model = get_user_model()
    user = user_model._default_manager.filter(pk=user_model._meta.pk.to_python(user_id)).first()
    if user is None or not user.is_active:
        return False
    return constant_time_compare(store.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash())
