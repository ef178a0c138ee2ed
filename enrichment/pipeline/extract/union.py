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
words are filled. The result stands only when something was put back and the text grew by at
most MAX_GROWTH.

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
from collections import Counter
from collections.abc import Callable

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
# Not through the cache: a page's many lines would push its three texts out of it.
_line_shingles = shingles.__wrapped__


def fill_gaps(
    trafilatura_text: str,
    resiliparse_text: str,
    *,
    flatten: Callable[[str], str] = str,
) -> str | None:
    """trafilatura's text with resiliparse's short gaps between anchors; None when no gain.

    ``flatten`` turns one line of ``trafilatura_text`` into the words a reader sees (markdown
    mode: links to their labels); resiliparse's lines are compared as they are.
    """
    first_lines = trafilatura_text.split("\n")
    seen_lines = [flatten(line) for line in first_lines] if flatten is not str else first_lines
    held = shingles("\n".join(seen_lines))
    if not held or not resiliparse_text:
        return None
    lines = resiliparse_text.split("\n")
    anchors = [index for index, line in enumerate(lines) if _is_anchor(line, held)]
    gaps = _gaps(lines, anchors, seen_lines)
    if not gaps:
        return None
    where = _lines_of_shingles(seen_lines)
    inserts: dict[int, list[str]] = {}
    for anchor, gap in gaps:
        # After the line of trafilatura's that holds most of the anchor's 4-grams.
        votes = Counter(
            index for shingle in _line_shingles(lines[anchor]) for index in where.get(shingle, ())
        )
        if votes:
            inserts.setdefault(votes.most_common(1)[0][0], []).extend(gap)
    if not inserts:
        return None
    merged: list[str] = []
    for index, line in enumerate(first_lines):
        merged.append(line)
        merged.extend(inserts.get(index, ()))
    filled = "\n".join(merged)
    first_words = word_count("\n".join(seen_lines))
    if word_count(filled) > MAX_GROWTH * first_words:
        return None
    return filled


def _is_anchor(line: str, held: frozenset[tuple[str, ...]]) -> bool:
    """A line long enough to place, most of whose 4-grams trafilatura's text has too."""
    if len(_WORD.findall(line)) < MIN_ANCHOR_WORDS:
        return False
    own = _line_shingles(line)
    return len(own & held) >= LINE_HELD_SHARE * len(own)


def _gaps(
    lines: list[str], anchors: list[int], seen_lines: list[str]
) -> list[tuple[int, list[str]]]:
    """Each short run of lines between two anchors that trafilatura lacks, after its anchor."""
    present = {tuple(_WORD.findall(line.lower())) for line in seen_lines}
    gaps = []
    for anchor, following in zip(anchors, anchors[1:], strict=False):
        gap = [
            line
            for line in lines[anchor + 1 : following]
            if _WORD.search(line) and tuple(_WORD.findall(line.lower())) not in present
        ]
        if gap and sum(len(_WORD.findall(line)) for line in gap) <= MAX_GAP_WORDS:
            gaps.append((anchor, gap))
    return gaps


def _lines_of_shingles(seen_lines: list[str]) -> dict[tuple[str, ...], list[int]]:
    """Each 4-gram of trafilatura's text with the indexes of the lines that have it."""
    where: dict[tuple[str, ...], list[int]] = {}
    for index, line in enumerate(seen_lines):
        for shingle in _line_shingles(line):
            where.setdefault(shingle, []).append(index)
    return where
