"""The explain page: why a message's links would be fetched, skipped or blocked."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.errors import InvalidInput
from enrichment.selectors.explain import ExplainQuery, explain_message
from enrichment.views.history import CHAT_TYPES, request_flag

MAX_EXPLAIN_MESSAGE = 20_000


def _explain_query(params: dict[str, str]) -> ExplainQuery:
    message = params.get("message", "").strip()
    if len(message) > MAX_EXPLAIN_MESSAGE:
        raise InvalidInput(f"message: longer than {MAX_EXPLAIN_MESSAGE} characters")
    return ExplainQuery(
        message=message,
        channel=params.get("channel", "").strip()[:100],
        chat_type=params.get("chatType", "").strip()[:20],
        session_key=params.get("sessionKey", "").strip()[:300],
        agent_id=params.get("agentId", "").strip()[:100],
        # A hidden "off" comes before the checkbox, so the last value wins when checked and
        # a first visit (no parameter at all) resolves DNS.
        resolve_dns=request_flag(params.get("dns", "on")),
    )


@require_GET
def explain(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {"chat_types": CHAT_TYPES}
    try:
        query = _explain_query(request.GET.dict())
        context["query"] = query
        if query.message:
            result = explain_message(query)
            context["result"] = result
            context["links_config_json"] = json.dumps(result.links_config, indent=2)
    except InvalidInput as exc:
        context["error"] = exc.detail
        context.setdefault("query", ExplainQuery(message=""))
        return render(request, "enrichment/explain.html", context, status=400)
    return render(request, "enrichment/explain.html", context)
