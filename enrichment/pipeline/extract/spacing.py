"""Keep the space between an inline element and the words after it through trafilatura.

trafilatura trims the text around each element it keeps: an inline element that is not
inside a paragraph (a bold label or a link starting a ``<div>``) becomes a block of its own
with its tail trimmed, and its markdown then runs the element into the next word
(``**Sparkle:**Organize``, ``[Portage Help](/wiki)rather than``). A space kept inside the
element (``<b>Sparkle: </b>Organize``) or in a nested element's tail
(``<em><b>Sparkle:</b> </em>Organize``) is trimmed the same way, in text too
("Sparkle:Organize"). A browser shows one space there.

``protect_inline_spaces`` first moves the white space at the end of each inline element out
of it, where a browser's rendering puts it (``<b>Sparkle:</b> Organize``), then marks
the space that starts a tail with a character trimming cannot take (``SPACE_MARK``, "␣":
trafilatura drops the invisible ones; a page that shows the mark itself is not marked);
``restore_inline_spaces`` turns the marks back into spaces in trafilatura's output, and
drops those that ended up at the start of a line or beside a space trafilatura kept. Code
(``<pre>``) keeps its spaces as they are.

A superscript right after a word is written as the page's readers see it apart from that
word: ``x<sup>2</sup>`` reads ``x^2`` and a footnote mark ``survey<sup>[1]</sup>`` reads
``survey^[1]`` (``mark_superscripts``), where the text used to say "x2" and "survey1"
(the footnote's number glued into the word). An ordinal's letters stay in their number
(``12<sup>th</sup>`` reads "12th"). Subscripts stay as they are: "H2O" is how a formula is
written without them.

    >>> import lxml.html
    >>> tree = lxml.html.fromstring("<div><em><b>Sparkle:</b> </em>Organize it</div>")
    >>> protect_inline_spaces(tree)
    >>> restore_inline_spaces(lxml.html.tostring(tree, encoding="unicode"))
    '<div><em><b>Sparkle:</b></em> Organize it</div>'
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

# Elements a browser lays out within a line, whose edges trafilatura may trim.
INLINE_TAGS = (
    ("a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i")
    + ("ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike", "strong")
    + ("sub", "sup", "time", "tt", "u", "var")
)
# A printable character (trafilatura drops the others) that pages seldom hold: on a page
# that does hold it, the caller does not mark anything.
SPACE_MARK = "\u2423"
_LEADING_SPACE = re.compile(r"^\s+(?=\S)")
# A mark with the spaces around it; at a line's start (after any indent) it is dropped.
_MARK_AT_LINE_START = re.compile(f"^([ \\t]*){SPACE_MARK}[ \\t]*", re.MULTILINE)
_MARK = re.compile(f"[ \\t]*{SPACE_MARK}[ \\t]*")
# The letters an ordinal's number carries in superscript: 1st, 2nd, 3rd, 4th; 1er, 1re, 2e,
# 2ème (French); 1º, 1ª, 1o, 1a, 1os (Spanish, Portuguese, Italian).
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th|er|re|e|[eè]me|[oaºª]s?)\.?", re.IGNORECASE)


def protect_inline_spaces(tree: lxml.html.HtmlElement) -> None:
    """Move end spaces out of inline elements and mark the space starting each tail."""
    # Only elements followed by words count: a tail of spaces is neither moved to nor marked.
    # Inner elements first (reverse document order): a space at the end of a nested
    # element moves out step by step to the outermost one ending there.
    in_code = {element for pre in tree.iter("pre") for element in pre.iter(*INLINE_TAGS)}
    elements = [
        element
        for element in tree.iter(*INLINE_TAGS)
        if element.tail and not element.tail.isspace() and element not in in_code
    ]
    for element in reversed(elements):
        _move_trailing_space_out(element)
    for element in elements:
        tail = element.tail or ""
        if tail[:1].isspace():
            element.tail = _LEADING_SPACE.sub(SPACE_MARK, tail, count=1)


def restore_inline_spaces(text: str) -> str:
    """``text`` with each space mark turned back into one space (none at a line's start)."""
    if SPACE_MARK not in text:
        return text
    text = _MARK_AT_LINE_START.sub(r"\1", text)
    return _MARK.sub(" ", text)


def mark_superscripts(tree: lxml.html.HtmlElement) -> None:
    """Write ``^`` before a superscript that starts right after a word, ordinals aside.

    >>> tree = lxml.html.fromstring("<p>E=mc<sup>2</sup>, the 2<sup>nd</sup> note<sup>3</sup></p>")
    >>> mark_superscripts(tree)
    >>> tree.text_content()
    'E=mc^2, the 2nd note^3'
    """
    for element in tree.iter("sup"):
        inner = element.text_content().strip()
        if not inner or not (inner[0].isalnum() or inner[0] == "["):
            continue
        if not _text_before(element)[-1:].isalnum():
            continue
        if _text_before(element)[-1].isdigit() and _ORDINAL_SUFFIX.fullmatch(inner):
            continue
        element.text = "^" + (element.text or "")


def _text_before(element: etree._Element) -> str:
    """The text right before ``element`` in its parent (its previous sibling's, if no tail)."""
    previous = element.getprevious()
    if previous is None:
        parent = element.getparent()
        return str(parent.text or "") if parent is not None else ""
    if previous.tail:
        return str(previous.tail)
    return str(previous.text_content()) if isinstance(previous.tag, str) else ""


def _move_trailing_space_out(element: etree._Element) -> None:
    """``<b>bold </b>after`` -> ``<b>bold</b> after``: the space goes to the element's tail.

    Called for elements followed by words (whose tail is marked next); a space before
    another element stays inside, where trafilatura keeps it, and so does an element of
    nothing but spaces. A space at the element's start needs no move: trafilatura keeps it.
    """
    tail = element.tail or ""
    last = element[-1] if len(element) else None
    end = (last.tail if last is not None else element.text) or ""
    if not end[-1:].isspace() or (last is None and not end.strip()):
        return
    if last is not None:
        last.tail = end.rstrip()
    else:
        element.text = end.rstrip()
    if not tail[0].isspace():
        element.tail = " " + tail
