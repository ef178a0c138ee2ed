"""Fixes to the tree before trafilatura reads it, for faults of its output.

trafilatura's markdown output (links and formatting kept) writes underlined, superscript
and subscript text as ``<u>``, ``<sup>`` and ``<sub>`` tags: raw HTML in the markdown an agent
reads ("12<sup>th</sup>", a footnote mark "<sup>[1]</sup>"), and words once it is flattened
to text. Markdown has none of the three, so they are unwrapped before trafilatura runs, as
its text output reads them ("12th").

In a list item, trafilatura trims the text of a heading or other block before the block's
first child, so "to use as <strong>headbands</strong>" came out "as**headbands**" and a
link "my[sandals](...)": words run together. That space is moved into the child.

A link around blocks (a teaser card: ``<a href><h3>Title</h3><p>Summary</p></a>``) becomes
one link label in its markdown, the blocks' texts joined with nothing between them
("[Lisbon in four daysTrams, tiles...](...)"): the last word of one block and the first of
the next merge into a word the page never says. A space is put around each block inside a
link, as a browser's line break separates them.

Bold or italics that start or end inside a word (``<b>Although i</b>ts``, a page's editor
slipping by a letter) come out as ``**Although i**ts``: the word is split by markup in the
text an agent reads, and by the flattening to text. The letters of the word outside the
emphasis are moved into it (``**Although its**``), in scripts that put spaces between words
(elsewhere a word has no such edge to find).

trafilatura escapes every underscore of prose (``const\\_str``, ``AWS\\_REGION``). Between two
letters or digits an underscore can neither open nor close emphasis in CommonMark, so the
escape there only mangles the name an agent reads and copies: ``unescape_word_underscores``
takes it out of trafilatura's markdown (not out of code, whose backslashes are the page's).

trafilatura also drops a link-dense block as navigation, in text and markdown alike; on a
page that is a grid of teaser cards, each card a link around a heading and a summary, that
takes the heading of every card (or the whole grid). On a page that declares no kind, where
such a grid is often the content, a link around blocks holding at least CARD_WORDS words (a
title and a line of summary; menu entries are shorter) is unwrapped (``unwrap_card_links``).

    >>> tree = lxml.html.fromstring("<p>Read <u>this</u> now.</p>")
    >>> prepare_for_markdown(tree)
    >>> lxml.html.tostring(tree, encoding="unicode")
    '<p>Read this now.</p>'
    >>> tree = lxml.html.fromstring('<div><a href="/a">New<h3>Title</h3><p>Summary</p></a></div>')
    >>> prepare_for_markdown(tree)
    >>> lxml.html.tostring(tree, encoding="unicode")
    '<div><a href="/a">New <h3>Title</h3> <p>Summary</p> </a></div>'
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

# Blocks inside a list item whose text trafilatura trims before the block's first child.
INNER_BLOCK_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "div", "section", "dt", "dd")
# A link around blocks with at least this many words is a teaser card, not a menu entry.
CARD_WORDS = 12
EMPHASIS_TAGS = ("b", "strong", "i", "em")
# Letters and digits (not "_", which joins the parts of a name), except those of scripts
# written without spaces between words (Thai, kana, CJK, Hangul), where a run of letters
# is many words.
_SPACED_WORD = (
    r"[^\W_\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
_WORD_START = re.compile(f"^{_SPACED_WORD}+")
_WORD_END = re.compile(f"{_SPACED_WORD}+\\Z")
# Fenced code blocks and code spans: verbatim, so a backslash in them is the page's own.
_CODE = re.compile(r"^(`{3,}|~{3,}).*?^\1|(`+).+?(?<!`)\2(?!`)", re.MULTILINE | re.DOTALL)
# Escaped underscores with a letter or digit on both sides ("a\\_b", "a\\_\\_b").
_WORD_UNDERSCORES = re.compile(r"(?<=[^\W_])(?:\\_)+(?=[^\W_])")
BLOCK_TAGS = frozenset(
    ("address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "figure")
    + ("figcaption", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "li", "main")
    + ("ol", "p", "pre", "section", "summary", "table", "tr", "td", "th", "ul", "br")
)


def prepare_for_markdown(tree: lxml.html.HtmlElement) -> None:
    """Reshape ``tree`` in place so trafilatura's markdown holds the words the page shows."""
    for element in list(tree.iter("u", "sup", "sub")):
        element.drop_tag()
    for element in tree.iter(*EMPHASIS_TAGS):
        _widen_to_whole_words(element)
    for block in tree.iter(*INNER_BLOCK_TAGS):
        text = block.text
        if text and text[-1].isspace() and len(block) and text.strip() and _in_list_item(block):
            block.text = text.rstrip()
            block[0].text = " " + (block[0].text or "")
    for link in tree.iter("a"):
        for inner in link.iterdescendants():
            if inner.tag in BLOCK_TAGS:
                _space_around(inner)


def unescape_word_underscores(markdown: str) -> str:
    r"""``markdown`` without the escapes of underscores inside words, code left as it is.

    >>> unescape_word_underscores(r"call const\_str, not `const\_str` or \_this\_")
    'call const_str, not `const\\_str` or \\_this\\_'
    """
    if "\\_" not in markdown:
        return markdown
    parts = []
    end = 0
    for code in _CODE.finditer(markdown):
        parts.append(_unescape_underscores(markdown[end : code.start()]))
        parts.append(code.group())
        end = code.end()
    parts.append(_unescape_underscores(markdown[end:]))
    return "".join(parts)


def _unescape_underscores(prose: str) -> str:
    return _WORD_UNDERSCORES.sub(lambda escaped: escaped.group().replace("\\_", "_"), prose)


def unwrap_card_links(tree: lxml.html.HtmlElement) -> None:
    """Unwrap the teaser cards' links, so their link density does not mark them as chrome.

    >>> tree = lxml.html.fromstring('<div><a href="/a"><h3>Title</h3><p>' + "word " * 12 + "</p></a></div>")
    >>> unwrap_card_links(tree)
    >>> lxml.html.tostring(tree, encoding="unicode")[:22]
    '<div><h3>Title</h3><p>'
    """
    for link in list(tree.iter("a")):
        if any(inner.tag in BLOCK_TAGS for inner in link.iterdescendants()) and (
            len(link.text_content().split()) >= CARD_WORDS
        ):
            link.drop_tag()


def _widen_to_whole_words(element: etree._Element) -> None:
    """Move the letters of a word cut by the start or end of ``element`` into it."""
    # The text around the element is read first: it seldom runs into the element, and the
    # element's own text costs more to read.
    tail = element.tail or ""
    after = _WORD_START.match(tail)
    if after is not None and _WORD_END.search(element.text_content()):
        element.tail = tail[after.end() :]
        if len(element):
            element[-1].tail = (element[-1].tail or "") + after.group()
        else:
            element.text = (element.text or "") + after.group()
    previous, parent = element.getprevious(), element.getparent()
    before = (
        previous.tail if previous is not None else parent.text if parent is not None else ""
    ) or ""
    cut = _WORD_END.search(before) if before[-1:].isalnum() else None
    if cut is None or not _WORD_START.match(element.text_content()):
        return
    if previous is not None:
        previous.tail = before[: cut.start()]
    elif parent is not None:
        parent.text = before[: cut.start()]
    element.text = cut.group() + (element.text or "")


def _in_list_item(element: etree._Element) -> bool:
    return next(element.iterancestors("li"), None) is not None


def _space_around(block: etree._Element) -> None:
    previous = block.getprevious()
    if previous is not None:
        previous.tail = _end_spaced(previous.tail)
    else:
        parent = block.getparent()
        if parent is not None:
            parent.text = _end_spaced(parent.text)
    if not block.tail or not block.tail[0].isspace():
        block.tail = " " + (block.tail or "")


def _end_spaced(text: str | None) -> str:
    return text if text and text[-1].isspace() else (text or "") + " "
