from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from richoutput.models import AssistantMessage, CanvasBlock, CanvasDocument


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
