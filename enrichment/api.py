"""The enrichment router: explain endpoints, enrichment, decision history, config."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Body, Router

from controlui.api_helpers import require_staff
from controlui.errors import InvalidInput
from enrichment import selectors, services
from enrichment.config_store import config_document
from enrichment.exports import export_response
from enrichment.pipeline.links import extract_links
from enrichment.pipeline.scope import evaluate_scope, parse_scope
from enrichment.pipeline.ssrf import SsrfPolicy, check_url, system_resolve
from enrichment.records import decision_record
from enrichment.schemas import (
    DecisionDetail,
    DecisionPage,
    EnrichIn,
    EnrichOut,
    LinksExtractIn,
    LinksExtractOut,
    ScopeEvaluateIn,
    ScopeEvaluateOut,
    SsrfCheckIn,
    SsrfCheckOut,
)
from enrichment.selectors import DEFAULT_PAGE_SIZE, HistoryFilters

router = Router(tags=["enrichment"])


@router.post("/links/extract", response=LinksExtractOut, tags=["explain"])
def links_extract(request: HttpRequest, payload: LinksExtractIn) -> dict[str, object]:
    """Which links a message would enrich (nothing stored, no DNS)."""
    return {"links": extract_links(payload.message, payload.maxLinks)}


@router.post("/ssrf/check", response=SsrfCheckOut, tags=["explain"])
def ssrf_check(request: HttpRequest, payload: SsrfCheckIn) -> dict[str, object]:
    """The SSRF verdict for one URL, optionally with DNS (every answer classified)."""
    try:
        policy = SsrfPolicy.from_dict(payload.policy or {})
    except ValueError as exc:
        raise InvalidInput(f"policy: {exc}") from None
    verdict = check_url(payload.url, policy, system_resolve if payload.resolve else None)
    return {
        "blocked": verdict.blocked,
        "reason": verdict.reason,
        "host": verdict.host,
        "addresses": list(verdict.addresses),
    }


@router.post("/scope/evaluate", response=ScopeEvaluateOut, tags=["explain"])
def scope_evaluate(request: HttpRequest, payload: ScopeEvaluateIn) -> dict[str, object]:
    """Allow or deny for a context under a scope object; an invalid scope is a 422."""
    scope = None
    if payload.scope is not None:
        scope, issues = parse_scope(payload.scope, "scope")
        if issues:
            raise InvalidInput("Invalid scope.", [str(issue) for issue in issues])
    decision = evaluate_scope(scope, payload.channel, payload.chatType, payload.sessionKey)
    return {"decision": decision.decision, "matchedRule": decision.matched_rule}


@router.post("/enrich", response=EnrichOut, tags=["enrichment"])
def enrich(request: HttpRequest, payload: EnrichIn) -> dict[str, Any]:
    """Run the pipeline on one message with the stored config and record the run."""
    return async_to_sync(services.enrichment_run)(request=services.request_from_schema(payload))


@router.get("/decisions", response=DecisionPage, tags=["history"])
def decisions(
    request: HttpRequest, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
) -> dict[str, Any]:
    """History, newest first. Filters: outcome, channel, chatType, sessionKey (prefix),
    url (substring), q (text in the bodies and summaries), since, until."""
    page = selectors.decision_list(
        filters=HistoryFilters.from_params(request.GET.dict()), cursor=cursor, limit=limit
    )
    return {
        "items": [services.run_summary(run) for run in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/decisions/export", tags=["history"])
def decisions_export(request: HttpRequest, format: str = "json") -> StreamingHttpResponse:
    """The filtered history as a streamed CSV or JSON download."""
    filters = HistoryFilters.from_params(request.GET.dict())
    return export_response(filters=filters, format=format)


@router.get("/decisions/{run_id}", response=DecisionDetail, tags=["history"])
def decision_detail(request: HttpRequest, run_id: int) -> dict[str, Any]:
    return decision_record(selectors.decision_get(run_id=run_id))


@router.get("/config", tags=["config"])
def config_get(request: HttpRequest) -> dict[str, Any]:
    """The stored config in OpenClaw's shape."""
    return config_document()


@router.put("/config", tags=["config"])
def config_put(request: HttpRequest, document: Body[dict[str, Any]]) -> dict[str, Any]:
    """Replace the whole config (staff). Keys left out return to their defaults; on any
    validation error nothing changes and the 422 lists every path at fault."""
    require_staff(request)
    return services.config_replace(document=document)
