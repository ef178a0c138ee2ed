"""In markdown mode, a choice made on trafilatura's text output keeps that output."""

from __future__ import annotations

from typing import Any

import pytest

import enrichment.pipeline.extract.page as extraction
from enrichment.pipeline.extract.page import extract_html

PARAGRAPHS = [
    "The ferry to the outer islands leaves the north quay at seven every weekday morning.",
    "Tickets are sold on board, and bicycles travel free when the deck has room for them.",
    "In winter the crossing takes longer, because the captain keeps clear of the sandbanks.",
    "Dogs on a lead are welcome on the open deck but not in the heated cabin below it.",
    "Timetables for holidays are posted at the quay a week before each holiday begins.",
    "The last boat back leaves the islands at six, half an hour earlier on Sundays.",
]
# Another block than the page's text: what trafilatura's markdown can take when links lead
# it astray, after some of the page's paragraphs (so the extractors disagree, or agree loosely,
# rather than ignore each other).
PROMO = (
    "Win a weekend for two at the harbour hotel with a sea view, breakfast and dinner, "
    "a boat trip round the lighthouse, a picnic basket, two bicycles for the whole stay and "
    "a guided walk over the dunes with the warden. Enter the draw before the end of the month."
)


@pytest.mark.parametrize("shared", [1, 4], ids=["disagreeing", "loosely-agreeing"])
def test_markdown_of_another_block_gives_way_to_the_chosen_text_output(
    monkeypatch: pytest.MonkeyPatch, shared: int
) -> None:
    real = extraction._trafilatura
    astray_markdown = "\n".join([*PARAGRAPHS[:shared], PROMO])

    def astray(*args: Any, **kwargs: Any) -> str:
        written = real(*args, **kwargs)
        return astray_markdown if kwargs["mode"] == "markdown" else written

    monkeypatch.setattr(extraction, "_trafilatura", astray)
    paragraphs = "".join(f"<p>{text}</p>" for text in PARAGRAPHS)
    html = (
        "<html><head><title>Island ferry</title></head><body><main>"
        f"<h2>Island ferry</h2>{paragraphs}</main></body></html>"
    )
    text = " ".join(extract_html(html, mode="markdown").text.split())
    assert all(paragraph in text for paragraph in PARAGRAPHS)
    assert "harbour hotel" not in text
