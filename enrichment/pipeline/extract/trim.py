"""Cut what an extractor kept after an article's body: teasers, comments, forms, promotions.

An article's body is one element holding its paragraphs side by side. Extractors often keep
the blocks that follow it as well — related-post teasers with their excerpts, a comment
thread, a call to action — because those blocks hold sentences too. Read on the page's DOM,
the body is the element with the most words in its own ``<p>`` children; when no other
element comes close (the article is not split in parts, the page is not a row of posts),
trailing lines of the extracted text that are not in that element come after the article and
are dropped.

    >>> body = "<p>" + "the article says this " * 5 + "</p>"
    >>> page = f"<div>{body * 3}</div><aside><p>{'read this other story ' * 3}</p></aside>"
    >>> tree = lxml.html.fromstring(page)
    >>> text = ("the article says this " * 5 + "\\n") * 3 + "read this other story " * 3
    >>> trim_after_body(text, article_body(tree)).count("\\n")
    2
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import lxml.html

from enrichment.pipeline.extract.choose import shingles

# A paragraph of at least this many words is running text (not a caption or a button).
PARAGRAPH_WORDS = 10
# Another element holding this share of the body's paragraph words means the article is in
# several parts (or the page is a row of posts): there is no single body to cut after.
RIVAL_SHARE = 0.3
# A line sharing less than this share of its 4-grams with the body is not part of it.
IN_BODY_SHARE = 0.5
# Trailing text that is mostly list items is a list the page is about, not teasers.
LIST_SHARE = 0.5
# Trailing text of more than this many times the words of what would stay is the rest of the
# text, not what follows it: the body element held only its first part.
MAX_CUT_RATIO = 3.0


@dataclass(frozen=True)
class ArticleBody:
    """The shingles of the body element's text, and the text of the list items outside it.

    ``words`` counts the words in the body's own paragraphs. ``lists`` (the items'
    shingles) is read only when a cut is weighed, so it is made then, once.
    """

    text: frozenset[tuple[str, ...]]
    items: str = ""
    words: int = 0

    @cached_property
    def lists(self) -> frozenset[tuple[str, ...]]:
        return shingles(self.items)


@dataclass(frozen=True)
class BodyElement:
    """The element holding the most paragraph words (``words``), and the other elements
    holding paragraphs that come close to it (``rivals``: the text is in several parts)."""

    element: lxml.html.HtmlElement
    words: int
    rivals: tuple[lxml.html.HtmlElement, ...] = ()


def body_element(tree: lxml.html.HtmlElement) -> BodyElement | None:
    """The element with the most words in its own paragraphs, and those that come close."""
    words: dict[lxml.html.HtmlElement, int] = {}
    for paragraph in tree.iter("p"):
        count = len(paragraph.text_content().split())
        parent = paragraph.getparent()
        if count >= PARAGRAPH_WORDS and parent is not None:
            words[parent] = words.get(parent, 0) + count
    if not words:
        return None
    body = max(words, key=words.__getitem__)
    inside = set(body.iter())
    rivals = tuple(
        element
        for element, count in words.items()
        if element not in inside and count >= RIVAL_SHARE * words[body]
    )
    return BodyElement(body, words[body], rivals)


def article_body(
    tree: lxml.html.HtmlElement, found: BodyElement | None = None
) -> ArticleBody | None:
    """The article's body (``body_element``, or ``found`` when read already) as shingles;
    None when no element holds paragraphs or another one comes close."""
    found = found or body_element(tree)
    if found is None or found.rivals:
        return None
    inside = set(found.element.iter())
    items = " \n ".join(item.text_content() for item in tree.iter("li") if item not in inside)
    return ArticleBody(shingles(found.element.text_content()), items, found.words)


def trim_after_body(
    text: str, body: ArticleBody | None, *, flatten: Callable[[str], str] = str
) -> str:
    """``text`` without its trailing lines that are not in the article's body.

    ``flatten`` turns a line into the words a reader sees (markdown links to their labels).
    Nothing is cut when no line is in the body, when what would go is mostly list items, or
    when it holds more than MAX_CUT_RATIO times the words of what would stay: teasers, a call
    to action or a sign-off are short beside an article, but a long text built of many small
    blocks (a roundup of sixty brands, a page of short sections) can hold its paragraphs in
    several elements, none of them a rival, and the body element found is then only its
    opening part.
    """
    if body is None:
        return text
    lines = text.split("\n")
    end = len(lines)
    while end and not _in_body(flatten(lines[end - 1]), body.text):
        end -= 1
    if end == 0 or end == len(lines):
        return text
    kept, rest = "\n".join(lines[:end]), flatten("\n".join(lines[end:]))
    cut = shingles(rest)
    if cut and len(cut & body.lists) >= LIST_SHARE * len(cut):
        return text
    if len(rest.split()) > MAX_CUT_RATIO * len(flatten(kept).split()):
        return text
    return kept.rstrip()


def _in_body(line: str, body: frozenset[tuple[str, ...]]) -> bool:
    wanted = shingles(line)
    if not wanted:
        return False
    return len(wanted & body) >= IN_BODY_SHARE * len(wanted)
