"""Admin of the enrichment app: the config (``enrichment.config.admin``, registered on
import) and the decision log, read-only and without full counts on its large tables."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property

from enrichment import admin_problems  # noqa: F401  (registers problems and alerts)
from enrichment.config import admin as config_admin  # noqa: F401  (registers the config admin)
from enrichment.jobs.rerun import MAX_RERUN, RERUNNABLE, runs_rerun
from enrichment.models import Attempt, RetentionPass, Run, UrlDecision
from enrichment.selectors.explain import run_scope_source


class NoCountPaginator(Paginator):
    """The decision log can hold millions of rows: count at most the first pages' worth
    (a LIMITed count) instead of a full COUNT(*); filters narrow further."""

    COUNT_LIMIT = 10_000

    @cached_property
    def count(self) -> int:
        return int(self.object_list[: self.COUNT_LIMIT].count())  # type: ignore[attr-defined]  # a QuerySet


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class UrlDecisionInline(admin.TabularInline):
    model = UrlDecision
    fields = ("position", "url", "blocked", "reason", "addresses", "chosen_position")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "created_at",
        "outcome",
        "channel",
        "chat_type",
        "session_key",
        "url_count",
        "duration_ms",
    )
    list_filter = ("outcome",)
    search_fields = ("=id", "=message_id", "session_key")
    paginator = NoCountPaginator
    show_full_result_count = False
    date_hierarchy = None
    ordering = ("-created_at", "-id")
    inlines = [UrlDecisionInline]
    actions = ["run_again"]

    @admin.action(
        description=f"Run again (interrupted, failed or dead-letter runs, at most {MAX_RERUN})"
    )
    def run_again(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        runs = list(queryset.filter(outcome__in=RERUNNABLE).order_by("id")[: MAX_RERUN + 1])
        if not runs:
            self.message_user(
                request,
                "None of the selected runs was interrupted, failed or a dead letter: nothing to run again.",
                messages.WARNING,
            )
            return
        if len(runs) > MAX_RERUN:
            self.message_user(
                request,
                f"Select at most {MAX_RERUN} interrupted, failed or dead-letter runs to run again.",
                messages.ERROR,
            )
            return
        for rerun in async_to_sync(runs_rerun)(runs):
            if rerun.error is None:
                self.message_user(
                    request, f"Run {rerun.run_id} ran again as run {rerun.new_run_id}."
                )
            else:
                self.message_user(
                    request,
                    f"Run {rerun.run_id} could not run again: {rerun.error}",
                    messages.ERROR,
                )

    # The stored 0-based index would read as a different rule than every page shows.
    exclude = ("matched_rule",)
    readonly_fields = ("scope_decision",)

    @admin.display(description="Scope decision")
    def scope_decision(self, run: Run) -> str:
        source = run_scope_source(run)
        return source.text if source is not None else "—"


@admin.register(RetentionPass)
class RetentionPassAdmin(ReadOnlyAdmin):
    """The log of ``prune_runs`` passes (written by the pass only)."""

    list_display = ("started_at", "finished_at", "removed", "redacted", "policy", "error")
    ordering = ("-started_at", "-id")


@admin.register(Attempt)
class AttemptAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "url_decision",
        "command",
        "outcome",
        "reason",
        "exit_code",
        "duration_ms",
    )
    list_select_related = ("url_decision",)
    paginator = NoCountPaginator
    show_full_result_count = False
    list_filter = ("outcome",)
