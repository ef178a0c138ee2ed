"""Authentication for the ninja API: session cookie or ``Authorization: Bearer <token>``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer, SessionAuth

from accounts.models import ApiToken
from accounts.tokens import token_digest

# Writing last_used_at on every request would turn every API read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = (
            ApiToken.objects.active()
            .select_related("user")
            .filter(digest=token_digest(token))
            .first()
        )
        if found is None:
            return None
        now = timezone.now()
        if found.last_used_at is None or now - found.last_used_at > LAST_USED_RESOLUTION:
            found.last_used_at = now
            found.save(update_fields=["last_used_at"])
        request.user = found.user
        return found.user


class SessionUser(SessionAuth):
    """Session auth for the dashboard's own fetch() calls (CSRF enforced on writes)."""


api_auth = [BearerToken(), SessionUser()]
