"""Admin of problems and alerts: problems' state, alert rules (validated on save), and the
read-only record of every delivery. Imported by ``enrichment.admin``."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from enrichment.models import AlertDelivery, AlertRule, Problem
from enrichment.services.alerts import alert_send_test


def _set_state(state: str, label: str) -> Any:
    @admin.action(description=f"{label} selected problems")
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        changed = queryset.exclude(state=state).update(state=state, state_changed_at=timezone.now())
        modeladmin.message_user(request, f"{changed} problem(s) marked {state}.")

    action.__name__ = f"mark_{state}"
    return action


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ("title", "kind", "state", "count", "session_count", "last_seen")
    list_filter = ("state", "kind")
    search_fields = ("subject", "fingerprint")
    ordering = ("-last_seen", "-id")
    actions = [_set_state("resolved", "Resolve"), _set_state("ignored", "Ignore"),
               _set_state("open", "Reopen")]  # fmt: skip
    fields = ("title", "kind", "subject", "fingerprint", "state", "count", "session_count",
              "first_seen", "last_seen", "detail", "recent_sessions", "last_run_id")  # fmt: skip
    readonly_fields = tuple(name for name in fields if name != "state")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # problems come from runs

    def save_model(self, request: HttpRequest, obj: Problem, form: Any, change: bool) -> None:
        if "state" in form.changed_data:
            obj.state_changed_at = timezone.now()
        super().save_model(request, obj, form, change)


class AlertDeliveryInline(admin.TabularInline):
    model = AlertDelivery
    extra = 0
    max_num = 0
    can_delete = False
    fields = ("created_at", "status", "attempts", "response_code", "error")
    readonly_fields = fields
    ordering = ("-created_at", "-id")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Only the latest few: a rule that fired for months has many.
        rule_id = request.resolver_match.kwargs.get("object_id") if request.resolver_match else None
        latest = AlertDelivery.objects.filter(rule_id=rule_id).order_by("-created_at", "-id")
        return (
            super()
            .get_queryset(request)
            .filter(pk__in=list(latest.values_list("pk", flat=True)[:10]))
        )


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "enabled", "kind", "window_minutes", "threshold", "firing",
                    "last_checked_at", "last_sent_at")  # fmt: skip
    list_filter = ("enabled", "kind", "firing")
    fields = ("name", "enabled", "kind", "window_minutes", "threshold", "min_runs",
              "cooldown_minutes", "webhook_url", "firing", "last_value", "last_checked_at",
              "last_sent_at")  # fmt: skip
    readonly_fields = ("firing", "last_value", "last_checked_at", "last_sent_at")
    inlines = [AlertDeliveryInline]
    actions = ["send_test"]

    @admin.action(description="Send a test message to the selected rules' webhooks")
    def send_test(self, request: HttpRequest, queryset: QuerySet[AlertRule]) -> None:
        for rule in queryset[:10]:
            delivery = alert_send_test(rule=rule)
            if delivery.status == AlertDelivery.Status.DELIVERED:
                self.message_user(request, f"{rule.name}: delivered ({delivery.response_code}).")
            else:
                self.message_user(
                    request,
                    f"{rule.name}: failed after {delivery.attempts} tries: {delivery.error}",
                    level=messages.ERROR,
                )


@admin.register(AlertDelivery)
class AlertDeliveryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "rule", "status", "attempts", "response_code", "error")
    list_filter = ("status", "rule")
    list_select_related = ("rule",)
    ordering = ("-created_at", "-id")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
