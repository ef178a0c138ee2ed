"""The page's repeated records: many same-shaped siblings, written one block per record.

Listings, search results, product grids and collection pages are a container of sibling
elements of one structure (same tag, same first class), each holding a title and a few lines.
trafilatura keeps one or a few of them (or a table of them run together), resiliparse drops
them as link-dense navigation. This candidate finds the container whose same-shaped children
(at least MIN_RECORDS, of MIN_RECORD_WORDS words on average: not a menu) hold the most words,
and writes the page's ``<h1>`` with the blocks between it and the container (its intro; a menu
of categories or filters there leads elsewhere and is left out), then the container child by
child, each record one block: its title line (a heading in markdown, links kept), then its
other lines. What says the same words in nearly every record as a control of its own (a rating
widget, "Rate this", an in-page "Back to top" link) is the records' template, not their data,
and is left out too. A record's fields are often sibling elements with nothing between them (a
brand and a name, a year and a running time), set apart by the page's style: they are written a
space apart, not run into one word. A list split into sections (awards by category, results by
day) is one container per section, beside the others or under same-shaped wrappers: the page
writes every section in order, but only the records found (the largest section's) are weighed
(``items``); section titles outside the containers are not written. ``choose.records_are_content``
decides, on the records alone, when this replaces the chosen text; the words before the page's
heading (its header) tell a chosen text that kept the whole page (``choose.records_replace``).

    >>> cards = "".join(
    ...     f'<li class="card"><a href="/p/{n}">Lamp {n}</a><p>Brass desk lamp, warm light, ${n}9</p></li>'
    ...     for n in range(1, 5))
    >>> page = lxml.html.document_fromstring(
    ...     f"<body><nav><a href='/'>Home</a></nav><h1>Lamps</h1><ul>{cards}</ul></body>")
    >>> print(records_candidate(page, mode="markdown").page.split("\\n\\n", 2)[:2])
    ['# Lamps', '### [Lamp 1](/p/1)\\nBrass desk lamp, warm light, $19']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.region import SKIPPED, BlockWriter, element_words
from enrichment.pipeline.extract.trim import BodyElement

RecordsMode = Literal["markdown", "text"]

# A container needs at least this many same-shaped children holding text...
MIN_RECORDS = 4
# ...averaging at least this many words each (menu entries and tag clouds hold one to three).
MIN_RECORD_WORDS = 8
# At most this many blocks between the page's heading and the records are its introduction.
INTRO_BLOCKS = 6
# On a page that declares itself an article, records not inside its body element holding at
# least LISTING_SHARE times the body's paragraph words...
LISTING_SHARE = 5
# ...each of at most SHORT_RECORD_WORDS words on average (a title and a few lines: an
# article's sections, also same-shaped siblings, are longer) make the page a listing.
SHORT_RECORD_WORDS = 60
# ...at least this share of them linking to the item they list (an article's sections and a
# page of questions and answers do not)...
LINKED_SHARE = 0.8
# ...and none of it in the page's chrome (a menu in the site header is not a list of items).
_CHROME = frozenset(("aside", "footer", "header", "nav"))
# Same-shaped sections are looked for beside the container and beside the wrapper holding it.
SECTION_LEVELS = 2
# Class names holding a digit number one record among its siblings ("post-123", "item-4").
_DIGITS = re.compile(r"\d")
# A control saying the same words (at least TEMPLATE_WORDS of them) in at least TEMPLATE_SHARE
# of the records is part of the records' template, not of any one record ("Rate this book",
# "Back to top", a rating widget's "1 of 5 stars"). A record's own fields differ from record to
# record; a one-word label ("Winner", "by") may be the page's wording and is kept.
TEMPLATE_SHARE = 0.8
TEMPLATE_WORDS = 2
# A control is a link that leads nowhere (it acts on the page) or a block of its own; an inline
# leaf (a date, a subject shared by every result) is a field that happens to repeat.
_TEMPLATE_BLOCKS = frozenset(("div", "p", "li", "dd", "dt"))
_IN_PAGE = ("#", "javascript:")
# A block before the records of at least MENU_LINKS links, holding (almost) nothing but their
# words, is a menu of categories or filters, not what the page says about its list.
MENU_LINKS = 12
MENU_LINK_SHARE = 0.9
# Elements whose text a browser does not show as words.
_UNSHOWN = frozenset(("script", "style", "template", "noscript", "svg", "head"))
# A first line already marked up (heading, list item, table row, code) is not re-marked.
_MARKED = re.compile(r"^(?:#|[-*+] |\d+\. |\||```|\[!)")


@dataclass(frozen=True)
class Records:
    """The container's same-shaped children and the words they hold."""

    container: etree._Element
    members: tuple[etree._Element, ...]
    words: int


@dataclass(frozen=True)
class RecordsCandidate:
    """``items``: the records alone, to weigh against another text; ``page``: what is shown.

    ``header``: the words before the page's heading (its site header and menus), to tell
    an extraction that kept the whole page.
    """

    items: str
    page: str
    header: str = ""


def records_candidate(
    tree: lxml.html.HtmlElement,
    *,
    mode: RecordsMode,
    base_url: str | None = None,
    records: Records | None = None,
) -> RecordsCandidate | None:
    """The records, and the page made of its heading, intro and the records' container.

    The container is written child by child, so the headings and lines between records
    (a date above a group of results) stay where they are; each record is one block.
    """
    records = records or find_records(tree)
    if records is None:
        return None
    markdown = mode == "markdown"
    lead: list[str] = []
    header = ""
    heading = _heading_before(tree, records.container)
    if heading is not None:
        header = _text_before(tree, heading)
        lead = [
            _write(block, markdown=markdown, base_url=base_url)
            for block in [heading, *_intro(heading, records.container)]
        ]
    items: list[str] = []
    blocks: list[str] = []
    members = set(records.members)
    template = _template(records.members)
    key = _member_key(records.members[0])
    for section in _sections(records.container):
        children = [
            child for child in section if isinstance(child.tag, str) and child.tag not in SKIPPED
        ]
        # The other sections' records are not weighed (``items``): only shown.
        others = section is not records.container
        record_shaped = {child for child in children if _member_key(child) == key}
        sibling_template = _template(tuple(record_shaped)) if others else template
        for child in children:
            written = _write(child, markdown=markdown, base_url=base_url, skipped=sibling_template)
            if not written:
                continue
            if child in members or (others and child in record_shaped):
                if markdown and not _MARKED.match(written):
                    written = "### " + written
                if not others:
                    items.append(written)
            blocks.append(written.replace("\n\n", "\n") if markdown else written)
    page = "\n\n".join(part for part in lead + blocks if part)
    return RecordsCandidate("\n\n".join(items), page, header)


def find_records(
    tree: lxml.html.HtmlElement, *, outside: etree._Element | None = None
) -> Records | None:
    """The group of same-shaped siblings holding the most words (None when there is none).

    One walk over the body (chrome and scripts skipped) counts each element's words from its
    children's counts, so no subtree is read twice. A page's class names repeat on every
    record, so each distinct one is normalised once. Records inside ``outside`` are not
    looked for: its words are counted at once, its subtree not walked.
    """
    body = tree.find("body")
    if body is None:
        return None
    order: list[etree._Element] = []
    stack = [body]
    while stack:
        element = stack.pop()
        order.append(element)
        if element is outside:
            continue
        stack.extend(
            child for child in element if isinstance(child.tag, str) and child.tag not in SKIPPED
        )
    words: dict[etree._Element, int] = {}
    best: Records | None = None
    # Reversed, the walk reaches every element after all of its descendants.
    for element in reversed(order):
        if outside is not None and element is outside:
            words[element] = len(outside.text_content().split())
            continue
        own = len(element.text.split()) if element.text else 0
        # Only an element with enough children can hold records: the others just add up.
        grouping = len(element) >= MIN_RECORDS
        groups: dict[tuple[str, str], list[etree._Element]] = {}
        for child in element:
            if child.tail:
                own += len(child.tail.split())
            counted = words.get(child, 0)
            if counted:
                own += counted
                if grouping:
                    key = (child.tag, _class_key(child.get("class") or ""))
                    groups.setdefault(key, []).append(child)
        words[element] = own
        for members in groups.values():
            if len(members) < MIN_RECORDS:
                continue
            total = sum(words[member] for member in members)
            if total >= MIN_RECORD_WORDS * len(members) and (best is None or total > best.words):
                best = Records(element, tuple(members), total)
    return best


def outweigh_body(records: Records, body: etree._Element, body_words: int) -> bool:
    """Whether short linked records, not inside the body element, hold several times its words.

    A page that declares itself an article may be a list of posts or products with a short
    blurb (the one paragraph block the body element found): the records then are its content.

        >>> cards = "".join(f'<li><a href="/{n}">Trip {n}</a> two nights by the lake, from '
        ...                 f'the old station, ferry included</li>' for n in range(8))
        >>> page = lxml.html.document_fromstring(
        ...     f"<body><p id=blurb>Our trips this summer.</p><ul>{cards}</ul></body>")
        >>> blurb = page.get_element_by_id("blurb")
        >>> outweigh_body(find_records(page), blurb, 4), outweigh_body(find_records(page), blurb, 40)
        (True, False)
    """
    if records.words < LISTING_SHARE * body_words:
        return False
    around = {records.container, *records.container.iterancestors()}
    return body not in around and _listed_items(records, around)


def _listed_items(records: Records, around: set[etree._Element]) -> bool:
    """Whether the records are a list of items: short, linked, not in the page's chrome.

    ``around`` is the container with its ancestors.
    """
    members = records.members
    if records.words > SHORT_RECORD_WORDS * len(members):
        return False
    if any(node.tag in _CHROME for node in around):
        return False
    linked = sum(1 for member in members if next(member.iter("a"), None) is not None)
    return linked >= LINKED_SHARE * len(members)


def listing_records(
    tree: lxml.html.HtmlElement, body: BodyElement | None, page_words: int
) -> Records | None:
    """The records of a page that declares itself an article but is a list, else None.

    Records outweighing the body hold LISTING_SHARE times its words: a page with fewer
    words than that (``page_words``, counted by the caller) has none, and its records are
    not looked for (the walk costs more than the count, and most articles stop here).
    A page with no body element at all (no block of paragraphs: a shop's or a catalogue's
    page declared an article by its platform) is a list when its records are short linked
    items outside the chrome.
    """
    if body is None:
        records = find_records(tree)
        if records is None:
            return None
        around = {records.container, *records.container.iterancestors()}
        return records if _listed_items(records, around) else None
    if page_words < LISTING_SHARE * body.words:
        return None
    records = find_records(tree, outside=body.element)
    if records is None or not outweigh_body(records, body.element, body.words):
        return None
    return records


def _member_key(element: etree._Element) -> tuple[str, str]:
    """The shape records share: their tag and first class (as ``find_records`` groups them)."""
    return (element.tag, _class_key(element.get("class") or ""))


def _sections(container: etree._Element) -> list[etree._Element]:
    """The container and the same-shaped containers beside it: one list split into sections.

    A list of awards by category, of results by day, is often one container per section,
    each under its own wrapper; the records found are those of the largest. The sections are
    the container's siblings of its shape, or its wrapper's (the wrapper holding only it and
    a section title), in document order; none beside it leaves the container alone. A shape
    must have a class name to count: a bare ``<div>`` beside a bare ``<div>`` is no sign of
    one list (a page's header, content and footer are built so too).
    """
    node: etree._Element | None = container
    for _ in range(SECTION_LEVELS):
        if node is None or node.getparent() is None:
            break
        parent = node.getparent()
        key = _member_key(node)
        if not key[1]:
            break  # a shape without a class name: the page's other blocks look the same
        shaped = [
            sibling
            for sibling in parent
            if isinstance(sibling.tag, str) and _member_key(sibling) == key
        ]
        if len(shaped) > 1:
            if node is container:
                return shaped
            return [_inner(sibling, container) for sibling in shaped]
        node = parent
    return [container]


def _inner(wrapper: etree._Element, container: etree._Element) -> etree._Element:
    """Within one section's wrapper, the container of its records: shaped as ``container``."""
    if wrapper is container or container in set(wrapper.iterdescendants()):
        return container
    key = _member_key(container)
    return next(
        (
            node
            for node in wrapper.iterdescendants()
            if isinstance(node.tag, str) and _member_key(node) == key
        ),
        wrapper,
    )


@lru_cache(maxsize=1024)
def _class_key(classes: str) -> str:
    """The element's first class, skipping those that number it among its siblings.

    The first class names the component ("card", "product", "grid__item"); the classes
    after it often tell records apart (a shop's category, stock or sale flags, a grid's
    "first" and "last" of a row), and would split one list into many small groups.
    """
    for name in classes.split():
        if not _DIGITS.search(name):
            return name
    return ""


def _heading_before(
    tree: lxml.html.HtmlElement, container: etree._Element
) -> etree._Element | None:
    """The page's first ``<h1>`` when it comes before the container (a title, not a card's)."""
    heading = next(tree.iter("h1"), None)
    if heading is None:
        return None
    for element in tree.iter():  # document order: whichever comes first
        if element is heading:
            return heading
        if element is container:
            return None
    return None


def _text_before(tree: lxml.html.HtmlElement, heading: etree._Element) -> str:
    """The words the page shows before ``heading``: its site header, menus and banners.

    Read in document order up to the heading; scripts, styles and drawings show no words
    (their tails are text of their parents).
    """
    body = tree.find("body")
    if body is None:
        return ""
    parts: list[str] = []
    walk = etree.iterwalk(body, events=("start", "end"))
    for event, element in walk:
        if element is heading:
            break
        if event == "end":
            if element.tail and element is not body:
                parts.append(element.tail)
        elif not isinstance(element.tag, str) or element.tag in _UNSHOWN:
            walk.skip_subtree()
        elif element.text:
            parts.append(element.text)
    return " ".join(" ".join(parts).split())


def _intro(heading: etree._Element, container: etree._Element) -> list[etree._Element]:
    """The blocks between the heading and the container: what the page says about its list.

    Read from the heading onwards, sibling after sibling, climbing to the parent's siblings
    at the end of each level, until the block holding the container; at most INTRO_BLOCKS.
    """
    holding = set(container.iterancestors()) | {container}
    blocks: list[etree._Element] = []
    node: etree._Element | None = heading
    while node is not None and node.tag != "body" and len(blocks) < INTRO_BLOCKS:
        for sibling in node.itersiblings():
            if sibling in holding or len(blocks) >= INTRO_BLOCKS:
                return blocks
            readable = isinstance(sibling.tag, str) and sibling.tag not in SKIPPED
            if readable and not _menu(sibling):
                blocks.append(sibling)
        node = node.getparent()
    return blocks


def _menu(block: etree._Element) -> bool:
    """Whether an intro block is a menu: MENU_LINKS links or more, and (almost) only their words.

    A list of categories or filters before the records leads elsewhere; a few links (the
    dates of a news archive, the pages of a result list) are part of what the page shows.
    """
    links = block.findall(".//a")
    if len(links) < MENU_LINKS:
        return False
    linked = sum(element_words(link) for link in links)
    return linked >= MENU_LINK_SHARE * element_words(block)


def _template(members: tuple[etree._Element, ...]) -> frozenset[etree._Element]:
    """The leaves that say the same words in (nearly) every record: its controls, not its data.

    Only leaves are read (an element with no child elements: a button's or a link's label),
    so the cost is one pass over the records' elements.
    """
    holders: dict[str, list[etree._Element]] = {}
    counts: dict[str, int] = {}
    for member in members:
        seen: set[str] = set()
        for leaf in member.iterdescendants():
            if len(leaf) or not leaf.text or not _control(leaf):
                continue
            words = leaf.text.split()
            if len(words) < TEMPLATE_WORDS:
                continue
            text = " ".join(words)
            holders.setdefault(text, []).append(leaf)
            if text not in seen:
                seen.add(text)
                counts[text] = counts.get(text, 0) + 1
    wanted = TEMPLATE_SHARE * len(members)
    return frozenset(
        leaf for text, count in counts.items() if count >= wanted for leaf in holders[text]
    )


def _control(leaf: etree._Element) -> bool:
    """Whether a leaf may be a control: a link acting on the page, or a block of its own."""
    if leaf.tag == "a":
        return (leaf.get("href") or "#").strip().startswith(_IN_PAGE)
    return leaf.tag in _TEMPLATE_BLOCKS


def _write(
    element: etree._Element,
    *,
    markdown: bool,
    base_url: str | None,
    skipped: frozenset[etree._Element] = frozenset(),
) -> str:
    """One record's lines; a table row's cells each on their own line, not run together."""
    writer = BlockWriter(markdown=markdown, base_url=base_url, fields=True)
    writer.skipped = skipped
    if element.tag == "tr":
        for cell in element:
            if isinstance(cell.tag, str) and cell.tag not in SKIPPED:
                writer.mixed(cell)
                writer.flush()
    else:
        writer.block(element)
    return writer.result()
