from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils import timezone

from accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("hint", "name", "user", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    list_select_related = ("user",)
    search_fields = ("name", "user__username", "hint")
    readonly_fields = ("hint", "created_at", "last_used_at")
    fields = ("user", "name", "hint", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if not change:
            secret = obj.assign_secret()
            super().save_model(request, obj, form, change)
            messages.warning(request, f"New API token (shown once, copy it now): {secret}")
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).")
