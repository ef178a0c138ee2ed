"""Admin for the enrichment config: the config, its scope rules, link models and agents as
ordered inlines, each field validated as the config parser would (a bad value names its path),
every save recorded as a config version (``admin_versions``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adminsortable2.admin import CustomInlineFormSet, SortableAdminBase, SortableTabularInline
from django import forms
from django.contrib import admin
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db.models import Max, QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from enrichment.config.admin_openclaw import OpenClawExportAdminMixin
from enrichment.config.admin_versions import VersionedAdminMixin, VersionedFormMixin
from enrichment.config.fields import FETCH_FIELDS, LINK_FIELDS, SSRF_FLAGS
from enrichment.config.widgets import BooleanWidgetsMixin, HostnameListField
from enrichment.models import (
    Agent,
    EnrichmentConfig,
    LinkModel,
    ScopeRule,
)
from enrichment.pipeline.config.media import parse_media_config
from enrichment.pipeline.config.model import ConfigError
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.config.scope import normalize_chat_type
from enrichment.pipeline.policy.resolve import parse_tool_policy
from enrichment.pipeline.templates import find_template_errors

CHAT_TYPES_HELP = "direct, dm, group or channel; blank matches any"


class DraggedPositionForm(forms.ModelForm):
    """``position`` is a hidden input that dragging fills in: an error on it (a tampered
    post) is repeated above the row, naming the field, since the input itself is not shown."""

    MAX_POSITION = 100_000  # far beyond any real list; the same bound on every database

    def clean_position(self) -> int | None:
        value: int | None = self.cleaned_data.get("position")
        if value is not None and value > self.MAX_POSITION:
            raise forms.ValidationError(f"must be at most {self.MAX_POSITION}")
        return value

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        for message in self.errors.get("position", []):
            self.add_error(None, f"position: {message} (reload the page and drag again)")
        return cleaned


class ScopeRuleForm(DraggedPositionForm):
    class Meta:
        model = ScopeRule
        fields = ("position", "action", "channel", "chat_type", "key_prefix")
        help_texts = {"chat_type": CHAT_TYPES_HELP}

    def clean_chat_type(self) -> str:
        value = (self.cleaned_data.get("chat_type") or "").strip()
        if value and normalize_chat_type(value) is None:
            raise forms.ValidationError(f'unknown chat type "{value}" ({CHAT_TYPES_HELP})')
        return value


class LinkModelForm(DraggedPositionForm):
    class Meta:
        model = LinkModel
        fields = ("position", "command", "args", "timeout_seconds")

    def clean_timeout_seconds(self) -> float | None:
        value: float | None = self.cleaned_data.get("timeout_seconds")
        if value is not None and value < 1:
            raise forms.ValidationError("must be at least 1")
        return value

    def clean_command(self) -> str:
        command = (self.cleaned_data.get("command") or "").strip()
        if not command:
            raise forms.ValidationError("command must not be empty")
        return command

    def clean_args(self) -> list[str]:
        args = self.cleaned_data.get("args")
        if args in (None, ""):
            return []
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise forms.ValidationError(
                'args must be a JSON list of strings, e.g. ["--url", "{{LinkUrl}}"]'
            )
        problems = [
            f"args[{i}]: {error}"
            for i, arg in enumerate(args)
            for error in find_template_errors(arg)
        ]
        if problems:
            raise forms.ValidationError(problems)
        return args


class OpenClawBlocksFormMixin(forms.ModelForm):
    """Validate the ``media`` and ``tool_policy`` JSON fields with the core parsers, so the
    admin rejects what ``PUT /api/config`` rejects and shows the path-named errors on the
    field itself (``tools.byProvider["openai"].profile: unknown profile "x"``)."""

    def block_path(self) -> str:
        """Where this row's ``tools`` object sits in the OpenClaw document."""
        return "tools"

    def clean_tool_policy(self) -> Any:
        value = self.cleaned_data.get("tool_policy")
        if value is None or value == "":
            return {}  # a blank field means "no policy"; the column itself is not nullable
        path = self.block_path()
        errors = parse_tool_policy(value, path, agent=path.startswith("agents"))[1]
        if errors:
            raise forms.ValidationError([f"{where}: {message}" for where, message in errors])
        return value

    def clean_media(self) -> Any:
        value = self.cleaned_data.get("media")
        if value is None:
            return None
        issues = parse_media_config(value, f"{self.block_path()}.media")[1]
        if issues:
            raise forms.ValidationError([str(issue) for issue in issues])
        return value


def _present(
    cleaned: dict[str, Any], pairs: Sequence[tuple[str, str]], prefix: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The document keys these form values would store, and document path → form field."""
    block = {
        key: cleaned[field]
        for key, field in pairs
        if cleaned.get(field) is not None and cleaned.get(field) != ""
    }
    return block, {f"{prefix}.{key}": field for key, field in pairs}


class CoreScalarsMixin(forms.ModelForm):
    """Run the core validator over the plain settings of this form (links, fetch, SSRF), so
    a value the core refuses (``timeoutSeconds`` 0, a bad allowed hostname …) is an error on
    its field instead of a stored config that fails every run.

    The core alone judges ranges, so every message reads the same way
    (``tools.links.maxLinks: must be at least 1``): the columns' own bounds (a positive
    integer's ``>= 0``) would otherwise answer first in Django's words."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for path, name in self.scalar_document({})[1].items():
            field = self.fields.get(name)
            if not isinstance(field, forms.IntegerField | forms.FloatField):
                continue
            field.validators = [
                validator
                for validator in field.validators
                if not isinstance(validator, MinValueValidator | MaxValueValidator)
            ]
            field.widget.attrs.pop("min", None)
            kind = "whole number" if isinstance(field, forms.IntegerField) else "number"
            field.error_messages["invalid"] = f"{path}: must be a {kind}"

    def scalar_document(self, cleaned: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        links, paths = _present(cleaned, LINK_FIELDS, "tools.links")
        fetch, fetch_paths = _present(cleaned, FETCH_FIELDS, "tools.web.fetch")
        ssrf, ssrf_paths = _present(cleaned, SSRF_FLAGS, "tools.web.fetch.ssrfPolicy")
        if cleaned.get("ssrf_allowed_hostnames") not in (None, "", []):
            ssrf["allowedHostnames"] = cleaned["ssrf_allowed_hostnames"]
        # The core names the policy object, not the key, for a bad hostname entry.
        paths |= fetch_paths | ssrf_paths
        paths["tools.web.fetch.ssrfPolicy"] = "ssrf_allowed_hostnames"
        if ssrf:
            fetch["ssrfPolicy"] = ssrf
        return {"tools": {"links": links, "web": {"fetch": fetch}}}, paths

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if cleaned is None:
            return cleaned
        document, paths = self.scalar_document(cleaned)
        try:
            parse_config(document)
        except ConfigError as exc:
            for issue in exc.errors:
                field = paths.get(issue.path)
                if field in self.fields and field not in self.errors:
                    self.add_error(field, str(issue))
        return cleaned


class AgentScalarsMixin(CoreScalarsMixin):
    def scalar_document(self, cleaned: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        links, paths = _present(cleaned, LINK_FIELDS, "agents.list[0].tools.links")
        return {"agents": {"list": [{"id": "agent", "tools": {"links": links}}]}}, paths


class AgentInlineForm(DraggedPositionForm, AgentScalarsMixin):
    class Meta:
        model = Agent
        fields = ("position", "agent_id")  # the inline's fields add the rest


class EnrichmentConfigForm(VersionedFormMixin, CoreScalarsMixin, OpenClawBlocksFormMixin):
    ssrf_allowed_hostnames = HostnameListField(label="Allowed hostnames")

    class Meta:
        model = EnrichmentConfig
        fields = ("media", "tool_policy")  # the admin's fieldsets add the rest


class AgentForm(VersionedFormMixin, AgentScalarsMixin, OpenClawBlocksFormMixin):
    class Meta:
        model = Agent
        fields = ("position", "media", "tool_policy")  # the admin's fields add the rest

    def block_path(self) -> str:
        position = self.cleaned_data.get("position", self.instance.position)
        return f"agents.list[{position}].tools"


class LabelledInlineFormSet(CustomInlineFormSet):
    """A tabular row has no ``<label>``s (the column heads name the cells): each input gets
    its accessible name, the "Delete?" box included, as screen readers and axe expect."""

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        for name, field in form.fields.items():
            if not field.widget.is_hidden:
                label = "Delete" if name == "DELETE" else str(field.label or name)
                field.widget.attrs.setdefault("aria-label", label)


class SortableRows:
    """Rows ordered by dragging them (django-admin-sortable2) instead of typing numbers.

    The library hides ``position`` (an input it fills with 1, 2, 3 … in the order shown) and
    puts a new row last; ``RenumberingAdmin`` stores the result as 0, 1, 2 …. Saved rows
    are dragged by their handle; keyboard users move the focused row with its buttons
    (``admin_sortable_keys.js``: up, down, first, last)."""

    class Media:
        js = ("js/admin_sortable_keys.js",)
        css = {"all": ("css/admin_sortable.css",)}


class OrderedInline(SortableRows, SortableTabularInline):
    formset = LabelledInlineFormSet
    extra = 0
    ordering = ("position", "id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        # On the config page only the global rows; an agent's rows live on the agent page.
        return (
            queryset.filter(agent__isnull=True)
            if self.parent_model is EnrichmentConfig
            else queryset
        )


class ScopeRuleInline(OrderedInline):
    model = ScopeRule
    form = ScopeRuleForm
    verbose_name = "scope rule"
    verbose_name_plural = "scope rules (first match wins)"
    fields = ("position", "rule_number", "action", "channel", "chat_type", "key_prefix")
    readonly_fields = ("rule_number",)

    @admin.display(description="Rule")
    def rule_number(self, rule: ScopeRule) -> str:
        """The number the run page, explain, Preview impact and the diff use (from 1);
        ``admin_sortable_keys.js`` renumbers the column when rows are moved."""
        if not rule.pk:
            return format_html('<span class="rule-number">{}</span>', "new")
        return format_html('<span class="rule-number">{}</span>', rule.position + 1)


class LinkModelInline(OrderedInline):
    model = LinkModel
    form = LinkModelForm
    verbose_name = "CLI entry (link model)"
    verbose_name_plural = "CLI entries (link models, tried in order)"


class AgentInline(BooleanWidgetsMixin, SortableRows, SortableTabularInline):
    model = Agent
    form = AgentInlineForm
    formset = LabelledInlineFormSet
    extra = 0
    ordering = ("position", "id")
    fields = (
        "position",
        "agent_id",
        "links_enabled",
        "links_max_links",
        "override_scope",
        "override_models",
        "edit_link",
    )
    readonly_fields = ("edit_link",)
    show_change_link = True

    @admin.display(description="Overrides")
    def edit_link(self, agent: Agent) -> str:
        if not agent.pk:
            return "save first"
        return format_html(
            '<a href="{}">scope rules and models</a>',
            reverse("admin:enrichment_agent_change", args=[agent.pk]),
        )


def renumber(instances: list[Any]) -> None:
    """Keep positions dense (0, 1, 2 …) in the order the editor chose."""
    for index, instance in enumerate(
        sorted(instances, key=lambda item: (item.position, item.pk or 0))
    ):
        if instance.position != index:
            instance.position = index
            instance.save(update_fields=["position"])


class RenumberingAdmin(BooleanWidgetsMixin, admin.ModelAdmin):
    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        instances = formset.save(commit=False)
        for instance in instances:
            if hasattr(instance, "config_id") and not instance.config_id:
                instance.config = (
                    form.instance
                    if isinstance(form.instance, EnrichmentConfig)
                    else form.instance.config
                )
            instance.save()
        for deleted in formset.deleted_objects:
            deleted.delete()
        formset.save_m2m()
        model = formset.model
        if model in (ScopeRule, LinkModel, Agent):
            owner: dict[str, object] = (
                {"agent": form.instance}
                if isinstance(form.instance, Agent)
                else {"config": form.instance}
            )
            if model is not Agent and not isinstance(form.instance, Agent):
                owner["agent__isnull"] = True
            renumber(list(model.objects.filter(**owner)))


@admin.register(EnrichmentConfig)
class EnrichmentConfigAdmin(
    OpenClawExportAdminMixin, VersionedAdminMixin, SortableAdminBase, RenumberingAdmin
):
    list_display = ("name", "is_active", "updated_at", "test_link")
    change_form_template = "admin/enrichment/enrichmentconfig/change_form.html"
    form = EnrichmentConfigForm
    inlines = [ScopeRuleInline, LinkModelInline, AgentInline]
    fieldsets = [
        (None, {"fields": ("name", "is_active", "test_link", "change_note", "base_version")}),
        (
            "Link understanding (tools.links)",
            {
                "fields": (
                    "links_enabled",
                    "links_max_links",
                    "links_timeout_seconds",
                    "links_concurrency",
                    "links_scope_default",
                )
            },
        ),
        (
            "Web fetch (tools.web.fetch)",
            {
                "classes": ("collapse",),
                "fields": (
                    "fetch_max_chars",
                    "fetch_max_chars_cap",
                    "fetch_max_response_bytes",
                    "fetch_timeout_seconds",
                    "fetch_cache_ttl_minutes",
                    "fetch_max_redirects",
                    "fetch_user_agent",
                ),
            },
        ),
        (
            "SSRF policy (tools.web.fetch.ssrfPolicy)",
            {
                "fields": (
                    "ssrf_allowed_hostnames",
                    "ssrf_allow_private_network",
                    "ssrf_allow_rfc2544_benchmark_range",
                    "ssrf_allow_ipv6_unique_local_range",
                )
            },
        ),
        (
            "Other blocks (OpenClaw JSON)",
            {"classes": ("collapse",), "fields": ("media", "tool_policy")},
        ),
    ]
    readonly_fields = ("test_link",)

    # One config drives every run: it is edited, never added next to or deleted.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return not EnrichmentConfig.objects.exists() and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Test")
    def test_link(self, config: EnrichmentConfig) -> str:
        try:
            url = reverse("explain")
        except NoReverseMatch:
            url = reverse("api:openapi-view")
        return format_html('<a href="{}">Test this config on a message →</a>', url)


@admin.register(Agent)
class AgentAdmin(VersionedAdminMixin, SortableAdminBase, RenumberingAdmin):
    list_display = ("agent_id", "config", "override_scope", "override_models")
    form = AgentForm
    inlines = [ScopeRuleInline, LinkModelInline]
    fields = (
        "config",
        "position",
        "agent_id",
        "links_enabled",
        "links_max_links",
        "links_timeout_seconds",
        "links_concurrency",
        "override_scope",
        "links_scope_default",
        "override_models",
        "media",
        "tool_policy",
        "change_note",
        "base_version",
    )
    # Agents are ordered by dragging them on the config page; a new one goes last.
    readonly_fields = ("position",)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            last = Agent.objects.filter(config=obj.config).aggregate(last=Max("position"))["last"]
            obj.position = 0 if last is None else last + 1
        super().save_model(request, obj, form, change)
