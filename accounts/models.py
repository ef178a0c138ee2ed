"""API tokens: bearer credentials for the REST API and the sockets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.tokens import token_digest, token_generate

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class ApiToken(models.Model):
    """A bearer token for the REST API; the secret itself is shown once and never stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(
        max_length=12, editable=False, help_text="First characters, to tell tokens apart."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.hint}… ({self.user})"

    def assign_secret(self) -> str:
        """Give this (unsaved) token a fresh secret; returns the secret, which is not kept."""
        secret = token_generate()
        self.digest = token_digest(secret)
        self.hint = secret[:8]
        return secret

    @classmethod
    def issue(cls, *, user: User, name: str = "") -> tuple[ApiToken, str]:
        token = cls(user=user, name=name)
        secret = token.assign_secret()
        token.save()
        return token, secret

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
