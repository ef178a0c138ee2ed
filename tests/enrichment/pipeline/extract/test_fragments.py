"""Divs of running text that trafilatura's markdown cut into fragments."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.fragments import (
    TextRun,
    cut_runs,
    holds_any_lead,
    read_as_text,
    text_runs,
)
from enrichment.pipeline.extract.page import extract_html

RUN = '<div>The first point of this guide is <a href="/t">simple</a>: start early.</div>'


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (RUN, (TextRun("thefirstpointofthisguideis", "simplestartearly"),)),
        # the lead runs through inline elements that are not links or emphasis
        (
            "<div><span>Most people see the essay</span> as a <i>hurdle</i> to jump.</div>",
            (TextRun("mostpeopleseetheessayasa", "hurdletojump"),),
        ),
        # a block inside: trafilatura reads its paragraphs, not the div's text
        ("<div>The first point of this guide is <a>simple</a><p>Start early.</p></div>", ()),
        # a label before a link is metadata, not running text
        ('<div>Written by <a href="/ana">Ana Lee</a></div>', ()),
        # nothing before the first link: nothing trafilatura could lose
        ('<div><a href="/t">Simple</a> is the first point of this guide.</div>', ()),
    ],
    ids=["link", "through-spans", "block-inside", "label", "no-lead"],
)
def test_text_runs_are_divs_of_inline_text_with_words_before_a_link_or_emphasis(
    html: str, expected: tuple[TextRun, ...]
) -> None:
    assert text_runs(lxml.html.fromstring(f"<body>{html}</body>")) == expected


@pytest.mark.parametrize(
    ("written", "cut"),
    [
        ("simple: start early.", {"thefirstpointofthisguideis"}),
        # flattened from "[simple](/t)start early.": the fragment lost the space
        ("simplestart early.", {"thefirstpointofthisguideis"}),
        ("The first point of this guide is simple: start early.", set()),
        ("Another page altogether.", set()),  # the div was left out whole, as text mode does
    ],
    ids=["fragment", "glued-fragment", "whole", "left-out"],
)
def test_a_run_is_cut_when_its_link_is_written_without_the_words_before(
    written: str, cut: set[str]
) -> None:
    runs = text_runs(lxml.html.fromstring(f"<body>{RUN}</body>"))
    assert cut_runs(runs, written) == cut


def test_a_reading_again_counts_when_it_holds_a_lost_lead() -> None:
    leads = frozenset({"thefirstpointofthisguideis", "thesecondpoint"})
    assert holds_any_lead(leads, "The first point of this guide is simple: start early.")
    assert not holds_any_lead(leads, "simple: start early.")


def test_read_as_text_unwraps_links_and_emphasis_of_the_cut_runs_only() -> None:
    other = '<div>Another div of running text links <a href="/o">elsewhere</a> too.</div>'
    tree = lxml.html.fromstring(f"<body>{RUN}{other}</body>")
    read_as_text(tree, frozenset({"thefirstpointofthisguideis"}))
    assert [link.get("href") for link in tree.iter("a")] == ["/o"]
    assert "The first point of this guide is simple: start early." in tree.text_content()


TAILS = (
    "they write it in a hurry the week before it is due, and it shows in every line",
    "the best essays come from students who spent as much time choosing a topic as writing",
    "a list of moments, objects and habits that made you who you are is the place to start",
    "parents and friends remember stories you have long forgotten, so ask them to add some",
    "once the topic is chosen the writing comes easily, because you tell a story you know",
)
ORDINALS = ("first", "second", "third", "fourth", "fifth")


def test_markdown_keeps_the_words_before_the_link_of_a_div_paragraph() -> None:
    # Paragraphs held as text in divs, and enough <p> text elsewhere on the page (a sidebar)
    # that trafilatura does not read divs as paragraphs: its markdown kept each link with
    # the text after it ("simple: they write it...") and lost the words before.
    paragraphs = "".join(
        f'<div>The {ordinal} point of this guide is <a href="/t{index}">simple</a>: {tail}.</div>'
        for index, (ordinal, tail) in enumerate(zip(ORDINALS, TAILS, strict=True))
    )
    sidebar = (
        "<p>"
        + "Ana Lee has coached students through college applications for years. " * 12
        + "</p>"
    )
    html = (
        "<html><head><title>Choosing a topic</title></head><body><div class='post'>"
        f"<h1>Choosing a topic</h1><div class='body'>{paragraphs}</div></div>"
        f"<div class='sidebar'>{sidebar}</div></body></html>"
    )
    text = " ".join(extract_html(html, mode="markdown").text.split())
    for ordinal, tail in zip(ORDINALS, TAILS, strict=True):
        assert f"The {ordinal} point of this guide is" in text
        assert tail in text
