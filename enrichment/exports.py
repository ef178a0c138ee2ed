"""Streamed exports of the filtered decision history (CSV, or one JSON array)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse
from django.utils import timezone

from controlui.plumbing.errors import InvalidInput
from enrichment.models import Run
from enrichment.selectors import HistoryFilters, decision_export_chunk
from enrichment.services import run_summary

CSV_COLUMNS = [
    "runId",
    "createdAt",
    "channel",
    "chatType",
    "sessionKey",
    "agentId",
    "outcome",
    "urlCount",
    "durationMs",
]


async def _chunks(filters: HistoryFilters) -> AsyncIterator[list[Run]]:
    after = None
    while True:
        chunk = await sync_to_async(decision_export_chunk)(filters=filters, after=after)
        if not chunk:
            return
        yield chunk
        after = chunk[-1]


async def _csv_stream(filters: HistoryFilters) -> AsyncIterator[str]:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    async for chunk in _chunks(filters):
        writer.writerows(run_summary(run) for run in chunk)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


async def _json_stream(filters: HistoryFilters) -> AsyncIterator[str]:
    yield "["
    separator = "\n"
    async for chunk in _chunks(filters):
        for run in chunk:
            yield separator + json.dumps(run_summary(run))
            separator = ",\n"
    yield "\n]\n"


def export_response(*, filters: HistoryFilters, format: str) -> StreamingHttpResponse:
    if format not in ("csv", "json"):
        raise InvalidInput(f"format: must be 'csv' or 'json', got {format!r}")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    if format == "csv":
        response = StreamingHttpResponse(
            _csv_stream(filters), content_type="text/csv; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(_json_stream(filters), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="decisions-{stamp}.{format}"'
    return response
