"""The run page: one decision with its body before and after, its stages, its neighbours."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.errors import InvalidInput, NotFound
from enrichment import selectors
from enrichment.models import Run
from enrichment.pipeline.retention.policy import REDACTED_CONTENT
from enrichment.selectors.explain import run_scope_source
from enrichment.selectors.replies import run_replies
from enrichment.selectors.run_config import run_config_compare
from enrichment.selectors.status import derived_status_set
from enrichment.stage_specs import stage_sections
from enrichment.views.history import SORT_LABELS


@dataclass(frozen=True)
class BodyParts:
    original: str
    kept: str  # the part of the enriched body that is the (trimmed) original
    added: str  # what enrichment appended; "" when nothing was
    rewritten: bool = False  # the body was rewritten around the original (media envelope)


def body_parts(run: Run) -> BodyParts:
    """Split the enriched body into the original it starts with and the appended envelope."""
    trimmed = run.original_body.strip()
    enriched = run.enriched_body
    if trimmed and enriched.startswith(trimmed):
        return BodyParts(run.original_body, trimmed, enriched[len(trimmed) :])
    if not trimmed and enriched:
        return BodyParts(run.original_body, "", enriched)
    if trimmed and enriched and enriched.strip() != trimmed:
        # Media understanding rewrites the body ("[Image]\nUser text:\n<original>…"): the
        # whole enriched body is enrichment's work, not "nothing appended".
        return BodyParts(run.original_body, "", enriched, rewritten=True)
    return BodyParts(run.original_body, enriched, "")


@require_GET
def decision_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        filters = selectors.HistoryFilters.from_params(selectors.query_params(request.GET))
        run = derived_status_set(selectors.decision_get(run_id=run_id))
    except NotFound:
        raise Http404(f"No run with id {run_id}.") from None
    except InvalidInput as exc:
        return render(request, "enrichment/detail.html", {"error": exc.detail}, status=400)
    newer, older = selectors.decision_neighbours(run=run, filters=filters)
    context = {
        "run": run,
        "body": body_parts(run),
        "scope_source": run_scope_source(run),
        "stage_sections": stage_sections(run),
        "filter_query": urlencode(filters.as_params()),
        # Prev/next follow the history's order: "newer/older" only when that is time.
        "time_order": filters.sort == selectors.DEFAULT_SORT,
        "sort_label": SORT_LABELS[filters.sort],
        "newer_id": newer,
        "older_id": older,
        "run_config": run_config_compare(run=run),
        "replies": run_replies(run=run, reader=request.user),
        "trace_url": trace_url(run.trace_id),
        "redacted_content": REDACTED_CONTENT,
    }
    return render(request, "enrichment/detail.html", context)


def trace_url(trace_id: str) -> str | None:
    """Where the run's trace opens (``TRACE_URL_TEMPLATE``), when tracing recorded one."""
    template = settings.TRACE_URL_TEMPLATE
    return template.replace("{trace_id}", trace_id) if trace_id and template else None
