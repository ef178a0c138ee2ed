"""trafilatura's text with the blocks it skipped inside it, read from resiliparse's text.

trafilatura keeps the subtree it scores as the article and prunes blocks inside it that look
unlike running prose: a run of linked lines, a section of short lines between headings, a
callout. resiliparse keeps every block that is not boilerplate, in page order. Where the two
agree on the content (lines of resiliparse's text that trafilatura's holds: the anchors), the
lines resiliparse keeps *between* two anchors and trafilatura lacks are put back into
trafilatura's text after the first anchor's line; what lies before the first anchor or after
the last one (navigation, related links, comments) stays out, and trafilatura's own lines
(with their markdown) are kept as they are.

A long run of lines between two anchors (a sidebar or a block of teasers that the page's
layout puts between two parts of the text) is left out: only gaps of at most MAX_GAP_WORDS
words are filled; so is a run of short labels only (a byline under the headline, an author's
"Joined 2019 Posts: 137" between two posts). A line trafilatura has already, if only as a
heading or with its list number flattened away, is not put in twice. The result stands only
when something was put back and the text grew by at most MAX_GROWTH.

    >>> first = "Install the tool with pip first.\\nThen run it on a folder of pages."
    >>> second = ("Home About\\nInstall the tool with pip first.\\nOn Windows use py -m pip."
    ...     "\\nThen run it on a folder of pages.\\nRelated posts")
    >>> print(fill_gaps(first, second))
    Install the tool with pip first.
    On Windows use py -m pip.
    Then run it on a folder of pages.
"""

from __future__ import annotations

import re

from enrichment.pipeline.extract.choose import shingles, word_count

# A line of resiliparse's text is one of trafilatura's when this share of its 4-grams is there.
LINE_HELD_SHARE = 0.5
# Lines shorter than this (in words) are too short to tell where the two texts agree.
MIN_ANCHOR_WORDS = 4
# A run of lines between two anchors longer than this (in words) is another region.
MAX_GAP_WORDS = 150
# The filled text may be at most this many times longer (in words) than trafilatura's.
MAX_GROWTH = 1.5
_WORD = re.compile(r"\w+")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d+[.)])[ \t]+")


def fill_gaps(
    trafilatura_text: str, resiliparse_text: str, *, seen: str | None = None
) -> str | None:
    """trafilatura's text with resiliparse's short gaps between anchors; None when no gain.

    ``seen`` is trafilatura's text as a reader sees it (markdown flattened: links to their
    labels), when it differs; resiliparse's lines are compared as they are.

    Each text is lower-cased once and split into lines once; trafilatura's lines are read
    for the 4-grams of the anchors that have a gap after them only, and the filled text's
    words are counted from the words put back (a page's other lines cost one split each).
    """
    seen = trafilatura_text if seen is None else seen
    held = shingles(seen)  # cached: the chooser split this text already
    if not held or not resiliparse_text:
        return None
    lines = resiliparse_text.split("\n")
    # Lower-casing the whole text splits into the same lines as the text (no letter's lower
    # case is a line break) and each line the way lower-casing the line alone would.
    anchors = [
        index
        for index, line in enumerate(resiliparse_text.lower().split("\n"))
        if _is_anchor(line, held)
    ]
    gaps = _gaps(lines, anchors, seen)
    if not gaps:
        return None
    first_lines = trafilatura_text.split("\n")
    # Lines are placed by their 4-grams; in markdown a link's target breaks a few of them,
    # the rest of the line still places it.
    placed = _lines_of(
        [set(_four_grams(_WORD.findall(lines[anchor].lower()))) for anchor, _, _ in gaps],
        first_lines,
    )
    inserts: dict[int, list[str]] = {}
    added = 0
    for (_, gap, words), at in zip(gaps, placed, strict=True):
        # After the line of trafilatura's that holds most of the anchor's 4-grams.
        if at is not None:
            inserts.setdefault(at, []).extend(gap)
            added += words
    if not inserts:
        return None
    # The lines put back are whole lines: the filled text has their words and trafilatura's.
    before = word_count(trafilatura_text)
    if before + added > MAX_GROWTH * before:
        return None
    merged: list[str] = []
    for index, line in enumerate(first_lines):
        merged.append(line)
        merged.extend(inserts.get(index, ()))
    return "\n".join(merged)


def _is_anchor(lowered_line: str, held: frozenset[tuple[str, ...]]) -> bool:
    """A line long enough to place, most of whose 4-grams trafilatura's text has too."""
    # Four words take at least seven characters ("a b c d").
    if len(lowered_line) < 2 * MIN_ANCHOR_WORDS - 1:
        return False
    words = _WORD.findall(lowered_line)
    if len(words) < MIN_ANCHOR_WORDS:
        return False
    own = set(_four_grams(words))
    return len(own & held) >= LINE_HELD_SHARE * len(own)


def _gaps(lines: list[str], anchors: list[int], seen: str) -> list[tuple[int, list[str], int]]:
    """Each short run of lines between two anchors that trafilatura lacks, after its anchor,
    with the number of words it holds."""
    present: set[tuple[str, ...]] | None = None
    gaps = []
    for anchor, following in zip(anchors, anchors[1:], strict=False):
        if following == anchor + 1:
            continue
        if present is None:  # the lines trafilatura has, by their words
            present = {_line_words(line) for line in seen.lower().split("\n")}
        gap = [
            line
            for line in lines[anchor + 1 : following]
            if _WORD.search(line) and _line_words(line.lower()) not in present
        ]
        counts = [len(_WORD.findall(line)) for line in gap]
        # Only short lines (a byline under the headline, "Joined 2019 Posts: 137" between
        # two posts) are labels around the content, not content trafilatura pruned.
        if counts and max(counts) >= MIN_ANCHOR_WORDS and sum(counts) <= MAX_GAP_WORDS:
            gaps.append((anchor, gap, sum(counts)))
    return gaps


def _line_words(lowered_line: str) -> tuple[str, ...]:
    """A lower-cased line's words without its list marker.

    "1. Pothos" is the line "Pothos" as a numbered item: flattened markdown lost the number.
    """
    return tuple(_WORD.findall(_LIST_MARKER.sub("", lowered_line, count=1)))


def _lines_of(wanted: list[set[tuple[str, ...]]], lines: list[str]) -> list[int | None]:
    """For each set of 4-grams, the index of the line of ``lines`` holding most of them
    (counted with repeats within a line; the first such line on a tie: the same page
    always gives the same text), or None when no line holds any.

    Only the lines that hold one of the 4-grams at all are counted out.
    """
    every = set().union(*wanted)
    votes: list[dict[int, int]] = [{} for _ in wanted]
    for index, line in enumerate(lines):
        grams = _four_grams(_WORD.findall(line.lower()))
        if every.isdisjoint(grams):
            continue
        for grams_of, counts in zip(wanted, votes, strict=True):
            hits = sum(1 for gram in grams if gram in grams_of)
            if hits:
                counts[index] = hits
    placed: list[int | None] = []
    for counts in votes:
        if not counts:
            placed.append(None)
            continue
        most = max(counts.values())
        placed.append(min(index for index, count in counts.items() if count == most))
    return placed


def _four_grams(words: list[str]) -> list[tuple[str, ...]]:
    """A line's word 4-grams in order (none under four words), as ``choose.shingles`` makes
    a text's.

    Lines are split here, not through ``shingles``: its caches would let a page's many
    lines push out the page's three texts, which the chooser and ``word_count`` read again.
    """
    return list(zip(words, words[1:], words[2:], words[3:], strict=False))
