"""What kind of page this is, from the structured data a page declares about itself.

Sites describe their pages for search engines and link previews: schema.org types in
``<script type="application/ld+json">`` blocks and the Open Graph ``og:type``. Those are
generic signals (no host or URL is looked at) and cheap to read from the raw HTML, so the
extraction strategy can be picked before the tree is cleaned:

- ``forum``: a discussion (``DiscussionForumPosting``, ``QAPage``, ``Question``) — every post
  and answer is content; the questions of an ``FAQPage`` make a page a discussion only when
  it declares no product or article (they are then a section of that page);
- ``product``: a product page (``og:type`` product, ``Product`` / ``ProductGroup`` in JSON-LD
  or microdata, or a price in the page's meta tags: ``product:price:amount``);
- ``article``: an article or blog post (``og:type`` article, any ``*Article`` or
  ``BlogPosting``);
- ``other``: nothing declared (documentation, listings, service and collection pages).

    >>> page_kind('<meta property="og:type" content="article">')
    'article'
    >>> page_kind('<script type="application/ld+json">{"@type": "QAPage"}</script>')
    'forum'
    >>> page_kind("<p>hello</p>")
    'other'
    >>> page_kind('<script type="application/ld+json">{"@type": ["FAQPage", "Article"],'
    ...     ' "mainEntity": [{"@type": "Question", "name": "Why?"}]}</script>')
    'article'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Literal

PageKind = Literal["article", "forum", "product", "other"]

# Tags are matched with bounded attribute runs so a hostile page (thousands of unclosed
# tags) costs linear time, not a backtracking blow-up.
_SCRIPT_OPEN = re.compile(r"<script\b([^>]{0,500})>", re.IGNORECASE)
_SCRIPT_CLOSE = re.compile(r"</script\s*>", re.IGNORECASE)
_LD_JSON_TYPE = re.compile(r"""type\s*=\s*["']?application/ld\+json""", re.IGNORECASE)
_META = re.compile(r"<meta\b([^>]{0,1000})>", re.IGNORECASE)
_OG_TYPE_PROPERTY = re.compile(r"""property\s*=\s*["']og:type["']""", re.IGNORECASE)
_PRICE_PROPERTY = re.compile(
    r"""property\s*=\s*["'](?:product|og):price:amount["']""", re.IGNORECASE
)
# schema.org microdata: ``<div itemscope itemtype="https://schema.org/Product">``.
_MICRODATA_PRODUCT = re.compile(
    r"""itemtype\s*=\s*["']?https?://schema\.org/Product(?:Group)?["'\s>]""", re.IGNORECASE
)
_CONTENT = re.compile(r"""content\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
# Structured data past this many characters is not read (a page could ship megabytes).
MAX_JSON_LD_CHARS = 200_000
_MAX_DEPTH = 4
_NESTED_KEYS = ("@graph", "mainEntity", "itemListElement")

FORUM_TYPES = frozenset({"discussionforumposting", "qapage", "question", "socialmediaposting"})
PRODUCT_TYPES = frozenset({"product", "productgroup"})
ARTICLE_TYPES = frozenset(
    {"article", "newsarticle", "blogposting", "techarticle", "scholarlyarticle", "report"}
    | {"reportagenewsarticle", "analysisnewsarticle", "opinionnewsarticle", "liveblogposting"}
)


def page_kind(html: str) -> PageKind:
    """The kind the page declares; a discussion wins over a product over an article."""
    types = schema_types(html)
    og_type = _og_type(html)
    forum = types & FORUM_TYPES
    # The questions of an FAQ (an ``FAQPage``'s entries) are no discussion on a page that
    # declares itself a product or an article: they are a section of it.
    faq = "faqpage" in types and forum == {"question"}
    if forum and not faq:
        return "forum"
    if og_type.startswith("product") or types & PRODUCT_TYPES or _declares_product(html):
        return "product"
    if og_type == "article" or types & ARTICLE_TYPES:
        return "article"
    return "forum" if faq else "other"


def schema_types(html: str) -> frozenset[str]:
    """Lower-cased ``@type`` values of the page's JSON-LD nodes (unreadable blocks skipped)."""
    return frozenset(kind for _, kinds in _typed_nodes(html) for kind in kinds)


def product_description(html: str) -> str | None:
    """The ``description`` a JSON-LD Product (or ProductGroup) declares, if any.

    >>> product_description('<script type="application/ld+json">'
    ...     '{"@type": "Product", "name": "Lamp", "description": "A brass lamp."}</script>')
    'A brass lamp.'
    """
    for node, kinds in _typed_nodes(html):
        description = node.get("description")
        if kinds & PRODUCT_TYPES and isinstance(description, str) and description.strip():
            return description
    return None


def _typed_nodes(html: str) -> Iterator[tuple[dict[str, object], frozenset[str]]]:
    """Each JSON-LD node of the page with its lower-cased ``@type`` values."""
    for block in _json_ld_blocks(html):
        try:
            data = json.loads(block)
        except (ValueError, RecursionError):
            continue
        for node in _nodes(data, 0):
            kinds = node.get("@type")
            yield (
                node,
                frozenset(
                    kind.strip().lower()
                    for kind in (kinds if isinstance(kinds, list) else [kinds])
                    if isinstance(kind, str)
                ),
            )


def _nodes(data: object, depth: int) -> Iterator[dict[str, object]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, list):
        for item in data:
            yield from _nodes(item, depth + 1)
    elif isinstance(data, dict):
        yield data
        for key in _NESTED_KEYS:
            if key in data:
                yield from _nodes(data[key], depth + 1)


def _json_ld_blocks(html: str) -> Iterator[str]:
    """The text of each ``application/ld+json`` script, within MAX_JSON_LD_CHARS in all."""
    budget = MAX_JSON_LD_CHARS
    position = 0
    while True:
        opening = _SCRIPT_OPEN.search(html, position)
        if opening is None:
            return
        closing = _SCRIPT_CLOSE.search(html, opening.end())
        if closing is None:
            return  # an unclosed script runs to the end of the page
        position = closing.end()
        if not _LD_JSON_TYPE.search(opening.group(1)):
            continue
        block = html[opening.end() : closing.start()].strip()
        budget -= len(block)
        if budget < 0:
            return
        yield block


def _declares_product(html: str) -> bool:
    """A price in the meta tags or a microdata Product: a shop's page for one product.

    Shops often tag a product page ``og:type`` article or website (their theme's default)
    while still declaring its price for link previews.
    """
    # Substring checks first: the regular expressions below would scan every page whole.
    if ("schema.org/Product" in html or "schema.org/product" in html) and (
        _MICRODATA_PRODUCT.search(html)
    ):
        return True
    if "price:amount" not in html:
        return False
    return any(_PRICE_PROPERTY.search(match.group(1)) for match in _META.finditer(html))


def _og_type(html: str) -> str:
    for match in _META.finditer(html):
        attributes = match.group(1)
        if _OG_TYPE_PROPERTY.search(attributes):
            content = _CONTENT.search(attributes)
            return content.group(1).strip().lower() if content else ""
    return ""
