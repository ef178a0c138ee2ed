"""The two candidate extractions of one cleaned HTML page.

``trafilatura_candidate`` keeps trafilatura's default precision/recall balance (its
``favor_recall`` mode pulls in navigation and related-article teasers on real pages); reader
comments under an article stay out, the replies of a discussion page are kept.
``resiliparse_candidate`` is resiliparse's main-content text: it drops boilerplate by block
(navigation, footers, sidebars) rather than by picking one subtree, so pages whose content is
spread over many sibling blocks (threads, listings, product pages) keep more of it. It drops
what is marked folded (``aria-expanded="false"``) as it would a folded menu; headings so
marked and toggles of text panels (an FAQ's questions) are the page's text and are unfolded
first (``unfold_text_toggles``, on the tree before it is written out). Every extractor drops
``<button>`` elements as controls; a button in or around a heading (an accordion's section
title, an FAQ question) is the heading's text and is read as such
(``unwrap_heading_buttons``), unless the panel it opens is empty.

    >>> page = "<html><body><nav>Home | About</nav><main><p>" + "word " * 40 + "</p></main></body></html>"
    >>> resiliparse_candidate(page).split()[:3]
    ['word', 'word', 'word']
"""

from __future__ import annotations

import re
from configparser import ConfigParser
from typing import Literal

import lxml.html
import trafilatura
from lxml import etree
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree
from trafilatura.settings import use_config

from enrichment.pipeline.extract.region import element_words

CandidateMode = Literal["markdown", "text"]
# A toggle's panel of at least this many words, less than this share of them in links, is
# text (an answer), not a folded menu.
PANEL_WORDS = 15
PANEL_LINKED_SHARE = 0.5
# Headings marked folded, or holding an element so marked (an accordion's toggle link).
_HEADING_TOGGLES = etree.XPath(
    "//*[@aria-expanded][{}]".format(
        " or ".join(f"self::h{n} or ancestor::h{n}" for n in range(1, 7))
    )
)
_PANEL_TOGGLES = etree.XPath("//*[@aria-expanded][@aria-controls]")
_BULLET = re.compile(r"^[ \t]*\u2022 ", re.MULTILINE)
# A line of at most this many words that occurs this often is a per-item control.
CHROME_MAX_WORDS = 4
CHROME_MIN_REPEATS = 3


# A button holding a heading with at most this many words is an accordion's heading; a
# longer one wraps part of the page (a script's click target), not a heading.
HEADING_BUTTON_WORDS = 30
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_HEADING_BUTTONS = etree.XPath(
    "//button[ancestor::h1 or ancestor::h2 or ancestor::h3 or ancestor::h4 or ancestor::h5"
    " or ancestor::h6 or descendant::h1 or descendant::h2 or descendant::h3"
    " or descendant::h4 or descendant::h5 or descendant::h6]"
)
_WITH_ID = etree.XPath("//*[@id]")


def _trafilatura_config() -> ConfigParser:
    config = use_config()
    # trafilatura's own timeout uses SIGALRM, which only works in the main thread.
    config.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")
    return config


_CONFIG = _trafilatura_config()


def trafilatura_candidate(
    tree: lxml.html.HtmlElement,
    *,
    mode: CandidateMode,
    base_url: str | None,
    comments: bool = False,
) -> str:
    """trafilatura with its default balance; markdown keeps links, formatting and tables.

    ``comments`` keeps what trafilatura takes for a comment section: on a discussion page
    the replies are the content.
    """
    markdown = mode == "markdown"
    result = trafilatura.extract(
        tree,
        url=base_url,
        output_format="markdown" if markdown else "txt",
        include_comments=comments,
        include_tables=True,
        include_links=markdown,
        include_formatting=markdown,
        include_images=False,
        deduplicate=False,
        config=_CONFIG,
    )
    return result or ""


def resiliparse_candidate(html: str, *, mode: CandidateMode = "text") -> str:
    """resiliparse's main-content text; markdown mode marks the list items it keeps ``- ``.

    Its main-content pass drops most lists (it takes them for navigation); listings are
    left to trafilatura, which keeps them. It also drops what is marked folded; a page's
    folded text is unfolded first (``unfold_text_toggles``, on the page's tree).
    """
    text = extract_plain_text(
        HTMLTree.parse(html),
        main_content=True,
        alt_texts=False,
        links=False,
        form_fields=False,
        noscript=False,
        list_bullets=mode == "markdown",
    )
    if mode == "markdown":
        text = _BULLET.sub("- ", text)
    return drop_repeated_chrome(str(text))


def unfold_text_toggles(tree: lxml.html.HtmlElement) -> None:
    """Take the folded state off the toggles of FAQ questions and other text panels.

    FAQ and accordion widgets write each question as a heading, a link in one or a button
    marked ``aria-expanded="false"`` until its answer is opened. resiliparse drops every
    element so marked, as it does a folded menu, and loses the questions while keeping their
    answers. A heading is the page's own text, folded or not; so is a toggle whose panel
    (``aria-controls``) is running text rather than a menu's links. Read on the lxml tree
    before it is written out for resiliparse: walking resiliparse's own node lists costs
    time in proportion to their length at every step (seconds for a panel of 800 links).

        >>> page = lxml.html.fromstring(
        ...     '<div><h3 aria-expanded="false">Fees?</h3>'
        ...     '<a aria-controls="menu" aria-expanded="false">Shop</a>'
        ...     '<ul id="menu"><li><a href="/a">All departments</a></li></ul></div>')
        >>> unfold_text_toggles(page)
        >>> [element.tag for element in page.iter() if element.get("aria-expanded")]
        ['a']
    """
    for folded in _HEADING_TOGGLES(tree):
        del folded.attrib["aria-expanded"]
    toggles = _PANEL_TOGGLES(tree)
    if not toggles:
        return
    panels = _panels_by_id(tree)
    for toggle in toggles:
        names = (toggle.get("aria-controls") or "").split()
        panel = panels.get(names[0]) if names else None
        if panel is not None and _is_prose(panel):
            del toggle.attrib["aria-expanded"]


def _panels_by_id(tree: lxml.html.HtmlElement) -> dict[str, etree._Element]:
    """Each id's first element, as a browser finds the panel a toggle names."""
    panels: dict[str, etree._Element] = {}
    for element in _WITH_ID(tree):
        panels.setdefault(str(element.get("id")), element)
    return panels


def unwrap_heading_buttons(tree: lxml.html.HtmlElement) -> None:
    """Read the buttons of accordion and tab headings as the headings' text.

    The accordion pattern (WAI-ARIA) writes each section's heading as a ``<button>`` inside
    an ``<h3>`` (or a button around the heading) that folds its panel; landing and service
    pages title their feature and step blocks so, FAQ widgets their questions. Every
    extractor drops buttons as controls ("Add to cart", "Submit"), and the headings went
    with them while their panels stayed. A button in or around a heading is renamed a
    ``<span>``: its words are the heading's. One around a long stretch of the page is left,
    and so is a toggle whose panel (``aria-controls``) is missing or empty.

        >>> page = lxml.html.fromstring(
        ...     '<div><h3><button aria-controls="p1">Fast builds</button></h3>'
        ...     '<div id="p1">Cached steps.</div>'
        ...     '<h3><button aria-controls="p2">Pricing</button></h3><div id="p2"></div></div>')
        >>> unwrap_heading_buttons(page)
        >>> [element.tag for element in page.iter("span", "button")]
        ['span', 'button']
    """
    buttons = _HEADING_BUTTONS(tree)
    if not buttons:
        return
    # Ids looked up once per page, only when a toggle names a panel.
    panels: dict[str, etree._Element] | None = None
    for button in buttons:
        inside = any(ancestor.tag in _HEADING_TAGS for ancestor in button.iterancestors())
        if not inside and element_words(button) > HEADING_BUTTON_WORDS:
            continue
        names = (button.get("aria-controls") or "").split()
        if names and panels is None:
            panels = _panels_by_id(tree)
        if not names or _holds_text(panels, names[0]):
            button.tag = "span"


def _holds_text(panels: dict[str, etree._Element] | None, name: str) -> bool:
    """Whether the panel of this id is on the page and holds text.

    Some accordion components write a closed panel empty and fill it on a click: its
    toggle is then a heading over nothing, on the page as in a reader's text.
    """
    panel = (panels or {}).get(name)
    return panel is not None and bool(panel.text_content().strip())


def _is_prose(panel: etree._Element) -> bool:
    """Whether a panel holds running text: PANEL_WORDS words or more, mostly not links."""
    words = element_words(panel)
    linked = sum(element_words(link) for link in panel.iter("a"))
    return words >= PANEL_WORDS and linked < PANEL_LINKED_SHARE * words


def drop_repeated_chrome(text: str) -> str:
    r"""Drop short lines that repeat three times or more: per-item buttons, not content.

    Block-level extraction keeps the controls under every post or item ("Quote Like
    Report", "Add to cart", "Read more"); a line that short recurring that often says nothing
    about the page. Longer repeated lines (a quoted paragraph) stay.

        >>> drop_repeated_chrome("post one\nReply\npost two\nReply\npost three\nReply")
        'post one\npost two\npost three'
    """
    lines = text.split("\n")
    counts: dict[str, int] = {}
    for line in lines:
        key = line.strip().lower()
        if key and len(key.split()) <= CHROME_MAX_WORDS:
            counts[key] = counts.get(key, 0) + 1
    repeated = {key for key, count in counts.items() if count >= CHROME_MIN_REPEATS}
    if not repeated:
        return text
    return "\n".join(line for line in lines if line.strip().lower() not in repeated)
