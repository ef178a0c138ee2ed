"""Explain endpoints: what the pipeline would decide, nothing stored (links, SSRF, scope)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import Field

from common.errors import InvalidInput
from enrichment.api.limits import (
    MAX_BODY_CHARS,
    MAX_URL_CHARS,
)
from enrichment.pipeline.config.scope import evaluate_scope, parse_scope
from enrichment.pipeline.links.detection import extract_links
from enrichment.pipeline.net.ssrf import SsrfPolicy, check_url, system_resolve


class LinksExtractIn(Schema):
    message: str = Field(max_length=MAX_BODY_CHARS)
    maxLinks: Any = None


class LinksExtractOut(Schema):
    links: list[str]


class SsrfCheckIn(Schema):
    url: str = Field(max_length=MAX_URL_CHARS)
    resolve: bool = False
    policy: dict[str, Any] | None = None


class SsrfCheckOut(Schema):
    blocked: bool
    reason: str | None
    host: str | None
    addresses: list[str]


class ScopeEvaluateIn(Schema):
    scope: Any = None
    channel: str | None = Field(default=None, max_length=500)
    chatType: str | None = Field(default=None, max_length=100)
    sessionKey: str | None = Field(default=None, max_length=1000)


class ScopeEvaluateOut(Schema):
    decision: str
    matchedRule: int | None


router = Router(tags=["explain"])


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
