"""The admin's OpenClaw export: a download per target on the config's page, with the notes
of each export (what the target has no home for) shown beside its button."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse

from enrichment.config.openclaw import config_to_openclaw
from enrichment.config.openclaw_export import (
    OPENCLAW_VERSION,
    TARGETS,
    UnknownTarget,
    export_openclaw,
    parse_target,
)
from enrichment.config.store import config_document
from enrichment.models import EnrichmentConfig

TARGET_LABELS = {
    "current": f"OpenClaw {OPENCLAW_VERSION} (current shape)",
    "legacy": "Legacy shape (agents.list, per-capability and per-agent blocks)",
}


def openclaw_exports(config: EnrichmentConfig) -> list[dict[str, Any]]:
    """One entry per target for the change form: label, download URL and notes."""
    document = config_document(config)
    return [
        {
            "target": target,
            "label": TARGET_LABELS[target],
            "url": reverse("admin:enrichment_openclaw_export", args=[config.pk, target]),
            "notes": export_openclaw(document, target).notes,
        }
        for target in TARGETS
    ]


class OpenClawExportAdminMixin(admin.ModelAdmin):
    def get_urls(self) -> list[URLPattern]:
        export = self.admin_site.admin_view(self.openclaw_export_view)
        own = [path("<int:pk>/openclaw/<str:target>/", export, name="enrichment_openclaw_export")]
        return own + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        context = dict(extra_context or {})
        config = None
        if str(object_id).isdigit():
            config = EnrichmentConfig.objects.filter(pk=object_id).first()
        if config is not None:
            context["openclaw_exports"] = openclaw_exports(config)
        return super().change_view(request, object_id, form_url, context)

    def openclaw_export_view(self, request: HttpRequest, pk: int, target: str) -> HttpResponse:
        config = EnrichmentConfig.objects.filter(pk=pk).first()
        if config is None:
            raise Http404("no such config")
        if not self.has_view_or_change_permission(request, config):
            raise PermissionDenied
        try:
            exported = export_openclaw(config_document(config), parse_target(target))
        except UnknownTarget as error:
            raise Http404(str(error)) from None
        response = HttpResponse(
            config_to_openclaw(exported.document), content_type="application/json; charset=utf-8"
        )
        name = "openclaw.json" if target == "current" else "openclaw-legacy.json"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
