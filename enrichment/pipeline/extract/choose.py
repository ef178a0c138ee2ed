"""Pick one of two candidate extractions of a page by how much they agree.

trafilatura picks the single subtree that looks most like an article; that is precise on
articles but cuts threads, listings and product pages down to one block. resiliparse keeps
every block that is not boilerplate. When resiliparse's text is clearly longer *and* contains
most of trafilatura's text, trafilatura most likely stopped at one block of a larger main
content, so the longer text wins. When the two disagree (little shared text) the longer one is
more likely a page full of teasers, and trafilatura's choice stands — unless trafilatura found
almost nothing, in which case any real text beats none.

    >>> choose_candidate("a b c d e", "a b c d e f g h i j k l").source
    'resiliparse'
    >>> choose_candidate("a b c d e", "v w x y z q r s t u o p").source
    'trafilatura'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Source = Literal["trafilatura", "resiliparse", "region"]

SHINGLE = 4
# resiliparse must be this many times longer (in words) to be preferred...
LONGER_RATIO = 1.5
# ...and contain at least this share of trafilatura's word 4-grams.
CONTAINED_SHARE = 0.5
# Below this many words trafilatura is treated as having found nothing.
TOO_SHORT_WORDS = 50
# On an article (or an undeclared page), a resiliparse text this many times longer than a
# trafilatura text of at least SUBSTANTIAL_WORDS words is the page around the article.
PAGE_AROUND_RATIO = 4.0
SUBSTANTIAL_WORDS = 100
# On a discussion page, a block-level text at most this many times longer that holds
# POST_HEADERS_SHARE of the chosen text is the same thread with each post's author line.
POST_HEADERS_RATIO = 2.0
POST_HEADERS_SHARE = 0.7
# On a page that declares no kind, a trafilatura text shorter than FRAGMENT_WORDS is one
# block of many when the region (or resiliparse) is FRAGMENT_RATIO times longer.
FRAGMENT_WORDS = 300
FRAGMENT_RATIO = 3.0
# On a page that declares no kind, the main region's text wins when it is this many times
# longer than the chosen extraction and holds at least REGION_CONTAINED_SHARE of it.
REGION_LONGER_RATIO = 1.5
REGION_CONTAINED_SHARE = 0.6
# On a product page, a trafilatura text of this many words already holds the name, price
# and description; what a longer text adds is reviews, recommendations and related items.
# (A name, a short blurb and a list of specs run to a hundred words or so.)
PRODUCT_DESCRIPTION_WORDS = 100
# ...when it holds at least this share of the description the page declares (if any).
DESCRIPTION_HELD_SHARE = 0.5
# The repeated records (``extract/records.py``) replace the chosen text when they are at least
# as long, hold at least RECORDS_HOLD_SHARE of it, and it holds less than RECORDS_KEPT_SHARE
# of them (or is shorter than TOO_SHORT_WORDS and they longer): the extractor kept a piece of
# the listing.
RECORDS_HOLD_SHARE = 0.2
RECORDS_KEPT_SHARE = 0.5
# A chosen text holding at least HEADER_KEPT_SHARE of the words before the page's heading (at
# least HEADER_WORDS of them: the site's header and menus) took the whole page; when it holds at
# least WHOLE_PAGE_RECORDS_SHARE of the records too, they are the part of it that is content.
HEADER_WORDS = 20
HEADER_KEPT_SHARE = 0.8
WHOLE_PAGE_RECORDS_SHARE = 0.7
# Records holding at least COMPLETED_SHARE of the chosen text's 4-grams, when the block-level
# text (resiliparse's) holds less than DROPPED_SHARE of theirs, complete a list the chosen text
# kept a piece of: they stand for it when their entries it lacks (lines of at least
# ENTRY_WORDS words) hold at least ADDED_ENTRIES_SHARE of its words (``_completes``).
COMPLETED_SHARE = 0.8
DROPPED_SHARE = 0.5
ENTRY_WORDS = 5
ADDED_ENTRIES_SHARE = 0.1
# On a product page, of two texts where one is the other and then more after its end (other
# products, reviews, fine print), the one that stops there is the product's text (the choice's
# reason is TRAILING). The longer text must hold FOLLOWED_HELD_SHARE of the shorter one's
# 4-grams, and a line of it LINE_HELD_SHARE of its own to be one the two agree on.
TRAILING = "product text and what follows"
FOLLOWED_HELD_SHARE = 0.7
LINE_HELD_SHARE = 0.5
# Two texts sharing at most this share of the shorter one's 4-grams are about different things.
DISJOINT_SHARE = 0.1
_WORD = re.compile(r"\w+")
_DOTTED_CAPITAL_I = "\u0130"


@dataclass(frozen=True)
class Choice:
    source: Source
    reason: str  # short and stable, e.g. "superset" or "agreement"
    contained: float  # share of trafilatura's 4-grams also in resiliparse's text


@lru_cache(maxsize=16)
def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Lower-cased word 4-grams; a text shorter than that is one shingle of its words.

    The three candidates of a page are compared several times over; each text is split
    once (cached by its value; a page's texts stay in the cache until later pages push them
    out).
    """
    words = _lower_words(text)
    if len(words) < SHINGLE:
        return frozenset({words}) if words else frozenset()
    # The shifted copies are shorter by one word each: the shortest one ends the 4-grams.
    return frozenset(zip(*(words[offset:] for offset in range(SHINGLE)), strict=False))


@lru_cache(maxsize=16)
def _lower_words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


@lru_cache(maxsize=16)
def word_count(text: str) -> int:
    if _DOTTED_CAPITAL_I in text:
        return len(_WORD.findall(text))
    # Lower-casing keeps every word whole except for this one letter (it becomes "i" and a
    # combining dot, which is no word character): without it the words split for the
    # shingles count the same, and the text is scanned once, not twice.
    return len(_lower_words(text))


def choose_candidate(trafilatura_text: str, resiliparse_text: str) -> Choice:
    """Which text to keep, with the reason (see the module docstring)."""
    first_words = word_count(trafilatura_text)
    second_words = word_count(resiliparse_text)
    first, second = shingles(trafilatura_text), shingles(resiliparse_text)
    contained = len(first & second) / len(first) if first else 0.0
    if second_words == 0:
        return Choice("trafilatura", "resiliparse empty", contained)
    if first_words < TOO_SHORT_WORDS <= second_words:
        return Choice("resiliparse", "trafilatura too short", contained)
    if second_words > LONGER_RATIO * first_words and contained >= CONTAINED_SHARE:
        return Choice("resiliparse", "superset", contained)
    return Choice(
        "trafilatura", "agreement" if contained >= CONTAINED_SHARE else "disagreement", contained
    )


def choose_for_kind(
    kind: str,
    trafilatura_text: str,
    resiliparse_text: str,
    region_text: str,
    *,
    headline: str | None = None,
    description: str | None = None,
) -> Choice:
    """The pick for a page of this declared kind (see ``signals.page_kind``).

    On a product page a trafilatura text of PRODUCT_DESCRIPTION_WORDS words stands: the
    blocks a longer text adds are reviews and other products (and the page's repeated
    records, the other products' cards, do not replace it either). Articles are pages whose
    content one extractor or the other finds as a whole, so the agreement rule above
    decides (a resiliparse text several times longer than a substantial trafilatura text
    holds the page around the article). On a discussion the text that keeps
    each post's author line wins. A product page (collections often declare themselves
    products too) or a page that declares nothing is often many sibling blocks — a listing,
    a grid of items, documentation sections: when the main region's text is clearly longer
    and still contains most of the chosen text, or trafilatura kept one short block beside
    a far longer text, the extractors cut it short and the longer text stands.

    Two checks come first. When trafilatura and resiliparse share (almost) no text,
    trafilatura took a block about something else and resiliparse's text is the base
    choice, unless only trafilatura's names the page's ``headline`` (see ``_off_topic``).
    The product rule holds only when trafilatura's text contains the product's own declared
    ``description`` (JSON-LD), when the page declares one: a text without it is a buy box,
    another seller's offers or reviews, not the description the rule assumes.

    On a product page, a text that is another one and then more after its end (``_trails``)
    adds what follows the product's text on the page: other products, reviews, fine print.
    The shorter one stands (reason TRAILING), before the product rule when trafilatura's text
    is the longer one, and instead of resiliparse's superset or the region's when it is
    theirs; the page's repeated records do not replace it either.

        >>> choose_for_kind("other", "a b c d e", "", "a b c d e f g h i").source
        'region'
        >>> choose_for_kind("article", "a b c d e", "", "a b c d e f g h i").source
        'trafilatura'
    """
    off_topic = _off_topic(trafilatura_text, resiliparse_text, headline)
    if kind == "product" and off_topic is None and _followed(resiliparse_text, trafilatura_text):
        # trafilatura's text is resiliparse's and what follows it on the page (fine print,
        # other products): resiliparse's stops at the end of the product's own text.
        return Choice("resiliparse", TRAILING, 1.0)
    if (
        off_topic is None
        and kind == "product"
        and word_count(trafilatura_text) >= PRODUCT_DESCRIPTION_WORDS
        and _holds(trafilatura_text, description)
    ):
        # A product's own text is short: name, price, a description, a few specs.
        return Choice("trafilatura", "product description", 1.0)
    choice = off_topic or choose_candidate(trafilatura_text, resiliparse_text)
    if (
        choice.reason == "superset"
        and kind == "product"
        and _trails(trafilatura_text, resiliparse_text)
    ):
        # What resiliparse adds comes after the product's own text, not inside it: the
        # page's related products, reviews and footer.
        choice = Choice("trafilatura", TRAILING, choice.contained)
    if choice.reason == "superset" and kind in ("article", "other"):
        first_words = word_count(trafilatura_text)
        if (
            first_words >= SUBSTANTIAL_WORDS
            and word_count(resiliparse_text) > PAGE_AROUND_RATIO * first_words
        ):
            # Several times a substantial article: the page around it (teasers, comments).
            choice = Choice("trafilatura", "page around the article", choice.contained)
    chosen = resiliparse_text if choice.source == "resiliparse" else trafilatura_text
    if kind == "forum":
        return _with_post_headers(choice, chosen, resiliparse_text, region_text)
    if kind not in ("other", "product"):
        return choice
    fragment = _fragment_of_many_blocks(choice, chosen, resiliparse_text, region_text)
    if fragment is not None or not region_text:
        return fragment or choice
    region_words = word_count(region_text)
    if region_words <= REGION_LONGER_RATIO * word_count(chosen):
        return choice
    if kind == "product" and (choice.reason == TRAILING or _trails(chosen, region_text)):
        # The region goes on after the product's own text: what it adds is what follows.
        return choice
    base = shingles(chosen)
    contained = len(base & shingles(region_text)) / len(base) if base else 1.0
    if contained >= REGION_CONTAINED_SHARE:
        return Choice("region", "region superset", contained)
    return choice


def records_are_content(chosen: str, records: str) -> bool:
    """Whether the page's repeated records stand for its content better than ``chosen``.

    On a listing, trafilatura keeps a few of the items (or their table run together) and
    resiliparse drops them as navigation: the chosen text is then a piece of the records,
    which hold part of it and much it lacks. Records that share nothing with the chosen text
    are beside the content (comments, a brand list, related products); records the chosen
    text already holds for the most part add nothing, unless it has fewer than
    TOO_SHORT_WORDS words: on a short grid, a few of its cards already hold half of its
    4-grams, and the records still add the rest.

        >>> items = " ".join(f"item{n} costs {n} euros today" for n in range(40))
        >>> records_are_content(items[:200], items)
        True
        >>> records_are_content("the article body " * 50, items)
        False
    """
    records_words = word_count(records)
    if not records_words or records_words < word_count(chosen):
        return False
    base, rows = shingles(chosen), shingles(records)
    if not base or not rows:
        return False
    shared = len(base & rows)
    if shared < RECORDS_HOLD_SHARE * len(base):
        return False
    # Next to nothing chosen (a card or two of a short grid) is a piece of the records however
    # much of them it repeats: the records are more of the same list.
    nearly_nothing = records_words > word_count(chosen) and word_count(chosen) < TOO_SHORT_WORDS
    return nearly_nothing or shared < RECORDS_KEPT_SHARE * len(rows)


def records_replace(
    chosen: str,
    records: str,
    *,
    listing: bool,
    bare: bool,
    header: str = "",
    blocks: str | None = None,
) -> bool:
    """Whether the page's ``records`` replace the ``chosen`` text, given what the page is.

    On a page that declares itself an article but has no body element (``bare``: no block
    of paragraphs, a shop's grid tagged an article by its platform), only when the chosen
    text has fewer than TOO_SHORT_WORDS words (a basket's empty message: the extractors
    dropped the grid) and the records more. On another page declared an article that is a
    list (``listing``), when they hold at least as many words; elsewhere, and failing that,
    as ``records_are_content`` weighs them, or when the chosen text is the whole page: it
    holds the words before the page's heading (``header``: the site's header and menus,
    which no extractor means to keep) and the records as well (``_whole_page``), or when
    the block-level text (``blocks``, resiliparse's) dropped the records as navigation and the
    chosen text is a piece of them (``_completes``).

        >>> items = " ".join(f"cup{n} in amber costs {n} euros" for n in range(20))
        >>> records_replace("No products in the basket.", items, listing=True, bare=True)
        True
        >>> records_replace(items[:300] + " an article" * 40, items, listing=True, bare=True)
        False
    """
    if bare:
        return word_count(chosen) < TOO_SHORT_WORDS <= word_count(records)
    if listing and word_count(records) >= word_count(chosen):
        return True
    if records_are_content(chosen, records) or _whole_page(chosen, records, header):
        return True
    return blocks is not None and _completes(chosen, records, blocks)


def _completes(chosen: str, records: str, blocks: str) -> bool:
    """Whether ``records`` are the whole of a list that ``chosen`` holds a piece of.

    A block-level pass (``blocks``) drops a list of linked entries as navigation; then the
    only text found of it is trafilatura's, which often stops after some entries or keeps
    each entry's title and not its summary. ``chosen`` lies within the records (they hold
    COMPLETED_SHARE of its 4-grams), ``blocks`` holds less than DROPPED_SHARE of theirs, and
    the entries the records add are whole lines of ENTRY_WORDS words or more (titles and
    summaries, not only each entry's date or byline), ADDED_ENTRIES_SHARE of ``chosen``'s words
    at least. ``records_are_content`` leaves such a text alone when it already holds half of
    the records: what it lacks may be most of their entries all the same.

        >>> entries = [f"Night train {n} leaves Vienna at {n} and reaches Rome by noon"
        ...            for n in range(12)]
        >>> records = "\\n".join(entries)
        >>> _completes("\\n".join(entries[:8]), records, "Home About Contact")
        True
        >>> _completes("\\n".join(entries[:8]), records, records)  # the blocks kept them
        False
        >>> _completes("\\n".join(entries[:11]), records, "")  # one short of the whole
        False
    """
    rows, base = shingles(records), shingles(chosen)
    if not rows or not base or word_count(records) <= word_count(chosen):
        return False
    if len(base & rows) < COMPLETED_SHARE * len(base):
        return False
    if len(rows & shingles(blocks)) >= DROPPED_SHARE * len(rows):
        return False
    added = 0
    for line in records.lower().split("\n"):
        words = _WORD.findall(line)
        if len(words) < ENTRY_WORDS:
            continue
        grams = set(zip(words, words[1:], words[2:], words[3:], strict=False))
        if len(grams & base) < LINE_HELD_SHARE * len(grams):
            added += len(words)
    return added >= ADDED_ENTRIES_SHARE * word_count(chosen)


def _whole_page(chosen: str, records: str, header: str) -> bool:
    """Whether ``chosen`` kept the page's header (HEADER_WORDS or more) and its records.

    >>> menu = "Menu Sign in Watchlist English Deutsch Italiano Espanol Francais " * 3
    >>> items = " ".join(f"film{n} of {2000 + n} runs {n} minutes" for n in range(20))
    >>> _whole_page(menu + items, items, menu), _whole_page(items, items, menu)
    (True, False)
    """
    if word_count(header) < HEADER_WORDS or not records:
        return False
    base = shingles(chosen)
    top, rows = shingles(header), shingles(records)
    header_kept = len(top & base) >= HEADER_KEPT_SHARE * len(top)
    return header_kept and len(rows & base) >= WHOLE_PAGE_RECORDS_SHARE * len(rows)


def _with_post_headers(
    choice: Choice, chosen: str, resiliparse_text: str, region_text: str
) -> Choice:
    """On a discussion page, prefer the text that keeps who wrote each post and when.

    trafilatura keeps the posts' bodies but drops the author and date line above each; the
    main region and resiliparse keep them. A somewhat longer text that contains most of the
    chosen one is the same thread with those lines (readers need to know who answered).
    """
    chosen_words = word_count(chosen)
    base = shingles(chosen)
    candidates: tuple[tuple[Source, str], ...] = (
        ("region", region_text),
        ("resiliparse", resiliparse_text),
    )
    for source, text in candidates:
        if source == choice.source or not text:
            continue
        words = word_count(text)
        if not chosen_words < words <= POST_HEADERS_RATIO * chosen_words:
            continue
        contained = len(base & shingles(text)) / len(base) if base else 0.0
        if contained >= POST_HEADERS_SHARE:
            return Choice(source, "post headers", contained)
    return choice


def _fragment_of_many_blocks(
    choice: Choice, chosen: str, resiliparse_text: str, region_text: str
) -> Choice | None:
    """On an undeclared page, a short trafilatura text beside a far longer one is a fragment.

    Listings and collections are many sibling blocks; trafilatura then often keeps one of
    them (an intro, a single card) and the two texts share little. A main region (else the
    resiliparse text) several times longer is the list itself.
    """
    if choice.source != "trafilatura":
        return None
    words = word_count(chosen)
    if words >= FRAGMENT_WORDS:
        return None
    candidates: tuple[tuple[Source, str], ...] = (
        ("region", region_text),
        ("resiliparse", resiliparse_text),
    )
    for source, text in candidates:
        if text and word_count(text) > FRAGMENT_RATIO * words:
            return Choice(source, "fragment of many blocks", choice.contained)
    return None


def _holds(text: str, description: str | None) -> bool:
    """Whether ``text`` contains most of a declared description (true when none is declared)."""
    wanted = shingles(description or "")
    if not wanted:
        return True
    return len(wanted & shingles(text)) >= DESCRIPTION_HELD_SHARE * len(wanted)


def _off_topic(trafilatura_text: str, resiliparse_text: str, headline: str | None) -> Choice | None:
    """resiliparse's text when trafilatura took a block about something else.

    trafilatura scores one subtree; on some pages the densest one is a reviews widget, an
    embedded post or a cookie notice, and its text then shares nothing with what the
    block-level pass keeps. When the two texts are disjoint, resiliparse's (several blocks
    of the page) stands, unless trafilatura's alone names the page's headline (the ``<h1>``);
    a resiliparse text too short to stand alone does not count.

        >>> body = " ".join(f"the lamp part{i} is brass" for i in range(12))
        >>> _off_topic("cookie notice " * 30, "Brass lamp: " + body, "Brass lamp").reason
        'disjoint'
        >>> _off_topic("Brass lamp " + "cookie notice " * 30, body, "Brass lamp") is None
        True
    """
    if word_count(resiliparse_text) < TOO_SHORT_WORDS:
        return None
    first, second = shingles(trafilatura_text), shingles(resiliparse_text)
    if not first or len(first & second) > DISJOINT_SHARE * min(len(first), len(second)):
        return None
    wanted = " ".join(_WORD.findall((headline or "").lower()))
    if (
        wanted
        and wanted in " ".join(_lower_words(trafilatura_text))
        and wanted not in " ".join(_lower_words(resiliparse_text))
    ):
        return None
    return Choice("resiliparse", "disjoint", 0.0)


def _trails(text: str, longer: str) -> bool:
    """Whether the words ``longer`` has beyond ``text`` come mostly after its end.

    The lines of ``longer`` most of whose 4-grams ``text`` holds are where the two agree; the
    words of its other lines between the first and the last of those (blocks ``text`` left
    out inside it) are weighed against the words after the last one (what follows it on the
    page: other products, reviews, fine print, the footer).

        >>> own = "\\n".join(f"the brass lamp has part {n} inside" for n in range(3))
        >>> _trails(own, own + "\\nRelated lamps\\nA copper lamp for your desk")
        True
        >>> _trails(own, own.replace("\\n", "\\nSpecs: a shade of linen\\n", 1) + "\\nMore")
        False
    """
    held = shingles(text)
    counts = []
    agreed = []
    for line in longer.lower().split("\n"):
        words = _WORD.findall(line)
        grams = set(zip(words, words[1:], words[2:], words[3:], strict=False))
        agreed.append(bool(grams) and len(grams & held) >= LINE_HELD_SHARE * len(grams))
        counts.append(len(words))
    marks = [index for index, flag in enumerate(agreed) if flag]
    if not marks:
        return False
    first, last = marks[0], marks[-1]
    between = sum(
        count for index, count in enumerate(counts[first:last], first) if not agreed[index]
    )
    return sum(counts[last + 1 :]) > between


def _followed(shorter: str, longer: str) -> bool:
    """Whether ``longer`` is ``shorter`` (most of its 4-grams) and then more after its end.

    ``shorter`` must have TOO_SHORT_WORDS words at least: a fragment is not the product's text.
    """
    words = word_count(shorter)
    if not TOO_SHORT_WORDS <= words < word_count(longer):
        return False
    base = shingles(shorter)
    held = len(base & shingles(longer)) >= FOLLOWED_HELD_SHARE * len(base) if base else False
    return held and _trails(shorter, longer)
