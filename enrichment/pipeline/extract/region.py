"""The page's declared main region, with its own chrome removed, as text or markdown.

Most pages mark where their content is: a single ``<main>`` (or ``role="main"``) element, or
a single top-level ``<article>``. Inside it, navigation, sidebars, footers, forms and buttons
are chrome whatever the page; everything else is kept in document order. That keeps what
block-scoring extractors cut on documentation, listings, collections and service pages: every
item of a grid, every section of a long page, code blocks and tables (in markdown, a link
around blocks, a teaser card, links its first line rather than running the card's heading
and summary together in one label). A region that holds less than a fifth of the page's
words is a teaser box, not the main content; a page without a region gives no candidate (its
body is mostly header, banners and footer).

    >>> import lxml.html
    >>> page = lxml.html.document_fromstring(
    ...     "<body><nav>Home</nav><main><h2>Install</h2><pre>pip install x</pre>"
    ...     "<aside>Ads</aside></main></body>")
    >>> print(region_candidate(page, mode="markdown"))
    ## Install
    <BLANKLINE>
    ```
    pip install x
    ```
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Literal
from urllib.parse import urljoin

import lxml.html
from lxml import etree

RegionMode = Literal["markdown", "text"]

# A region must hold at least this share of the body's words to stand for the page.
MIN_REGION_SHARE = 0.2
CHROME_TAGS = ("nav", "aside", "footer", "form", "button", "select", "label", "dialog")
# Nesting past this depth is read as plain text rather than walked (bounded recursion).
MAX_DEPTH = 300
# Elements never read for content: page chrome, scripts, templates, images drawn in code.
SKIPPED = frozenset(CHROME_TAGS) | {"script", "style", "template", "noscript", "svg", "head"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset(
    ("address", "article", "blockquote", "center", "dd", "details", "div", "dl", "dt", "figure")
    + ("figcaption", "header", "hgroup", "li", "main", "ol", "p", "section", "summary", "ul")
    + ("table", "tbody", "thead", "tfoot", "tr", "caption", "fieldset", "picture", "body")
)
# The marker of an item of an unordered list (markdown); an ordered list's items are numbered.
BULLET = "- "
# An ordered list's ``start`` or an item's ``value``: a whole number of at most this many digits.
MAX_NUMBER_DIGITS = 9
_WHOLE_NUMBER = re.compile(rf"-?[0-9]{{1,{MAX_NUMBER_DIGITS}}}")
_MAINS = etree.XPath("//main | //*[@role='main']")
_ARTICLES = etree.XPath("//article[not(ancestor::article)]")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
# Spaces around a line break, and the blank lines a run of them leaves.
_SPACED_BREAKS = re.compile(r" *\n[ \n]*")
_PROSE_SPACES = re.compile(r"\s+")
_EMPHASIS = {"b": "**", "strong": "**", "i": "*", "em": "*"}
# A ``*``, or an ``_`` not between two letters or digits: either could open emphasis.
_EMPHASIS_CHARACTER = re.compile(r"\*|(?<![^\W_])_|_(?![^\W_])")


def main_region(tree: lxml.html.HtmlElement) -> tuple[etree._Element | None, str]:
    """The element standing for the main content and how it was found (main/article/body)."""
    body = tree.find("body")
    if body is None:
        return None, "none"
    # The count of the page's words reads the whole page: it is made only when there is a
    # single region to weigh against it.
    total: int | None = None
    mains = _outermost(_MAINS(tree))
    if len(mains) == 1:
        total = element_words(body)
        if element_words(mains[0]) >= MIN_REGION_SHARE * total:
            return mains[0], "main"
    articles = _ARTICLES(tree)
    if len(articles) == 1:
        total = element_words(body) if total is None else total
        if element_words(articles[0]) >= MIN_REGION_SHARE * total:
            return articles[0], "article"
    return body, "body"


def region_candidate(
    tree: lxml.html.HtmlElement, *, mode: RegionMode, base_url: str | None = None
) -> str:
    """Text (or markdown) of the main region without its navigation, sidebars and forms."""
    region, how = main_region(tree)
    if region is None or how == "body":
        return ""
    writer = BlockWriter(markdown=mode == "markdown", base_url=base_url)
    writer.block(region)
    return writer.result()


def write_blocks(
    elements: list[etree._Element],
    *,
    mode: RegionMode,
    base_url: str | None = None,
    skipped: Collection[etree._Element] = (),
) -> str:
    """The contents of ``elements`` in turn, written as prose, without ``skipped`` blocks.

    Unlike the region's text, markdown keeps bold and italics and escapes the characters
    that would start emphasis, and a line break inside a paragraph reads as a space. Each
    element's own tag is not weighed: a page-wide ``<form>`` holding the article is read.

        >>> import lxml.html
        >>> block = lxml.html.fromstring("<div><p>Set <b>LANG </b>to _C_ first.</p></div>")
        >>> print(write_blocks([block], mode="markdown"))
        Set **LANG** to \\_C\\_ first.
    """
    writer = BlockWriter(markdown=mode == "markdown", base_url=base_url, prose=True)
    writer.skipped = frozenset(skipped)
    for element in elements:
        writer.flush()
        writer.mixed(element)
        writer.flush()
    return writer.result()


def _list_start(element: etree._Element) -> int:
    """The number of an ordered list's first item: its ``start``, else 1 (as a browser)."""
    return _number(element.get("start"), 1)


def _item_number(item: etree._Element, number: int) -> int:
    """An item's number: its own ``value`` when it sets one (the next go on from it)."""
    return _number(item.get("value"), number)


def _number(value: str | None, default: int) -> int:
    """An attribute's whole number, or ``default`` when it holds none.

    Only ASCII digits count, and at most MAX_NUMBER_DIGITS of them: ``int`` reads other
    scripts' digits but not superscripts (``"²"`` is a digit to ``str.isdigit``), and
    refuses thousands of digits; a page's attribute must not fail the extraction.
    """
    match = _WHOLE_NUMBER.fullmatch((value or "").strip())
    return int(match.group()) if match else default


def _outermost(elements: list[etree._Element]) -> list[etree._Element]:
    chosen = set(elements)
    return [
        element
        for element in elements
        if not any(ancestor in chosen for ancestor in element.iterancestors())
    ]


def _holds_blocks(element: etree._Element) -> bool:
    return any(
        isinstance(child.tag, str)
        and (
            child.tag.lower() in _BLOCKS
            or child.tag.lower() in _HEADINGS
            or child.tag.lower() in ("pre", "table", "br", "hr")
        )
        for child in element.iterdescendants()
    )


def element_words(element: etree._Element) -> int:
    """The words an element holds (a comment or processing instruction holds none)."""
    return len(element.text_content().split()) if isinstance(element.tag, str) else 0


def words_on_page(tree: lxml.html.HtmlElement) -> int:
    """The words of the page's ``<body>`` (of the whole tree when it has none)."""
    body = tree.find("body")
    return element_words(body if body is not None else tree)


class BlockWriter:
    """Walks a subtree once and writes blocks (paragraphs, headings, items, code, rows).

    Shared by the main region and the repeated records (``extract/records.py``), which
    write with ``fields``: sibling elements that touch are written a space apart. An ordered
    list's items are numbered as a browser numbers them (from its ``start``, or an item's
    ``value``); the text written as prose (an article's, ``write_blocks``) keeps those
    numbers, which the text refers to ("repeat step 3").
    """

    def __init__(
        self, *, markdown: bool, base_url: str | None, prose: bool = False, fields: bool = False
    ) -> None:
        self.markdown = markdown
        self.base_url = base_url
        self.prose = prose
        # A record's fields: sibling elements that touch are apart (see ``apart``).
        self.fields = fields
        self.touching = False
        self.skipped: frozenset[etree._Element] = frozenset()
        self.blocks: list[str] = []
        self.line: list[str] = []
        self.prefix = ""
        self.list_depth = 0
        self.depth = 0
        self.link: str | None = None  # target of a block link, waiting for its first line

    def result(self) -> str:
        self.flush()
        return "\n\n".join(self.blocks) if self.markdown else "\n".join(self.blocks)

    def flush(self) -> None:
        """End the current line; a list marker waits for the item's first words."""
        if self.prose:  # a browser's reading: any run of white space is one space
            text = _PROSE_SPACES.sub(" ", "".join(self.line)).strip()
        else:  # a line break inside a text node stays a break, without the indentation
            text = _SPACED_BREAKS.sub("\n", _SPACES.sub(" ", "".join(self.line))).strip()
        self.line = []
        if text:
            if self.link is not None:
                text = f"[{text}]({self.link})"
                self.link = None
            self.blocks.append(self.prefix + text)
            self.prefix = ""

    def block(self, element: etree._Element) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if not tag or tag in SKIPPED or element in self.skipped:
            return
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                # Deeper than any real layout (the HTML parser itself stops near 256):
                # the rest of the subtree is read as one run of text.
                self.line.append(" " + element.text_content() + " ")
            else:
                self._block(element, tag)
        finally:
            self.depth -= 1

    def _block(self, element: etree._Element, tag: str) -> None:
        if tag in _HEADINGS:
            self.flush()
            self.prefix = "#" * _HEADINGS[tag] + " " if self.markdown else ""
            self.inline_children(element)
            self.flush()
            self.prefix = ""
        elif tag == "pre":
            self.flush()
            code = element.text_content().strip("\n")
            if code.strip():
                self.blocks.append(f"```\n{code}\n```" if self.markdown else code)
        elif tag == "table":
            self.flush()
            self.table(element)
        elif tag in ("ul", "ol"):
            self.flush()
            self.list_depth += 1
            number = _list_start(element)
            for child in element:
                if isinstance(child.tag, str) and child.tag.lower() == "li":
                    number = _item_number(child, number)
                    self.item(child, f"{number}. " if tag == "ol" else BULLET)
                    number += 1
                else:
                    self.block(child)
            self.list_depth -= 1
            self.flush()
        elif tag in ("br", "hr"):
            self.flush()
        elif tag in _BLOCKS:
            self.flush()
            self.mixed(element)
            self.flush()
        else:
            self.inline(element)

    def item(self, element: etree._Element, marker: str) -> None:
        """A list item behind its marker: in markdown always; in prose text, an ordered
        list's number, which a browser shows and the text refers to ("repeat step 3")."""
        self.flush()
        if self.markdown:
            self.prefix = "  " * (self.list_depth - 1) + marker
        else:
            self.prefix = marker if self.prose and marker != BULLET else ""
        self.mixed(element)
        self.flush()
        self.prefix = ""

    def mixed(self, element: etree._Element) -> None:
        """Children of a block: inline runs join into one line, nested blocks break it."""
        if element.text:
            self.words(element.text)
        touching = False
        for child in element:
            if touching and self.fields:
                self.touching = True
            self.block(child)
            self.touching = False
            if child.tail:
                self.words(child.tail)
            touching = not child.tail

    def inline_children(self, element: etree._Element) -> None:
        if element.text:
            self.words(element.text)
        touching = False
        for child in element:
            if touching and self.fields:
                self.touching = True
            self.inline(child)
            self.touching = False
            if child.tail:
                self.words(child.tail)
            touching = not child.tail

    def field_text(self, element: etree._Element) -> str:
        """A record's inline element read as text, its touching fields apart; else ``""``."""
        if not self.fields:
            return ""
        reader = BlockWriter(markdown=False, base_url=None, fields=True)
        reader.inline_children(element)
        reader.flush()
        return " ".join(reader.blocks)

    def apart(self, text: str) -> str:
        """``text`` with a space before it when it starts an element touching the previous one.

        A record's fields are sibling elements with nothing between them (a brand and a
        name, a year, a running time and a rating: ``<span>2026</span><span>1h 54m</span>``)
        that the page's style sets apart; run together they make one word ("20261h").
        """
        if self.touching and text[:1].isalnum() and self.line and self.line[-1][-1:].isalnum():
            text = " " + text
        self.touching = False
        return text

    def words(self, text: str) -> None:
        """Text of the page; in prose markdown, a ``*`` or an ``_`` that could start emphasis
        is escaped (not an underscore between letters: ``AWS_REGION``)."""
        if self.prose and self.markdown and ("*" in text or "_" in text):
            text = _EMPHASIS_CHARACTER.sub(r"\\\g<0>", text)
        self.line.append(self.apart(text) if self.touching else text)

    def emphasis(self, element: etree._Element, marker: str) -> None:
        """Bold or italic text between markers, its edge spaces outside them (``**a** b``)."""
        start = len(self.line)
        self.inline_children(element)
        inner = "".join(self.line[start:])
        del self.line[start:]
        words = inner.strip()
        if not words or "*" in words.replace("\\*", ""):
            self.line.append(inner)  # nested emphasis stays as it is written inside
            return
        before = inner[: len(inner) - len(inner.lstrip())]
        after = inner[len(inner.rstrip()) :]
        self.line.append(f"{before}{marker}{words}{marker}{after}")

    def inline(self, element: etree._Element) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if not tag or tag in SKIPPED or element in self.skipped:
            return
        if tag in _BLOCKS or tag in _HEADINGS or tag in ("pre", "table", "br", "hr"):
            self.block(element)
            return
        if self.markdown and tag == "a" and element.get("href") and self.link is None:
            label = " ".join((self.field_text(element) or element.text_content()).split())
            href = element.get("href", "").strip()
            if self.prose:
                label = _EMPHASIS_CHARACTER.sub(r"\\\g<0>", label)
            if label and not href.startswith(("#", "javascript:")):
                target = urljoin(self.base_url, href) if self.base_url else href
                if _holds_blocks(element):
                    self.block_link(element, target)
                elif self.prose:
                    # A space at the link's edge is a space between words ("my sandals").
                    raw = element.text_content()
                    before = " " if raw[:1].isspace() else ""
                    after = " " if raw[-1:].isspace() else ""
                    self.line.append(f"{before}[{label}]({target}){after}")
                else:
                    space = " " if self.touching and self.apart(label) != label else ""
                    self.line.append(f"{space}[{label}]({target})")
                return
        if self.markdown and tag == "code":
            code = element.text_content()
            if code.strip():
                self.line.append(f"`{code}`")
            return
        if self.depth > MAX_DEPTH:
            self.line.append(element.text_content())
            return
        self.depth += 1
        try:
            marker = _EMPHASIS.get(tag) if self.prose and self.markdown else None
            if marker:
                self.emphasis(element, marker)
            else:
                self.inline_children(element)
        finally:
            self.depth -= 1

    def block_link(self, element: etree._Element, target: str) -> None:
        """A link around blocks (a card: heading, summary): its blocks, the first one linked.

        One label made of the whole card would run its heading into its summary
        ("Reshaping Education in 2025In 2025, ...").
        """
        self.flush()
        self.link = target
        self.depth += 1
        try:
            self.inline_children(element)
        finally:
            self.depth -= 1
        self.flush()
        self.link = None

    def table(self, table: etree._Element) -> None:
        rows = []
        for row in table.iter("tr"):
            cells = [
                " ".join(_cell_text(cell).split())
                for cell in row
                if isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th")
            ]
            if any(cells):
                rows.append(cells)
        if not rows:
            return
        if not self.markdown:
            self.blocks.extend(" | ".join(cell for cell in row if cell) for row in rows)
            return
        width = max(len(row) for row in rows)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
        lines.insert(1, "|" + " --- |" * width)
        self.blocks.append("\n".join(lines))


# Inside a table's cell, elements a browser lays out apart from the words around them.
_APART_IN_CELL = frozenset(_HEADINGS) | {"p", "br", "hr", "pre", "blockquote"}


def _cell_text(cell: etree._Element) -> str:
    """A table cell's text, with a space around its headings, paragraphs and line breaks.

    A layout table's cell holds blocks (``<h2>Corn plant</h2><p>Dracaena spp.<br>Low
    light</p>``) that a browser shows on lines of their own; read as one string their words
    run together ("Corn plantDracaena spp.Low light").

        >>> " ".join(_cell_text(lxml.html.fromstring(
        ...     "<td><h2>Corn plant</h2><p>Dracaena<br>Low <b>light</b></p></td>")).split())
        'Corn plant Dracaena Low light'
    """
    parts: list[str] = []
    pending: list[tuple[etree._Element, bool]] = [(cell, False)]
    while pending:
        element, closing = pending.pop()
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        apart = tag in _APART_IN_CELL and element is not cell
        if closing:
            if apart:
                parts.append(" ")
            if element.tail and element is not cell:
                parts.append(element.tail)
            continue
        if apart:
            parts.append(" ")
        if tag and element.text:
            parts.append(element.text)
        pending.append((element, True))
        pending.extend((child, False) for child in reversed(element))
    return "".join(parts)
