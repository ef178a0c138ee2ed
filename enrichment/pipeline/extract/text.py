"""Text helpers of extraction: markdown flattened to the words a reader sees, the plain
HTML-to-text pass, the page's title and headline, and "is there any content at all".

    >>> markdown_to_text("## 1. Open [the docs](https://x.test/d)\\n\\n- `pip install`")
    '1. Open the docs\\n\\npip install'
    >>> has_content("Basil | Green Thumb", "Basil | Green Thumb")
    False
"""

from __future__ import annotations

import re
from itertools import islice

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.decode import strip_invisible
from enrichment.pipeline.extract.parse import clean_tree

# Fewer words than this once the title is removed means "nothing readable" (title-only pages,
# cookie walls, JS shells whose body is "Loading...").
MIN_CONTENT_WORDS = 3
_HEADLINE_SEARCH_LINES = 6
_BLOCK_TAGS = frozenset(
    ("address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption")
    + ("figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li")
    + ("main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul")
)
# Markdown markup flattened to the words a reader sees, each with a marker the text must
# hold for the pattern to match at all: images, links (to their labels), code fences,
# inline code, list and heading markers. List markers go before heading markers: a heading
# that starts with a number ("## 1. Open strong") is a heading, and its number is its text.
_MARKDOWN_MARKUP = (
    ("![", re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),
    ("](", re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),
    ("```", re.compile(r"^```[^\n]*\n?", re.MULTILINE), ""),
    ("`", re.compile(r"`([^`]*)`"), r"\1"),
    ("", re.compile(r"^[ \t]*(?:[-*+]|\d+\.)[ \t]+", re.MULTILINE), ""),
    ("#", re.compile(r"^#{1,6}[ \t]+", re.MULTILINE), ""),
)
_WORD = re.compile(r"\w+")
_SPACE_RUNS = re.compile(r"[ \t]+")
_SPACED_BREAK = re.compile(r" *\n *")
_BLANK_RUNS = re.compile(r"\n{3,}")


def markdown_to_text(markdown: str) -> str:
    """Flatten markdown (notes A6): drop images, links to labels, fences, heading/list markers."""
    text = markdown
    for marker, pattern, replacement in _MARKDOWN_MARKUP:
        if marker in text:  # a text without the marker has nothing the pattern would change
            text = pattern.sub(replacement, text)
    return normalise_whitespace(text)


def plain_text(html: str) -> str:
    tree = clean_tree(html)
    if tree is None:
        return ""
    body = tree.find("body")
    root = body if body is not None else tree
    parts: list[str] = []
    _collect_text(root, parts)
    return normalise_whitespace("".join(parts))


def _collect_text(element: etree._Element, parts: list[str]) -> None:
    block = isinstance(element.tag, str) and element.tag.lower() in _BLOCK_TAGS
    if block:
        parts.append("\n")
    if element.text and isinstance(element.tag, str):
        parts.append(element.text)
    for child in element:
        _collect_text(child, parts)
        if child.tail:
            parts.append(child.tail)
    if block:
        parts.append("\n")


def page_title(html: str) -> str | None:
    match = re.search(r"<title[^>]*>(.*?)</title\s*>", html, re.IGNORECASE | re.DOTALL)
    if not match:
        return None
    title = lxml.html.fromstring(f"<p>{match.group(1)}</p>").text_content()
    title = " ".join(strip_invisible(title).split())
    return title or None


def page_headline(tree: lxml.html.HtmlElement | None) -> str | None:
    """The text of the page's only visible ``<h1>``; None when there is none or several."""
    headings = tree.findall(".//h1") if tree is not None else []
    if len(headings) != 1:
        return None
    return " ".join(strip_invisible(headings[0].text_content()).split()) or None


def drop_headline(text: str, headline: str | None) -> str:
    """Remove the first of the top lines that says exactly the headline (any markup)."""
    if not headline:
        return text
    wanted = words_of(headline)
    lines = text.split("\n")
    for index, line in enumerate(lines[:_HEADLINE_SEARCH_LINES]):
        if line.strip() and words_of(line) == wanted:
            return "\n".join(lines[:index] + lines[index + 1 :]).strip()
    return text


def words_of(text: str, limit: int | None = None) -> list[str]:
    """The lower-cased words of ``text``; only the first ``limit`` when a count is given.

    A test of "at least so many words" reads that many, not a whole page of text.
    """
    if limit is None:
        return _WORD.findall(text.lower())
    return [word.group() for word in islice(_WORD.finditer(text.lower()), limit)]


def has_content(text: str, title: str | None, minimum: int = MIN_CONTENT_WORDS) -> bool:
    title_words = words_of(title) if title else []
    words = words_of(text, len(title_words) + minimum)
    # The title repeated once (as a heading) is not content.
    if title_words and words[: len(title_words)] == title_words:
        words = words[len(title_words) :]
    return len(words) >= minimum


def normalise_whitespace(text: str) -> str:
    text = text.replace("\r", "").replace("\xa0", " ")
    # Each pass runs only on a text it would change (most lines of an extraction are clean
    # already): a lone space, a bare line break, one blank line are left as they are anyway.
    if "\t" in text or "  " in text:
        text = _SPACE_RUNS.sub(" ", text)
    if " \n" in text or "\n " in text:
        text = _SPACED_BREAK.sub("\n", text)
    if "\n\n\n" in text:
        text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip()
