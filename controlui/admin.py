from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils import timezone

from controlui.models import ApiToken, AssistantMessage, CanvasBlock, CanvasDocument


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


class CanvasBlockInline(admin.TabularInline):
    """Blocks are stored exactly as rendered; editing them would break that promise."""

    model = CanvasBlock
    fields = ("position", "block")
    readonly_fields = ("position", "block")
    ordering = ("position",)
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AssistantMessage)
class AssistantMessageAdmin(admin.ModelAdmin):
    list_display = ("id", "created_at", "session_key", "reply_to_id", "audio_as_voice")
    list_filter = ("audio_as_voice", "reply_to_current")
    search_fields = ("session_key", "text")
    readonly_fields = ("created_at",)
    show_full_result_count = False
    inlines = [CanvasBlockInline]


@admin.register(CanvasDocument)
class CanvasDocumentAdmin(admin.ModelAdmin):
    list_display = ("view_id", "title", "owner", "created_at", "updated_at")
    list_select_related = ("owner",)
    search_fields = ("view_id", "title")
    readonly_fields = ("created_at", "updated_at")
