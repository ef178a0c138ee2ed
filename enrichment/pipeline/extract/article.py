"""An article's text read straight from its body element, when the page is plainly built.

Most article pages hold their story in one element of paragraphs (``trim.body_element``) with
no rival block of running text beside it. There, the body element's own text already is the
article: writing it out (headings, lists, code, tables, emphasis and links kept in markdown; an
ordered list's numbers in text too) costs a few milliseconds, where trafilatura, resiliparse
and the choice between them cost some twenty-five. ``article_text`` gives that text when the
page is plain enough to trust it, and None otherwise, so the caller runs the extractors:

- the body's paragraphs hold at least ``min_words`` words (a short body is an author box
  or a caption, and the story is elsewhere: in ``<div>`` lines or a list of posts);
- the body holds at least MIN_PAGE_SHARE of the page's words (a body lost in a page of
  teasers, tables or comments is one part among many), and is not inside a footer, sidebar
  or navigation (a disclaimer, an "about the author"), unless the page declares an article:
  then its text must agree with resiliparse's (``needs_proof``, checked by the caller);
- the words between the page's only ``<h1>`` and the body are at most BETWEEN_SHARE of the
  body's (else the story is between them, and the body is a sidebar's);
- a page that does not declare itself an article and has no single ``<h1>`` may be a page of
  several parts: little running text (OUTSIDE_SHARE) may lie outside the body. On a page
  that does declare an article, rival blocks of paragraphs are the article's parts (sections
  side by side) and are read from the element holding them all, unless that is a list (a
  row of posts) or the whole page. A rival in a list item (one comment of a thread) beside
  a body that is in none is no part of the article, and is not read with it; nor is a last
  part, after all the others, that lies outside the element holding them (an author's bio, the
  site's footer), when they hold MIN_PAGE_SHARE of the page without it.

What the element holds beside the story is left out: blocks made mostly of links after the
story's last paragraph (related posts, tags, sharing; not an index's lists of linked names,
many times longer than its introduction), rows of short linked labels within it
(product cards, "Read more"; a list of links to other pages is kept, a list of in-page links is
not), teaser cards (a linked title over a line of blurb) standing alone in the story or after
it, the page's chrome (navigation, forms, buttons), and the blocks built around a form's
field to type in within the story (a sign-up for alerts, a quote request: their pitch and
consent lines; not a checklist's boxes). The lead is often set apart between the headline
and the body: the paragraphs of running text found there (LEAD_WORDS words or more, few of
them links) are put first; bylines, dates and captions there are short and stay out, and so
does a paragraph in a block named as set beside the story (an author's bio). Within the body, the captions of photos (``<figcaption>`` of a figure showing a picture,
not code or a table) describe or credit what a reader of the text cannot see, and are left out
too; so are blocks the page's markup names as set beside the story (ASIDE_NAMES: an author box,
related posts, a newsletter form, ratings and comments, a disclaimer, sharing buttons, a table
of contents). An ``<aside>`` of running text within the body, which elsewhere on a page is a
sidebar, is a box of the story (a note set apart) and is read.

    >>> import lxml.html
    >>> from enrichment.pipeline.extract.trim import body_element
    >>> story = "<p>" + "the storm closed every road north of the city " * 3 + "</p>"
    >>> page = lxml.html.document_fromstring(
    ...     "<body><h1>Storm</h1><p class=lead>" + "roads were shut overnight " * 3 + "</p>"
    ...     "<div class=story>" + story * 4 + "<h2>What next</h2>" + story
    ...     + "<ul><li><a href=/a>More storms</a></li></ul></div><footer>Contact</footer></body>")
    >>> print(article_text(page, body_element(page), mode="markdown")[:60])
    roads were shut overnight roads were shut overnight roads we
    >>> "More storms" in article_text(page, body_element(page), mode="markdown")
    False
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.markdown import prepare_for_markdown
from enrichment.pipeline.extract.region import (
    RegionMode,
    element_words,
    words_on_page,
    write_blocks,
)
from enrichment.pipeline.extract.trim import PARAGRAPH_WORDS, BodyElement

# Paragraph words the body must hold for its text to stand for the article.
MIN_BODY_WORDS = 50
# Share of the page's words the body element must hold.
MIN_PAGE_SHARE = 0.25
# The words between the headline and the body may be at most this share of the body's.
BETWEEN_SHARE = 0.5
# On a page with no single headline and no declared kind, running text outside the body may
# be at most this share of the body's paragraph words (else the page is in several parts).
OUTSIDE_SHARE = 0.3
# On a page that declares no article, rival blocks of paragraphs under its one headline are
# one text's sections when at least this share of the words holding them is running text...
RUNNING_SHARE = 0.75
# ...and that holder has less than this share of the page's words (``_parts_of_one_text``).
WHOLE_PAGE_SHARE = 0.9
# A block of the body whose words are at least this share link labels is not the story
# (related posts, tags, share links)...
LINK_SHARE = 0.7
# ...unless it comes before the body's last paragraph, holds at most STEP_BLOCK_WORDS words
# and each of its links has STEP_LINK_WORDS words or more (linked steps, not labels).
STEP_BLOCK_WORDS = 150
STEP_LINK_WORDS = 4
# Lists of links to other pages after the body's last paragraph holding this many times the
# words of the rest of the body are an index's entries, not links beside a story.
INDEX_LISTS_RATIO = 3.0
# A paragraph between the headline and the body with this many words is the article's lead...
LEAD_WORDS = 10
# ...when less than this share of its words are link labels.
LEAD_LINK_SHARE = 0.5
CHROME_TAGS = frozenset(("footer", "aside", "nav"))
# An element holding all the parts of the text that is one of these is not one article.
_NOT_ONE_ARTICLE = frozenset(("ul", "ol", "body", "html"))
_LINK_BLOCKS = frozenset(("div", "dl", "ol", "p", "section", "table", "ul"))
_LISTS = frozenset(("ol", "ul"))
# A block of the body whose class or id holds one of these words is set beside the story, not
# part of it, on any site: who wrote it (an author box), other posts, a call to subscribe,
# readers' ratings and comments, a legal note, sharing buttons, a table of contents.
ASIDE_NAMES = frozenset(
    ("author", "bio", "byline", "related", "newsletter", "subscribe", "signup", "promo")
    + ("rating", "comment", "comments", "disclaimer", "disclosure", "share", "sharing", "toc")
)
# ...when it holds less than this share of the body's words (a page may name its whole
# story "post-author-...": that is not a box beside it).
ASIDE_SHARE = 0.3
# A table of contents and sharing buttons are rows of links: a block named only as one of
# these that holds a paragraph of running text is none (``_named_aside``).
LINK_ROW_NAMES = frozenset(("toc", "share", "sharing"))
# Only blocks are weighed: an inline ``<span class="comment">`` is a code comment.
_ASIDE_TAGS = frozenset(
    ("aside", "blockquote", "div", "dl", "figure", "footer", "form", "header", "li", "ol", "p")
    + ("section", "table", "ul")
)
# A block of at most this many words whose heading is one link to another page is a teaser
# card (a linked title and its blurb), not a part of the story.
CARD_WORDS = 60
# ...when such cards hold at most this share of the body's words (a roundup is all cards).
CARDS_SHARE = 0.2
_CARD_HEADINGS = ("h2", "h3", "h4", "h5", "h6")
_CARD_TAGS = frozenset(("article", "div", "li", "section"))
_NAME_WORDS = re.compile(r"[a-z]+")
# A form field a reader types into (a checklist's boxes, a picker's options and buttons are
# no such field)...
_FIELD_TAGS = ("input", "textarea")
_TYPED_FIELDS = frozenset(("text", "email", "tel", "search", "number", "url", "password"))
# ...in a block holding none of these is a widget: code, a table show what the story tells.
_WIDGET_KEEPS = ("pre", "code", "table")
# A block whose class or id holds this word is a caption (where the page has no <figure>).
CAPTION_NAMES = frozenset(("caption",))
_CAPTION_TAGS = ("figcaption", "div", "p", "span")
# A figure showing one of these is a picture: its caption describes or credits it.
_PICTURE_TAGS = ("img", "picture", "video", "iframe")
# A figure holding one of these is a listing (code, a table): its caption names what it shows.
_LISTING_TAGS = ("pre", "code", "table")


def article_text(
    tree: lxml.html.HtmlElement,
    body: BodyElement | None,
    *,
    mode: RegionMode,
    base_url: str | None = None,
    declared: bool = True,
    min_words: int = MIN_BODY_WORDS,
    page_words: int | None = None,
) -> str | None:
    """The article's lead and body written out, or None when the page is not plain enough.

    ``declared``: the page says it is an article; one that does not must also have a single
    headline or little running text outside the body. ``page_words``: the words of the
    page's ``<body>``, when the caller counted them already.
    """
    if body is None or body.words < min_words:
        return None
    if body.rivals and not declared and len(tree.findall(".//h1")) != 1:
        return None
    element, narrower = _holder(body)
    if narrower is not None:
        # The last part lies after the others and outside the element holding them all: a
        # block of the page after the story (an author's bio, a footer), not one of its
        # parts, when the others hold enough of the page to stand for it alone.
        page_words = words_on_page(tree) if page_words is None else page_words
        if element_words(narrower) >= MIN_PAGE_SHARE * page_words:
            element = narrower
    if element.tag in _NOT_ONE_ARTICLE or (_in_chrome(element) and not declared):
        return None
    if page_words is None:
        page_words = words_on_page(tree)
    body_words = element_words(element)
    if body_words < MIN_PAGE_SHARE * page_words:
        return None
    if body.rivals and not declared and not _parts_of_one_text(element, body_words, page_words):
        return None
    headings = tree.findall(".//h1")
    if (
        not declared
        and len(headings) != 1
        and _outside_words(tree, element) > (OUTSIDE_SHARE * body.words)
    ):
        return None
    leads: list[etree._Element] = []
    if len(headings) == 1:
        between, leads = _between(tree, headings[0], element)
        if between > BETWEEN_SHARE * body_words:
            return None
    blocks = [*leads, element]
    _read_story_boxes(element)
    if mode == "markdown":
        for block in blocks:
            prepare_for_markdown(block)
    skipped = [
        *_link_blocks(element),
        *_photo_captions(element),
        *_named_asides(element, body_words, body.element),
        *_teaser_cards(element, body_words),
        *_form_widgets(element, body_words, body.element),
    ]
    return write_blocks(blocks, mode=mode, base_url=base_url, skipped=skipped)


def _holder(body: BodyElement) -> tuple[etree._Element, etree._Element | None]:
    """The element holding the body's parts, and the one holding all but the last of them
    when that last part comes after the others and lies outside it (else None).

    An article in several parts (sections of paragraphs side by side) is read from the
    element holding them all; parts in a list are a row of posts. A block after the story
    (an author's bio, the site's footer) can hold as many paragraph words as a part: it
    stands apart from the parts by lying outside the element that holds all the others.
    """
    element = body.element
    kept: list[etree._Element] = []
    before_last = element
    for rival in body.rivals:
        common = _common_ancestor(element, rival)
        if common is None:
            continue
        if _in_list_item(rival, common) and not _in_list_item(element, common):
            # One post of a list (a comment thread) beside a body that is none.
            continue
        kept.append(rival)
        before_last, element = element, common
    if (
        len(kept) > 1
        and element is not before_last
        and all(_precedes(part, kept[-1]) for part in (body.element, *kept[:-1]))
    ):
        return element, before_last
    return element, None


def needs_proof(body: BodyElement | None, *, declared: bool) -> bool:
    """Whether the fast path's text of this page stands only if resiliparse's agrees.

    So it is for an undeclared text in several parts (``_parts_of_one_text``) and for a
    declared article whose body lies in what is elsewhere the page's chrome (a footer,
    sidebar or navigation: a layout that wraps the story in an ``<aside>``, where on most
    pages such a body is a disclaimer or an author box). The caller checks.
    """
    if body is None:
        return False
    if declared:
        return _in_chrome(body.element)
    return bool(body.rivals)


def _parts_of_one_text(element: etree._Element, words: int, page_words: int) -> bool:
    """Whether ``element``, holding a page's rival blocks of paragraphs, holds one text.

    On a page that does not declare an article, parts side by side under its one headline
    are an article's sections when they are mostly running text (RUNNING_SHARE of the
    element's ``words`` in paragraphs), the element is not the whole page (WHOLE_PAGE_SHARE
    of its words: a page of several parts, its menus and panels among them), and the parts
    are not dated posts (a thread of answers, each with its ``<time>``).
    """
    if words >= WHOLE_PAGE_SHARE * page_words or len(element.findall(".//time")) > 1:
        return False
    running = sum(
        count
        for paragraph in element.iter("p")
        if (count := element_words(paragraph)) >= PARAGRAPH_WORDS
    )
    return running >= RUNNING_SHARE * words


def _between(
    tree: lxml.html.HtmlElement, heading: etree._Element, body: etree._Element
) -> tuple[int, list[etree._Element]]:
    """Words between the headline and the body, and the lead paragraphs among them.

    Nothing when the headline is inside the body or comes after it.
    """
    top = _common_ancestor(heading, body)
    if top is None or top is body or top is heading:
        return 0, []
    words = 0
    leads: list[etree._Element] = []
    state = "before"
    for event, element in etree.iterwalk(top, events=("start", "end")):
        if element is body:
            return words, leads
        if element is heading:
            state = "heading" if event == "start" else "between"
            if event == "end" and element.tail:
                words += len(element.tail.split())
            continue
        if state != "between" or not isinstance(element.tag, str):
            continue
        if event == "start":
            words += len((element.text or "").split())
            if element.tag == "p" and _is_lead(element) and not _beside_story(element, top):
                leads.append(element)
        elif element.tail:
            words += len(element.tail.split())
    return 0, []  # the body comes before the headline: what lies between is not a lead


def _beside_story(paragraph: etree._Element, top: etree._Element) -> bool:
    """Whether the paragraph is in a block named as set beside the story (an author's bio)."""
    for element in (paragraph, *paragraph.iterancestors()):
        if element is top:
            return False
        if _named_aside(element):
            return True
    return False


def _is_lead(paragraph: etree._Element) -> bool:
    if _in_chrome(paragraph):
        return False
    words = element_words(paragraph)
    links = sum(element_words(link) for link in paragraph.iter("a"))
    return words >= LEAD_WORDS and links < LEAD_LINK_SHARE * words


def _outside_words(tree: lxml.html.HtmlElement, body: etree._Element) -> int:
    """Words of running-text paragraphs outside the body and outside the page's chrome."""
    inside = set(body.iter("p"))
    return sum(
        count
        for paragraph in tree.iter("p")
        if paragraph not in inside
        and (count := element_words(paragraph)) >= PARAGRAPH_WORDS
        and not _in_chrome(paragraph)
    )


def _link_blocks(body: etree._Element) -> list[etree._Element]:
    """Blocks of the body made mostly of links, but for a short run of linked sentences.

    After the body's last paragraph of running text, every such block is what follows the
    story (related posts, tags, sharing). Before it, a list of links to other pages is part
    of the story (what it tells about), and so is a block of at most STEP_BLOCK_WORDS words
    whose every link reads as a phrase (STEP_LINK_WORDS words or more: linked steps between
    paragraphs); a row of short labels ("Read more", prices) outside a list is not, nor a
    list of in-page links (a table of contents, tabs).
    """
    # Only elements around a link can be made of links: the walk keeps to them.
    around_links: set[etree._Element] = set()
    for link in body.iter("a"):
        for ancestor in link.iterancestors():
            if ancestor is body or ancestor in around_links:
                break
            around_links.add(ancestor)
    if not around_links:
        return []
    position = {element: index for index, element in enumerate(body.iter())}
    last = max(
        (position[p] for p in body.iter("p") if element_words(p) >= PARAGRAPH_WORDS),
        default=len(position),
    )
    found: list[etree._Element] = []
    pending = [body]
    while pending:
        for child in pending.pop():
            if child not in around_links:
                continue
            if child.tag in _LINK_BLOCKS and _made_of_links(child, position[child] < last):
                found.append(child)
            else:
                pending.append(child)
    return _without_index_lists(body, found, position, last)


def _without_index_lists(
    body: etree._Element,
    found: list[etree._Element],
    position: dict[etree._Element, int],
    last: int,
) -> list[etree._Element]:
    """``found`` less the lists of other pages after the last paragraph, when they are the page.

    An index ("List of ...", a glossary, a site map) is a line of introduction and then
    lists of linked names: all of them come after the body's last paragraph, like related
    posts do after a story. Lists of links to other pages holding INDEX_LISTS_RATIO times
    the words of the rest of the body are what the page is about, and are read.
    """
    lists = [
        block
        for block in found
        if position[block] > last
        and any(_lists_other_pages(inner) for inner in block.iter(*_LISTS))
    ]
    if not lists:
        return found
    listed = sum(element_words(block) for block in lists)
    rest = element_words(body) - sum(element_words(block) for block in found)
    if listed <= INDEX_LISTS_RATIO * rest:
        return found
    kept = set(lists)
    return [block for block in found if block not in kept]


def _made_of_links(block: etree._Element, before_last_paragraph: bool) -> bool:
    words = element_words(block)
    labels = [element_words(link) for link in block.iter("a")]
    if not words or sum(labels) < LINK_SHARE * words:
        return False
    if before_last_paragraph and _lists_other_pages(block):
        return False
    steps = words <= STEP_BLOCK_WORDS and min(labels) >= STEP_LINK_WORDS
    return not (before_last_paragraph and steps)


def _lists_other_pages(block: etree._Element) -> bool:
    """Whether the block is a list of links to other pages, not a page's own navigation.

    Between a story's paragraphs, a list of linked names is what the text is telling about
    (the data types a guide covers, the sources it cites, a doc's subpages). A list whose
    links all jump within the page (``#section``) is a table of contents or a row of tabs.
    """
    if block.tag not in _LISTS or block.get("role") == "tablist":
        return False
    return any(not (link.get("href") or "#").startswith("#") for link in block.iter("a"))


def _read_story_boxes(body: etree._Element) -> None:
    """Turn the body's ``<aside>`` boxes of running text into plain blocks, so they are read.

    Across a page, an ``<aside>`` is a sidebar, and the writer skips it as chrome. Within
    the article's body, one holding a paragraph of running text and not made of links is a
    box of the story: a note set apart, a worked example, a side explanation. (A box the
    page names as beside the story, a newsletter or related posts, is left out still.)
    """
    for aside in list(body.iter("aside")):
        running = any(element_words(p) >= PARAGRAPH_WORDS for p in aside.iter("p"))
        if running and not _made_of_links(aside, before_last_paragraph=True):
            aside.tag = "div"


def _photo_captions(body: etree._Element) -> list[etree._Element]:
    """The captions of the body's pictures: a description or a credit, not the story.

    A caption under a photo says what the photo shows ("The harbour at dawn. Photo: ...");
    a reader of the text has no photo to read it against. A caption is a ``<figcaption>``,
    or a block its markup names so (``class="wp-caption-text"``) where the page has no
    figure element. The caption of a figure holding code or a table ("Listing 3: a
    parser") names what the text refers to, and stays.
    """
    return [
        caption
        for caption in body.iter(*_CAPTION_TAGS)
        if (caption.tag == "figcaption" or _named(caption, CAPTION_NAMES))
        and (figure := caption.getparent()) is not None
        and _holds_any(figure, _PICTURE_TAGS)
        and not _holds_any(figure, _LISTING_TAGS)
    ]


def _teaser_cards(body: etree._Element, body_words: int) -> list[etree._Element]:
    """Cards of the body pointing to other pages: a linked title and a line of blurb.

    A story's own headings are text; a heading that is one link to another page, in a block
    of at most CARD_WORDS words, is a teaser for another story (the outermost such block
    around it is the card). A card is left out when it comes after the body's last
    paragraph of running text (a row of related posts), or stands alone between two of the
    story's own blocks ("Related: 4 tools that save time"). Cards side by side between the
    paragraphs are the story's own (a service's columns, a list of entries), and so are
    cards holding more than CARDS_SHARE of the body's words (a roundup is all cards).
    """
    found: list[etree._Element] = []
    for heading in body.iter(*_CARD_HEADINGS):
        if not _linked_title(heading):
            continue
        card = None
        for ancestor in heading.iterancestors():
            if ancestor is body or element_words(ancestor) > CARD_WORDS:
                break
            if sum(1 for inner in ancestor.iter(*_CARD_HEADINGS) if _linked_title(inner)) > 1:
                break  # a list of teasers, weighed as links (``_link_blocks``)
            card = ancestor
        if card is not None and card.tag in _CARD_TAGS:
            found.append(card)
    if not found or sum(element_words(card) for card in found) > CARDS_SHARE * body_words:
        return []  # a roundup: its items are the story
    cards = set(found)
    inside = {element for card in found for element in card.iter()}
    order = {element: index for index, element in enumerate(body.iter())}
    last = max(
        (
            order[paragraph]
            for paragraph in body.iter("p")
            if paragraph not in inside and element_words(paragraph) >= PARAGRAPH_WORDS
        ),
        default=-1,
    )
    return [card for card in found if order[card] > last or _in_running_text(card, cards)]


def _form_widgets(
    body: etree._Element, body_words: int, paragraphs: etree._Element
) -> list[etree._Element]:
    """Blocks of the body built around a field to type in: a widget set in the story.

    A sign-up for text alerts, a box asking for a zip code to match the reader with pros, a
    donation form, a search box, a "was this helpful?" form: each asks the reader to type
    something, and what it shows around its field (a pitch, labels, amounts, a consent line)
    is the widget's. The outermost block around the field holding no paragraph of running
    text and less than ASIDE_SHARE of the body's words is the widget; it lies within the
    body, not around ``paragraphs`` (the element holding the story's paragraphs). Boxes to
    tick, options to pick and drop-downs (a checklist, a poll, a comparison's product
    picker) ask for nothing typed and belong to what they sit in; a block showing code or a
    table is what the story tells about.
    """
    found: list[etree._Element] = []
    for field in body.iter(*_FIELD_TAGS):
        if (
            field.tag == "input"
            and (field.get("type") or "text").strip().lower() not in _TYPED_FIELDS
        ):
            continue
        widget = None
        for ancestor in field.iterancestors():
            if ancestor is body or ancestor is paragraphs:
                break
            if element_words(ancestor) >= ASIDE_SHARE * body_words or any(
                element_words(paragraph) >= PARAGRAPH_WORDS for paragraph in ancestor.iter("p")
            ):
                break
            widget = ancestor
        if widget is not None and widget not in found and not _holds_any(widget, _WIDGET_KEEPS):
            found.append(widget)
    return found


def _in_running_text(card: etree._Element, cards: set[etree._Element]) -> bool:
    """Whether the card stands alone between two of the story's own blocks (paragraphs,
    headings).

    Blocks of its own tag beside it are its like: a row of posts, a service's columns. A
    card first or last in its block is that block's header (an entry's linked title over its
    review) or its end.
    """
    neighbours = (card.getprevious(), card.getnext())
    return all(
        other is not None and other not in cards and other.tag != card.tag for other in neighbours
    )


def _linked_title(heading: etree._Element) -> bool:
    """Whether all the heading's words are the label of one link to another page."""
    links = list(heading.iter("a"))
    if len(links) != 1 or (links[0].get("href") or "#").startswith("#"):
        return False
    words = element_words(heading)
    return words > 0 and element_words(links[0]) == words


def _named_asides(
    body: etree._Element, body_words: int, paragraphs: etree._Element
) -> list[etree._Element]:
    """Blocks of the body its own markup names as set beside the story (ASIDE_NAMES).

    An author box, a "related posts" row, a newsletter form or a comment thread often sits
    inside the element holding the article, after or between its paragraphs, and holds
    sentences like the story's; only the page's names for those blocks tell them apart.
    The outermost such block is left out, with what it holds: when it holds less than
    ASIDE_SHARE of the body's words, or none of the story's own paragraphs (those of
    ``paragraphs``, the element holding the most paragraph words: a long comment thread
    can outweigh the story it follows).
    """
    found: list[etree._Element] = []
    pending = [body]
    while pending:
        for child in pending.pop():
            if not isinstance(child.tag, str):
                continue
            if _named_aside(child) and (
                element_words(child) < ASIDE_SHARE * body_words or not _holds(child, paragraphs)
            ):
                found.append(child)
            else:
                pending.append(child)
    return found


def _holds(block: etree._Element, element: etree._Element) -> bool:
    return block is element or any(ancestor is block for ancestor in element.iterancestors())


def _named_aside(element: etree._Element) -> bool:
    """Whether the page names ``element`` as a block set beside the story (ASIDE_NAMES).

    A block named only as a row of links (LINK_ROW_NAMES) that holds a paragraph of running
    text is no such row: it is a part of the story the page keeps out of its contents list
    (``no_toc_section``).

        >>> _named_aside(lxml.html.fromstring('<div class="post-toc"><a href="#a">A</a></div>'))
        True
        >>> _named_aside(lxml.html.fromstring(
        ...     '<div class="no_toc_section"><p>' + "the story goes on here " * 3 + "</p></div>"))
        False
    """
    if element.tag not in _ASIDE_TAGS:
        return False
    own = f"{element.get('class') or ''} {element.get('id') or ''}".lower()
    names = ASIDE_NAMES.intersection(_NAME_WORDS.findall(own))
    if names and names <= LINK_ROW_NAMES:
        return not any(_is_running_text(paragraph) for paragraph in element.iter("p"))
    return bool(names)


def _is_running_text(paragraph: etree._Element) -> bool:
    """A paragraph of PARAGRAPH_WORDS words or more, less than LEAD_LINK_SHARE of them links."""
    words = element_words(paragraph)
    if words < PARAGRAPH_WORDS:
        return False
    return sum(element_words(link) for link in paragraph.iter("a")) < LEAD_LINK_SHARE * words


def _named(element: etree._Element, names: frozenset[str]) -> bool:
    """Whether a word of the element's class or id is one of ``names``."""
    own = f"{element.get('class') or ''} {element.get('id') or ''}".lower()
    return not names.isdisjoint(_NAME_WORDS.findall(own))


def _holds_any(element: etree._Element, tags: tuple[str, ...]) -> bool:
    return next(element.iter(*tags), None) is not None


def _in_list_item(rival: etree._Element, top: etree._Element) -> bool:
    """Whether a list item lies between ``rival`` and ``top``: the rival is one post of a
    list (a comment thread, a row of teasers), not a part of the article beside its body."""
    for ancestor in rival.iterancestors():
        if ancestor is top:
            return False
        if ancestor.tag == "li":
            return True
    return False


def _in_chrome(element: etree._Element) -> bool:
    return any(ancestor.tag in CHROME_TAGS for ancestor in element.iterancestors())


def _precedes(first: etree._Element, second: etree._Element) -> bool:
    """Whether ``first`` comes before ``second`` in the page (neither holding the other)."""
    common = _common_ancestor(first, second)
    if common is None or common is first or common is second:
        return False
    around_first = next(e for e in (first, *first.iterancestors()) if e.getparent() is common)
    around_second = next(e for e in (second, *second.iterancestors()) if e.getparent() is common)
    return bool(common.index(around_first) < common.index(around_second))


def _common_ancestor(first: etree._Element, second: etree._Element) -> etree._Element | None:
    around_first = {first, *first.iterancestors()}
    if second in around_first:
        return second
    return next((element for element in second.iterancestors() if element in around_first), None)
