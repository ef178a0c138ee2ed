"""Turn a fetched body (HTML, JSON, markdown, other text) into readable text.

An HTML page goes through these steps; each names the module that holds its rules.

- **Cleaning.** Hidden elements are removed before any extractor reads the page
  (``extract/hidden.py``), so text a browser would never show cannot smuggle instructions in.
  What a browser does show stays: folded panels, streamed segments, and the headings an
  accordion writes as buttons (``extract/candidates.py``). Around a discussion's posts, the
  figures printed beside each author (join date, post count), the signatures under each post
  and the comments a question-and-answer page hangs under its question and answers go
  (``extract/posts.py``). On a page that declares itself a product, lists of customer reviews
  (dated, rated posts) go (``extract/reviews.py``). Small forms asking for an email address
  (sign-ups, sign-ins, lead and contact forms) go with their heading and pitch: their labels
  and drop-down options are no part of what the page says (``extract/forms.py``).
- **Plain articles.** A plainly built article (one element holding its paragraphs, close to its
  headline, a quarter or more of the page's text) is read from that element
  (``extract/article.py``).
- **Candidates.** Other pages are read by trafilatura, resiliparse and, on pages that declare
  no kind or a discussion, the declared main region; navigation, sidebars and footers are
  dropped. The text kept is chosen from the page's declared kind, its headline, a product's
  declared description and how much the candidates agree (``extract/choose.py``). When, in
  markdown mode, the two extractors disagree (or agree only loosely) or resiliparse's text
  looks like a superset of trafilatura's, the choice is made on trafilatura's text output, as
  in text mode: links can lead its markdown to another block, or stop it short of the end of
  the one it took. When that choice is trafilatura's and its markdown holds little of its
  text output, the text output is kept (without links: the markdown is another block than the
  one chosen).
- **Records.** On a page that is not an article, the page's repeated records (a listing's
  items, a grid's products: ``extract/records.py``) replace that text when it is only a piece
  of them, or the whole page (the site's header before the page's heading, and the records with
  it); not on a product page whose own text was found (the product rule of
  ``choose.choose_for_kind``, or the text that stops where another goes on after it), where
  same-shaped siblings are the product's variations, accessories and other products, whose
  cards repeat the start of its description. So they do
  on a page that declares itself an article but is a list (short linked records holding several
  times the words of its body, a blurb), which is then not read as an article.
- **Repairs.** Blocks trafilatura pruned inside the text it kept are put back from
  resiliparse's text (``extract/union.py``). On an article, trailing lines from after the
  article's body element are cut (``extract/trim.py``), and so on a page that declares no
  kind (or a discussion) but is built like one: a single ``<h1>`` and one element holding the
  page's running text. Not when those lines hold several times the words before them: the
  body element was then only the opening of a text built of many small blocks.
  On a page read by the extractors, a run of short lines (the site's menus) kept above
  the page's headline goes, and so does such a run the text opens with when the headline
  is no line of it (``extract/header.py``).
- **Fallback.** When all find nothing, a plain HTML-to-text pass runs on the cleaned page. A
  result that is empty or only repeats the title counts as no content.

    >>> extract_content(b'{"a":[1]}', "application/json").text
    '{\\n  "a": [\\n    1\\n  ]\\n}'
    >>> extract_content(b"\\x89PNG", "image/png")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ExtractionError: unsupported content type image/png
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import lxml.html

from enrichment.pipeline.extract.article import MIN_BODY_WORDS, article_text, needs_proof
from enrichment.pipeline.extract.candidates import (
    drop_repeated_chrome,
    resiliparse_candidate,
    trafilatura_candidate,
    unfold_text_toggles,
    unwrap_heading_buttons,
)
from enrichment.pipeline.extract.choose import (
    TRAILING,
    Choice,
    choose_for_kind,
    records_replace,
    shingles,
)
from enrichment.pipeline.extract.decode import decode_body, media_type_of, strip_invisible
from enrichment.pipeline.extract.fragments import (
    cut_runs,
    holds_any_lead,
    read_as_text,
    text_runs,
)
from enrichment.pipeline.extract.header import cut_leading_menu, cut_site_header
from enrichment.pipeline.extract.markdown import (
    prepare_for_markdown,
    unescape_word_underscores,
    unwrap_card_links,
)
from enrichment.pipeline.extract.parse import PARSER, clean_tree, drop_empty_links
from enrichment.pipeline.extract.posts import drop_post_extras
from enrichment.pipeline.extract.records import listing_records, records_candidate
from enrichment.pipeline.extract.region import region_candidate, words_on_page
from enrichment.pipeline.extract.reviews import drop_review_lists
from enrichment.pipeline.extract.signals import PageKind, page_kind, product_description
from enrichment.pipeline.extract.spacing import (
    SPACE_MARK,
    mark_superscripts,
    protect_inline_spaces,
    restore_inline_spaces,
)
from enrichment.pipeline.extract.text import (
    MIN_CONTENT_WORDS,
    drop_headline,
    has_content,
    markdown_to_text,
    page_headline,
    page_title,
    plain_text,
    words_of,
)
from enrichment.pipeline.extract.trim import article_body, body_element, trim_after_body
from enrichment.pipeline.extract.union import fill_gaps

ExtractMode = Literal["markdown", "text"]
Extractor = Literal[
    "article",
    "trafilatura",
    "resiliparse",
    "region",
    "records",
    "raw-html",
    "cf-markdown",
    "json",
    "raw",
]

NO_READABLE_CONTENT = "no readable content"
MIN_FALLBACK_WORDS = 2
# Main content shorter than this (in words) is retried with <noscript> content shown.
NOSCRIPT_RETRY_WORDS = 50
# On a page that does not declare itself an article, a body with fewer paragraph words than
# this is not enough to call the page an article.
UNDECLARED_ARTICLE_WORDS = 100
# In markdown mode, trafilatura's markdown holding less than this share of the 4-grams of its
# text output took another block than that output (see ``_choose``).
MARKDOWN_HELD_SHARE = 0.7
# ...and the extractors agree only loosely when resiliparse holds less than this share of the
# markdown's 4-grams: the choice is then made again on the text output too.
LOOSE_AGREEMENT_SHARE = 0.7
# An undeclared article read from several parts stands when resiliparse's text holds this
# share of its 4-grams (``_agrees``).
PROVEN_SHARE = 0.9
# A cleaned product page holding less than this share of the 4-grams of the description it
# declares hid its details (see ``extract_html``).
DESCRIPTION_SHOWN_SHARE = 0.5
_TEXT_TYPES = (
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/x-ndjson",
)


class ExtractionError(Exception):
    """Extraction failed; ``reason`` is short and stable (e.g. ``no readable content``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ExtractedContent:
    text: str
    title: str | None
    extractor: Extractor
    content_type: str  # media type without parameters, lower-cased


def extract_content(
    body: bytes,
    content_type: str | None,
    *,
    mode: ExtractMode = "markdown",
    base_url: str | None = None,
) -> ExtractedContent:
    """Dispatch on the media type; raises ExtractionError for binary or empty content."""
    media_type = media_type_of(content_type) or _sniff_media_type(body)
    if media_type == "text/markdown":
        text = strip_invisible(decode_body(body, content_type))
        if mode == "text":
            text = markdown_to_text(text)
        return ExtractedContent(text.strip(), None, "cf-markdown", media_type)
    if media_type in ("text/html", "application/xhtml+xml"):
        return extract_html(body, content_type, mode=mode, base_url=base_url)
    if media_type == "application/json" or media_type.endswith("+json"):
        return _extract_json(body, content_type, media_type)
    if media_type.startswith("text/") or media_type in _TEXT_TYPES or media_type.endswith("+xml"):
        text = strip_invisible(decode_body(body, content_type)).strip()
        return ExtractedContent(text, None, "raw", media_type)
    raise ExtractionError(f"unsupported content type {media_type}")


def extract_html(
    body: bytes | str,
    content_type: str | None = None,
    *,
    mode: ExtractMode = "markdown",
    base_url: str | None = None,
) -> ExtractedContent:
    """Main content of an HTML page: the chosen extractor, a plain text pass as the fallback."""
    html = body if isinstance(body, str) else decode_body(body, content_type, html=True)
    kind = page_kind(html)
    # Discussion pages hang icons, avatars and empty placeholders marked hidden in every
    # post; removing those changes which subtree trafilatura takes for the thread.
    keep_textless = kind == "forum"
    description = product_description(html) if kind == "product" else None
    tree = clean_tree(html, keep_textless_hidden=keep_textless)
    declared = description if _lacks(tree, description) else None
    if declared:
        # The product's details are hidden until a script shows them: the hidden block
        # holding the description the page declares is the page's own text.
        tree = clean_tree(html, keep_textless_hidden=keep_textless, declared=declared)
    title = page_title(html)
    heading = page_headline(tree)  # read before trafilatura prunes the tree
    headline = heading or title
    hints = _Hints(kind, heading, description)
    extractor, text = _main_content(tree, hints, mode=mode, base_url=base_url)
    few_words = len(words_of(text, NOSCRIPT_RETRY_WORDS)) < NOSCRIPT_RETRY_WORDS
    if few_words and "<noscript" in html.lower():
        # A page whose content is rendered by script often serves the same content inside
        # <noscript> for clients without JavaScript (which a fetcher is): read that view.
        shown = clean_tree(
            html, keep_noscript=True, keep_textless_hidden=keep_textless, declared=declared
        )
        retried = _main_content(shown, hints, mode=mode, base_url=base_url)
        if len(words_of(retried[1])) > len(words_of(text)):
            extractor, text = retried
    if not has_content(text, title):
        extractor = "raw-html"
        text = plain_text(html)
    # The headline is reported as the title (and printed first by compose_page_text), so a
    # copy of it near the top of the body is dropped rather than repeated.
    text = drop_headline(strip_invisible(text), headline)
    # The plain pass keeps a tiny page ("<p>Hello there</p>") that trafilatura rejects; a
    # lone word ("Loading...") is still a placeholder, not content.
    minimum = MIN_FALLBACK_WORDS if extractor == "raw-html" else MIN_CONTENT_WORDS
    if not has_content(text, title, minimum):
        raise ExtractionError(NO_READABLE_CONTENT)
    return ExtractedContent(text.strip(), headline, extractor, "text/html")


def _lacks(tree: lxml.html.HtmlElement | None, description: str | None) -> bool:
    """Whether the cleaned page holds less than DESCRIPTION_SHOWN_SHARE of ``description``.

    >>> _lacks(lxml.html.fromstring("<p>a brass lamp with a linen shade</p>"),
    ...     "A brass lamp with a linen shade.")
    False
    """
    wanted = shingles(description or "")
    if tree is None or not wanted:
        return False
    held = len(wanted & shingles(tree.text_content()))
    return held < DESCRIPTION_SHOWN_SHARE * len(wanted)


def _extract_json(body: bytes, content_type: str | None, media_type: str) -> ExtractedContent:
    text = strip_invisible(decode_body(body, content_type))
    try:
        parsed = json.loads(text)
    except ValueError:
        return ExtractedContent(text.strip(), None, "raw", media_type)
    pretty = json.dumps(parsed, indent=2, ensure_ascii=False)
    return ExtractedContent(pretty, None, "json", media_type)


def _sniff_media_type(body: bytes) -> str:
    head = body[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if b"\x00" in body[:1024]:
        return "application/octet-stream"
    try:
        body[:4096].decode("utf-8")
    except UnicodeDecodeError as error:
        # A multi-byte sequence cut at the sample edge is still text.
        if error.start < 4090:
            return "application/octet-stream"
    return "text/plain"


@dataclass(frozen=True)
class _Hints:
    """What the page says about itself, read once: its kind, headline, product description."""

    kind: PageKind
    headline: str | None
    description: str | None


def _main_content(
    tree: lxml.html.HtmlElement | None,
    hints: _Hints,
    *,
    mode: ExtractMode,
    base_url: str | None,
) -> tuple[Extractor, str]:
    if tree is None:
        return "trafilatura", ""
    kind = hints.kind
    _prepare(tree, kind, mode=mode)
    # The element holding the page's running text, if one does with no rival block of
    # paragraphs. Not on a product page, whose facts are spread over many small blocks.
    found = body_element(tree) if kind != "product" else None
    page_words = None
    listing = None
    if kind == "article":
        # A page that declares itself an article may be a list (of posts, products) with
        # a short blurb: its records are then weighed as on any listing, and its blurb is
        # not the article the fast path below would read. A page with no body element has
        # no blurb for records to outweigh: its short linked records are kept in reserve
        # for when the extractors find next to nothing (a shop's grid they drop whole).
        page_words = words_on_page(tree)
        listing = listing_records(tree, found, page_words)
    if kind != "forum" and listing is None:
        # A plainly built article is its body element's text: the extractors below would
        # only find it again, at twenty times the cost (``extract/article.py``). Not on a
        # discussion, whose replies are content as much as the first post.
        declared = kind == "article"
        # An undeclared text in several parts, or a declared one in the page's chrome, must
        # prove itself against resiliparse's text (``_agrees``), read from the page as it is
        # before the fast path writes it out.
        spare = copy.deepcopy(tree) if needs_proof(found, declared=declared) else None
        plain = article_text(
            tree,
            found,
            mode=mode,
            base_url=base_url,
            declared=declared,
            min_words=MIN_BODY_WORDS if declared else UNDECLARED_ARTICLE_WORDS,
            page_words=page_words,
        )
        if plain is not None and (spare is None or _agrees(plain, spare, mode=mode)):
            return "article", plain
        if plain is not None and spare is not None:
            # The fast path wrote on the tree: the extractors read the spare copy.
            tree, found = spare, body_element(spare)
    body = None
    # On a listing, the body element is its blurb: the records after it are not cut.
    if (
        found is not None
        and listing is None
        and (kind == "article" or (hints.headline and found.words >= UNDECLARED_ARTICLE_WORDS))
    ):
        # A page that declares no kind (or a discussion) with one <h1> and one element
        # holding its running text, no rival block of paragraphs, is an article by its
        # structure. Pages of several parts (most docs and service pages, threads) have
        # several <h1> or rival blocks and are left whole.
        body = article_body(tree, found)
    # Read before trafilatura runs: it prunes the tree it is given in place. Folded text is
    # unfolded for resiliparse, which reads this copy (no other extractor reads the mark).
    unfold_text_toggles(tree)
    cleaned_html = lxml.html.tostring(tree, encoding="unicode")
    region = ""
    records = None
    if kind != "article":
        region = drop_repeated_chrome(region_candidate(tree, mode=mode, base_url=base_url))
        # Also read before trafilatura prunes the tree; written now, used when they win.
        records = records_candidate(tree, mode=mode, base_url=base_url)
    elif listing is not None:
        records = records_candidate(tree, mode=mode, base_url=base_url, records=listing)
    runs = text_runs(tree) if mode == "markdown" else ()
    # A page that shows the mark itself keeps its own (see ``extract/spacing.py``).
    spaces = SPACE_MARK not in cleaned_html
    first = _trafilatura(tree, kind, mode=mode, base_url=base_url, spaces=spaces)
    # The words a reader sees of trafilatura's text (markdown flattened), made once.
    first_seen = markdown_to_text(first) if mode == "markdown" else first
    cut = cut_runs(runs, first_seen) if runs else frozenset()
    if cut:
        # trafilatura's markdown kept pieces of divs of running text and lost the rest
        # (``extract/fragments.py``): read them again as its text output does, whole or not
        # at all, on a fresh tree (the first run pruned this one).
        retry = lxml.html.document_fromstring(cleaned_html, parser=PARSER)
        read_as_text(retry, cut)
        again = _trafilatura(retry, kind, mode=mode, base_url=base_url, spaces=spaces)
        again_seen = markdown_to_text(again)
        if holds_any_lead(cut, again_seen):
            first, first_seen = again, again_seen
    second = resiliparse_candidate(cleaned_html, mode=mode)
    # Decided on the words a reader sees: link targets and markup do not count as text.
    seen = (first_seen, second, region)
    if mode == "markdown":
        seen = (first_seen, markdown_to_text(second), markdown_to_text(region))
    choice, plain = _choose(seen, hints, mode=mode, cleaned_html=cleaned_html, spaces=spaces)
    if plain is not None:
        # The choice fell on trafilatura's text output, and its markdown holds little of it
        # (it took another block): the text output is what was chosen, kept as it is.
        first = plain
        seen = (plain, *seen[1:])
    source = choice.source
    flatten = markdown_to_text if mode == "markdown" else str
    # A product's own text, found (the product rule, or the text another only goes on after),
    # is no piece of a listing: its page's records are other products (variations,
    # accessories), not what it stands for.
    if records is not None and choice.reason not in ("product description", TRAILING):
        # The extractors kept a piece of a listing (``choose.records_are_content``). On a
        # page declared an article that is a list, they may have kept another part of the
        # page (its blurb and what surrounds it): records holding more words stand for it.
        # One with no body element stands for them only when they kept next to nothing
        # (``choose.records_replace``).
        chosen = seen[("trafilatura", "resiliparse", "region").index(source)]
        items = flatten(records.items)
        if records_replace(
            chosen,
            items,
            listing=listing is not None,
            bare=listing is not None and found is None,
            header=records.header,
            blocks=seen[1],
        ):
            return "records", records.page
    if source == "region":
        return "region", _without_menus(region, hints.headline, flatten=flatten)
    if source == "resiliparse":
        kept = trim_after_body(second, body, flatten=flatten)
        return "resiliparse", _without_menus(kept, hints.headline, flatten=flatten)
    if kind != "forum":
        # Blocks trafilatura pruned inside the text it kept, put back from resiliparse's
        # text. Not on a discussion: what it leaves out between posts is who wrote them,
        # which the chooser has weighed already (``choose._with_post_headers``).
        first = fill_gaps(first, second, seen=seen[0]) or first
    kept = trim_after_body(first, body, flatten=flatten)
    return "trafilatura", _without_menus(kept, hints.headline, flatten=flatten)


def _without_menus(text: str, headline: str | None, *, flatten: Callable[[str], str]) -> str:
    """``text`` without the site's menus it opens with (``extract/header.py``).

    Those above the page's headline go; failing that, a run of menu entries at the top.
    """
    cut = cut_site_header(text, headline, flatten=flatten)
    return cut if cut != text else cut_leading_menu(text, flatten=flatten)


def _prepare(tree: lxml.html.HtmlElement, kind: PageKind, *, mode: ExtractMode) -> None:
    """Take out what is around the content on any page of this kind, before any extractor.

    Empty links go in markdown mode (``parse.drop_empty_links``); superscripts are marked so
    their numbers keep apart from the word before (``extract/spacing.py``); what forum
    software prints around each post goes (``extract/posts.py``); headings written as
    buttons become text (``extract/candidates.py``); on a product page, buyers' reviews go
    (``extract/reviews.py``).
    """
    if mode == "markdown":
        drop_empty_links(tree)
    mark_superscripts(tree)
    drop_post_extras(tree)
    unwrap_heading_buttons(tree)
    if kind == "product":
        drop_review_lists(tree)


def _agrees(text: str, tree: lxml.html.HtmlElement, *, mode: ExtractMode) -> bool:
    """Whether resiliparse's text of ``tree`` holds PROVEN_SHARE of the 4-grams of ``text``.

    Unfolds ``tree``'s folded text, as the extractors' path does.
    """
    unfold_text_toggles(tree)
    other = resiliparse_candidate(lxml.html.tostring(tree, encoding="unicode"), mode=mode)
    seen = markdown_to_text(text) if mode == "markdown" else text
    wanted = shingles(seen)
    if mode == "markdown":
        other = markdown_to_text(other)
    return bool(wanted) and len(wanted & shingles(other)) >= PROVEN_SHARE * len(wanted)


def _choose(
    seen: tuple[str, str, str],
    hints: _Hints,
    *,
    mode: ExtractMode,
    cleaned_html: str,
    spaces: bool,
) -> tuple[Choice, str | None]:
    """Which of trafilatura's, resiliparse's and the region's texts (``seen``) to keep.

    With links kept, trafilatura may weigh the page's blocks otherwise and take a different
    one than its text output does, or stop short of the end of the same one (resiliparse's
    text then passes for a superset of it). So in markdown mode, when the two extractors
    disagree, agree only loosely (resiliparse holds less than LOOSE_AGREEMENT_SHARE of the
    markdown: a block beside the one the text output takes can share a part of the page with
    it) or one looks like a superset, the choice is made again on trafilatura's text output
    of the page, as the text mode makes it. When that choice is trafilatura's and its
    markdown holds less than MARKDOWN_HELD_SHARE of its text output's 4-grams, the markdown
    is another block than the one chosen: the text output is returned with the choice, to be
    kept instead (plain text is markdown without links), else None.
    """
    kind, headline, description = hints.kind, hints.headline, hints.description
    choice = choose_for_kind(kind, *seen, headline=headline, description=description)
    loose = choice.reason == "agreement" and choice.contained < LOOSE_AGREEMENT_SHARE
    if mode == "text" or (choice.reason not in ("disagreement", "superset") and not loose):
        return choice, None
    tree = lxml.html.document_fromstring(cleaned_html, parser=PARSER)
    plain = _trafilatura(tree, kind, mode="text", base_url=None, spaces=spaces)
    choice = choose_for_kind(kind, plain, *seen[1:], headline=headline, description=description)
    if choice.source == "trafilatura" and not _holds_most(seen[0], plain):
        return choice, plain
    return choice, None


def _holds_most(text: str, other: str) -> bool:
    """Whether ``text`` holds MARKDOWN_HELD_SHARE of the 4-grams of ``other`` (or it has none).

    >>> _holds_most("a b c d e f", "a b c d e"), _holds_most("a b c d", "v w x y z")
    (True, False)
    """
    wanted = shingles(other)
    return not wanted or len(wanted & shingles(text)) >= MARKDOWN_HELD_SHARE * len(wanted)


def _trafilatura(
    tree: lxml.html.HtmlElement,
    kind: PageKind,
    *,
    mode: ExtractMode,
    base_url: str | None,
    spaces: bool = True,
) -> str:
    """trafilatura's text of ``tree``, after the fixes for its faults; it prunes ``tree``.

    ``spaces`` keeps the space after each inline element (``extract/spacing.py``).
    """
    if kind == "other":
        unwrap_card_links(tree)
    if mode == "markdown":
        prepare_for_markdown(tree)
    if spaces:
        protect_inline_spaces(tree)
    written = trafilatura_candidate(tree, mode=mode, base_url=base_url, comments=kind == "forum")
    if spaces:
        written = restore_inline_spaces(written)
    return unescape_word_underscores(written) if mode == "markdown" else written
