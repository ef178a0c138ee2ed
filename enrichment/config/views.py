"""Config history pages: versions, a version with its diff, rollback with a confirmation,
and the admin's "Preview impact" (a dry run of the unsaved change form, streamed)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import admin, messages
from django.contrib.admin.views.decorators import staff_member_required
from django.db import transaction
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.errors import DomainError
from enrichment.config import dryrun as config_dryrun
from enrichment.config import versions as config_versions
from enrichment.config.changes import version_restore
from enrichment.config.store import config_document
from enrichment.models import ConfigVersion, EnrichmentConfig
from enrichment.pipeline.config.diff import diff_documents, summarize
from enrichment.pipeline.config.model import Config
from enrichment.pipeline.dryrun.evaluate import DryRunReport, address_book, dry_run

HISTORY_PAGE_SIZE = 30


@require_GET
def config_history(request: HttpRequest) -> HttpResponse:
    try:
        page = config_versions.version_list(
            cursor=request.GET.get("cursor") or None, limit=HISTORY_PAGE_SIZE
        )
    except DomainError as exc:
        return render(request, "enrichment/config_history.html", {"error": exc.detail}, status=400)
    summaries = config_versions.version_summaries(page.items)
    rows = [{"version": v, "summary": summaries[v.number]} for v in page.items]
    context = {
        "rows": rows,
        "next_cursor": page.next_cursor,
        "latest": config_versions.latest_number(),
    }
    return render(request, "enrichment/config_history.html", context)


@require_GET
def config_version(request: HttpRequest, number: int) -> HttpResponse:
    version = _version_or_404(number)
    if version is None:
        return render(request, "enrichment/config_version.html", {"missing": number}, status=404)
    against_raw = request.GET.get("against") or ""
    against = int(against_raw) if against_raw.isdigit() else number - 1
    other = ConfigVersion.objects.filter(number=against).first()
    document = config_versions.version_document(version)
    changes = diff_documents(config_versions.version_document(other), document) if other else []
    context = {
        "version": version,
        "other": other,
        "changes": changes,
        "summary": summarize(changes) if other else "first version",
        "numbers": list(
            ConfigVersion.objects.order_by("-number").values_list("number", flat=True)[:500]
        ),
        "latest": config_versions.latest_number(),
        "document": json.dumps(document, indent=2, ensure_ascii=False),
    }
    return render(request, "enrichment/config_version.html", context)


def _version_or_404(number: int) -> ConfigVersion | None:
    return ConfigVersion.objects.filter(number=number).first()


@staff_member_required
@require_http_methods(["GET", "POST"])
def config_restore(request: HttpRequest, number: int) -> HttpResponse:
    """GET: what restoring would change (current → version); POST: restore it."""
    version = _version_or_404(number)
    if version is None:
        return render(request, "enrichment/config_version.html", {"missing": number}, status=404)
    current = config_versions.latest_version()
    if request.method == "POST":
        base_raw = request.POST.get("base_version", "")
        try:
            result = version_restore(
                number=number,
                author=request.user.get_username(),
                note=request.POST.get("note", "")[:500],
                base_version=config_versions.parse_base_version(base_raw),
            )
        except DomainError as exc:
            messages.error(request, exc.detail)
            return redirect("config-restore", number=number)
        if result.version is None:
            messages.info(request, f"Version {number} is already the stored config.")
            return redirect("config-version", number=number)
        messages.success(request, f"Restored version {number} as version {result.version.number}.")
        return redirect("config-version", number=result.version.number)
    changes = (
        diff_documents(
            config_versions.version_document(current), config_versions.version_document(version)
        )
        if current
        else []
    )
    context = {
        "version": version,
        "current": current,
        "changes": changes,
        "summary": summarize(changes),
    }
    return render(request, "enrichment/config_restore.html", context)


class _DiscardMessages:
    """Stands in for the message storage while the admin form is saved and rolled back."""

    def add(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Rollback(Exception):
    pass


def _document_after_save(request: HttpRequest, config_id: int) -> dict[str, Any] | None:
    """The document the admin change form would store, found by saving it for real inside
    a transaction that is then rolled back (the exact same code path as "Save")."""
    model_admin = admin.site._registry[EnrichmentConfig]
    stored_messages = getattr(request, "_messages", None)
    request._messages = _DiscardMessages()  # type: ignore[attr-defined]
    document = None
    try:
        with transaction.atomic():
            response = model_admin.change_view(request, str(config_id))
            if response.status_code == 302:
                document = config_document()
            raise _Rollback
    except _Rollback:
        pass
    finally:
        request._messages = stored_messages  # type: ignore[attr-defined]
    return document


@staff_member_required
@require_POST
def config_preview(request: HttpRequest, config_id: int) -> HttpResponseBase:
    """Dry run of the admin change form as posted: NDJSON lines ``progress`` then ``result``
    (or one ``error``)."""
    document = _document_after_save(request, config_id)
    if document is None:
        return JsonResponse(
            {
                "type": "error",
                "error": "The form has errors or the config moved on: save it to see them.",
            },
            status=422,
        )
    try:
        config = config_dryrun.proposed_config(document)
        window = config_dryrun.parse_window(_window_from(request.POST))
    except DomainError as exc:
        return JsonResponse({"type": "error", "error": exc.detail}, status=exc.status)
    response = StreamingHttpResponse(_stream(config, window), content_type="application/x-ndjson")
    response["Cache-Control"] = "no-store"
    return response


def _window_from(data: Any) -> dict[str, Any]:
    window: dict[str, Any] = {}
    for key, field in (("lastRuns", "_preview_runs"), ("days", "_preview_days")):
        raw = (data.get(field) or "").strip()
        if raw:
            try:
                window[key] = int(raw) if raw.isdigit() else float(raw)
            except ValueError:
                window[key] = raw  # parse_window names the bad value
    return window


async def _stream(config: Config, window: config_dryrun.Window) -> AsyncIterator[str]:
    runs = await sync_to_async(config_dryrun.window_runs)(window)
    book = await sync_to_async(address_book, thread_sensitive=False)(runs)
    report = DryRunReport()
    yield json.dumps({"type": "progress", "done": 0, "total": len(runs)}) + "\n"
    for start in range(0, len(runs), config_dryrun.CHUNK):
        chunk = runs[start : start + config_dryrun.CHUNK]
        # Pure CPU work in a worker thread: the event loop keeps serving other requests.
        await sync_to_async(dry_run, thread_sensitive=False)(
            config, chunk, book=book, report=report
        )
        yield json.dumps({"type": "progress", "done": report.evaluated, "total": len(runs)}) + "\n"
    result = config_dryrun.dry_run_result(report, window)
    yield json.dumps({"type": "result", **result}) + "\n"
