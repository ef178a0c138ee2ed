"""Divs of running text that trafilatura's markdown cut into fragments.

A page may hold its paragraphs as text directly in ``<div>`` elements rather than in
``<p>``. trafilatura reads such a div as a paragraph only on a page with little ``<p>`` text;
elsewhere it drops the div, and its text output then has none of it (it falls back to its
other extractors when too little is left). Its markdown output keeps links and emphasis,
though, and an inline element outside a paragraph becomes a paragraph of its own with the
text after it: the div's words before its first link or emphasis are lost, and what is left
reads as fragments ("[picking the right topic](/blog/topics)before they start writing",
"*into*college."). Those fragments also lengthen the output enough that trafilatura's
fallbacks no longer step in.

``text_runs`` lists the divs that can break that way (only inline content, words before
their first link or emphasis); ``cut_runs`` tells, from the markdown trafilatura wrote,
which of them it kept the link or emphasis of but not the words before; ``read_as_text``
removes the links and emphasis of those divs on a fresh tree, so trafilatura reads them as
its text output does: the whole div or nothing, never its pieces. That second reading is
kept when it holds words that the first lost (``holds_any_lead``: trafilatura's fallbacks
then found the whole text, as they do for its text output); otherwise the first stands.

    >>> tree = lxml.html.fromstring("<div>Most people see the essay as a <i>hurdle</i>.</div>")
    >>> runs = text_runs(tree)
    >>> runs
    (TextRun(lead='mostpeopleseetheessayasa', marked='hurdle'),)
    >>> cut_runs(runs, "*hurdle*.")
    frozenset({'mostpeopleseetheessayasa'})
    >>> cut_runs(runs, "Most people see the essay as a *hurdle*.")
    frozenset()
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml import etree

# Elements a browser lays out within a line of text.
INLINE_TAGS = frozenset(
    ("a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "del", "dfn", "em")
    + ("font", "i", "img", "ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span")
    + ("strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr")
)
# The inline elements trafilatura's markdown keeps as links or emphasis.
MARKED_TAGS = frozenset(("a", "b", "strong", "i", "em", "del", "s", "strike"))
# Words a div needs before its first link or emphasis to count as running text: a label
# ("Tags:", "Written by") before a link is metadata, whose loss costs a reader little.
MIN_LEAD_WORDS = 4
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class TextRun:
    """A div of running text, by its words (lower-cased, joined without spaces).

    ``lead`` is what comes before the first link or emphasis, ``marked`` that element's
    text and the text right after it. Words are joined without spaces because the
    fragments lose the space after the element ("topicbefore").
    """

    lead: str
    marked: str


def text_runs(tree: lxml.html.HtmlElement) -> tuple[TextRun, ...]:
    """The divs of ``tree`` with only inline content and words before a link or emphasis."""
    runs = []
    for div in tree.iter("div"):
        first = _first_marked(div)
        if first is None:
            continue
        lead = _WORD.findall(_text_before(div, first).lower())
        marked = _joined_words(first.text_content() + (first.tail or ""))
        if len(lead) >= MIN_LEAD_WORDS and marked:
            runs.append(TextRun("".join(lead), marked))
    return tuple(runs)


def cut_runs(runs: tuple[TextRun, ...], written: str) -> frozenset[str]:
    """The leads of the runs whose link or emphasis ``written`` holds but not their lead.

    ``written`` is trafilatura's markdown flattened to text (links to their labels).
    """
    written = _joined_words(written)
    return frozenset(run.lead for run in runs if run.marked in written and run.lead not in written)


def holds_any_lead(leads: frozenset[str], written: str) -> bool:
    """Whether ``written`` (flattened markdown) has the words of one of ``leads``."""
    joined = _joined_words(written)
    return any(lead in joined for lead in leads)


def read_as_text(tree: lxml.html.HtmlElement, leads: frozenset[str]) -> None:
    """Unwrap the links and emphasis of the divs whose lead is one of ``leads``."""
    for div in list(tree.iter("div")):
        first = _first_marked(div)
        if first is None or _joined_words(_text_before(div, first)) not in leads:
            continue
        for element in list(div.iterdescendants()):
            if element.tag in MARKED_TAGS:
                element.drop_tag()


def _first_marked(div: etree._Element) -> etree._Element | None:
    """The div's first link or emphasis, when all its content is inline (else None)."""
    first = None
    for element in div.iterdescendants():
        tag = element.tag
        if tag not in INLINE_TAGS:
            return None
        if first is None and tag in MARKED_TAGS:
            first = element
    return first


def _text_before(root: etree._Element, stop: etree._Element) -> str:
    """The text of ``root`` that comes before ``stop`` in document order."""
    parts: list[str] = []
    _collect_until(root, stop, parts)
    return "".join(parts)


def _collect_until(element: etree._Element, stop: etree._Element, parts: list[str]) -> bool:
    if element is stop:
        return True
    if element.text:
        parts.append(element.text)
    for child in element:
        if _collect_until(child, stop, parts):
            return True
        if child.tail:
            parts.append(child.tail)
    return False


def _joined_words(text: str) -> str:
    return "".join(_WORD.findall(text.lower()))
