"""Decision history: the filtered, keyset-paged list, one run's record, the export."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router, Schema
from pydantic import BaseModel, Field

from common.keyset import MAX_PAGE_SIZE
from enrichment import selectors
from enrichment.api.enrich import StageRecordsOut
from enrichment.selectors import DEFAULT_PAGE_SIZE, HistoryFilters, query_params
from enrichment.selectors.exports import export_response
from enrichment.selectors.records import decision_record
from enrichment.selectors.summary import run_summary


class DecisionSummary(BaseModel):
    runId: int
    createdAt: datetime
    channel: str
    chatType: str
    sessionKey: str
    agentId: str
    outcome: str
    urlCount: int
    durationMs: int | None
    redactedAt: datetime | None = None


class DecisionPage(Schema):
    items: list[DecisionSummary]
    nextCursor: str | None


class DecisionDetail(DecisionSummary, StageRecordsOut):
    messageId: str
    finishedAt: datetime | None
    originalBody: str
    enrichedBody: str
    error: str
    redacted: list[str] = []  # what redaction removed (empty: nothing was)
    links: dict[str, Any]
    media: list[dict[str, Any]]
    configSnapshot: dict[str, Any]


router = Router(tags=["history"])

# The history's orders (selectors.SORTS; a test keeps the two equal): "-" is largest first.
SortParam = Literal["-time", "time", "-duration", "duration", "-urls", "urls"]

# Largest primary key a BigAutoField can hold: larger ids are a 422, not a database overflow.
MAX_ROW_ID = 2**63 - 1


@router.get("/decisions", response=DecisionPage, tags=["history"])
def decisions(
    request: HttpRequest,
    cursor: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    sort: SortParam | None = None,
) -> dict[str, Any]:
    """History, newest first. Filters: outcome, channel, chatType, sessionKey (prefix),
    url (substring), q (text in the bodies and summaries), since, until. ``sort`` orders by
    time (default ``-time``), ``duration`` or ``urls`` (URL count); a leading ``-`` is
    largest first; ``nextCursor`` pages within that order."""
    page = selectors.decision_list(
        filters=HistoryFilters.from_params(query_params(request.GET)), cursor=cursor, limit=limit
    )
    return {
        "items": [run_summary(run) for run in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/decisions/export", tags=["history"])
def decisions_export(
    request: HttpRequest, format: str = "json", sort: SortParam | None = None
) -> StreamingHttpResponse:
    """The filtered history as a streamed CSV or JSON download, in the ``sort`` order."""
    filters = HistoryFilters.from_params(query_params(request.GET))
    return export_response(filters=filters, format=format)


@router.get("/decisions/{run_id}", response=DecisionDetail, tags=["history"])
def decision_detail(
    request: HttpRequest,
    run_id: Annotated[int, Field(ge=1, le=MAX_ROW_ID)],
) -> dict[str, Any]:
    return decision_record(selectors.decision_get(run_id=run_id))
