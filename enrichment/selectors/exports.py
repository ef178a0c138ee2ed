"""Streamed exports of the filtered decision history (CSV, or one JSON array)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse
from django.utils import timezone

from common.errors import InvalidInput
from enrichment.models import Run
from enrichment.selectors import HistoryFilters, decision_export_chunk
from enrichment.selectors.status import run_statuses
from enrichment.selectors.summary import run_summary


def export_row(run: Run) -> dict[str, object]:
    return {**run_summary(run), "statuses": run_statuses(run)}


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
    "statuses",  # derived: media, attempts-failed, fallback, dns-failure (";"-separated)
    "redactedAt",
]


# A spreadsheet runs a cell starting with one of these as a formula (=HYPERLINK(…),
# =cmd|' /C calc'!A0, @SUM(…)); channel, session key and agent id come from chat traffic.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A value safe to open in a spreadsheet: text that would start a formula gets a ``'``.

    >>> csv_cell("=HYPERLINK(\"http://x\")"), csv_cell("slack"), csv_cell(-3)
    ('\'=HYPERLINK("http://x")', 'slack', -3)
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


async def _chunks(filters: HistoryFilters, first: list[Run]) -> AsyncIterator[list[Run]]:
    chunk = first
    while chunk:
        yield chunk
        chunk = await sync_to_async(decision_export_chunk)(filters=filters, after=chunk[-1])


async def _csv_stream(filters: HistoryFilters, first: list[Run]) -> AsyncIterator[str]:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    async for chunk in _chunks(filters, first):
        writer.writerows(
            {
                key: csv_cell(";".join(value) if isinstance(value, list) else value)
                for key, value in export_row(run).items()
            }
            for run in chunk
        )
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


async def _json_stream(filters: HistoryFilters, first: list[Run]) -> AsyncIterator[str]:
    yield "["
    separator = "\n"
    async for chunk in _chunks(filters, first):
        for run in chunk:
            yield separator + json.dumps(export_row(run))
            separator = ",\n"
    yield "\n]\n"


def export_response(*, filters: HistoryFilters, format: str) -> StreamingHttpResponse:
    if format not in ("csv", "json"):
        raise InvalidInput(f"format: must be 'csv' or 'json', got {format!r}")
    # The first chunk is read before any byte is sent: a filter the database refuses is
    # then an error answer, not a download that stops after its first bytes.
    first = decision_export_chunk(filters=filters)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    if format == "csv":
        response = StreamingHttpResponse(
            _csv_stream(filters, first), content_type="text/csv; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(
            _json_stream(filters, first), content_type="application/json"
        )
    response["Content-Disposition"] = f'attachment; filename="decisions-{stamp}.{format}"'
    return response
