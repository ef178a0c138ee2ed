"""Markdown code-region detection, shared by every directive parser.

Directives inside code are literal text, so each parser asks ``CodeLocator.contains(offset)``
(regions computed only when needed) before acting on a match. Three kinds of code are
recognised: fenced blocks and indented code (the pipeline's markdown block scanner,
``enrichment.pipeline.markdown.blocks.code_blocks``, which also says which line endings
count) and inline code spans (a backtick run closed by the next run of the same length,
never across a blank line or a code block).

>>> regions = find_code_regions("a `[[x]]` b")
>>> regions.contains(3), regions.contains(10)
(True, False)

Everything here is O(n log n): backtick runs are located with ``str.find`` and paired with
bisection, so hostile inputs (thousands of unmatched backticks) stay cheap.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from enrichment.pipeline.markdown.blocks import (
    code_blocks,
    in_spans,
    line_fed,
    may_hold_code_block,
)

_BACKTICK_RUN = re.compile("`+")
# A line holding only blanks, on line-fed text (where "\r" stands only before "\n").
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


@dataclass(frozen=True)
class CodeRegions:
    """Sorted, non-overlapping ``[start, end)`` spans of code in one text."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    block_starts: tuple[int, ...]
    block_ends: tuple[int, ...]

    def contains(self, offset: int) -> bool:
        return _inside(self.starts, self.ends, offset)

    def in_block(self, offset: int) -> bool:
        """True when ``offset`` lies in a fenced or indented code block (not inline code)."""
        return _inside(self.block_starts, self.block_ends, offset)


def _inside(starts: tuple[int, ...], ends: tuple[int, ...], offset: int) -> bool:
    index = bisect_right(starts, offset) - 1
    return index >= 0 and offset < ends[index]


def _inline_regions(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    positions: list[int] = []
    lengths: list[int] = []
    # str.find jumps between backticks far faster than a regex scan over every character.
    start = text.find("`")
    while start != -1:
        end = _BACKTICK_RUN.match(text, start).end()  # type: ignore[union-attr]
        if not blocks or not in_spans(blocks, start):
            positions.append(start)
            lengths.append(end - start)
        start = text.find("`", end)
    if len(positions) < 2:
        return []
    # next_same[i]: index of the next run with the same length (one backward sweep).
    next_same: list[int | None] = [None] * len(positions)
    last_seen: dict[int, int] = {}
    for index in range(len(positions) - 1, -1, -1):
        next_same[index] = last_seen.get(lengths[index])
        last_seen[lengths[index]] = index
    barriers = _Barriers(line_fed(text), [start for start, _ in blocks])
    regions: list[tuple[int, int]] = []
    index = 0
    while index < len(positions):
        closing_index = next_same[index]
        if closing_index is None:
            index += 1
            continue
        position = positions[index]
        closing = positions[closing_index]
        if barriers.between(position, closing):
            index += 1
            continue
        regions.append((position, closing + lengths[index]))
        index = closing_index + 1
    return regions


class _Barriers:
    """Blank lines and code-block starts, which no inline span crosses (``text`` is
    line-fed, so a bare "\\r" ends a line here as it does for the blocks).

    The blank-line offsets are collected on first need: most spans sit on one line, and a
    span without a line feed inside cannot cross a blank line."""

    def __init__(self, text: str, block_starts: list[int]) -> None:
        self._text = text
        self._blank_lines: list[int] | None = None
        self._block_starts = block_starts

    def between(self, start: int, end: int) -> bool:
        if self._text.find("\n", start, end) != -1:
            if self._blank_lines is None:
                self._blank_lines = [m.start() + 1 for m in _BLANK_LINE.finditer(self._text)]
            if _any_in(self._blank_lines, start, end):
                return True
        return _any_in(self._block_starts, start, end)


def _any_in(offsets: list[int], start: int, end: int) -> bool:
    index = bisect_left(offsets, start)
    return index < len(offsets) and offsets[index] < end


NO_CODE = CodeRegions((), (), (), ())


def find_code_regions(text: str, *, include_inline: bool = True) -> CodeRegions:
    """Code spans of ``text``; ``include_inline=False`` gives the blocks only (cheaper)."""
    if include_inline and "`" in text:
        return _all_regions(text)
    return _block_regions(text) if may_hold_code_block(text) else NO_CODE


# Successive parsers often look at the same text (a pass that removed nothing hands its
# input on unchanged), so tiny caches save recomputing the regions.
@lru_cache(maxsize=4)
def _block_regions(text: str) -> CodeRegions:
    blocks = code_blocks(text)
    starts, ends = _unzip(blocks)
    return CodeRegions(starts, ends, starts, ends)


@lru_cache(maxsize=4)
def _all_regions(text: str) -> CodeRegions:
    blocks = _block_regions(text) if may_hold_code_block(text) else NO_CODE
    block_spans = list(zip(blocks.block_starts, blocks.block_ends, strict=True))
    inline = _inline_regions(text, block_spans)
    if not inline:
        return blocks
    spans = sorted(block_spans + inline) if block_spans else inline
    starts, ends = _unzip(spans)
    return CodeRegions(starts, ends, blocks.block_starts, blocks.block_ends)


def clear_code_region_cache() -> None:
    """Forget the remembered regions, so that a benchmark times each parse from cold."""
    _block_regions.cache_clear()
    _all_regions.cache_clear()


def _unzip(spans: list[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (tuple(start for start, _ in spans), tuple(end for _, end in spans))


class CodeLocator:
    """``CodeRegions`` of one text, computed on demand.

    Inline spans start and end at backticks, so an offset before the first backtick or
    after the last one is code only inside a block; asking about such offsets never pairs
    backtick runs. Reply tags (usually first) and embeds or ``MEDIA:`` lines (usually last)
    are then checked at almost no cost.

    >>> locator = CodeLocator("[[reply_to_current]] run `[[x]]` [[y]]")
    >>> locator.contains(0), locator.contains(26), locator.contains(33)
    (False, True, False)
    """

    __slots__ = ("_text", "_first_backtick", "_last_backtick", "_regions", "_blocks")

    def __init__(self, text: str) -> None:
        self._text = text
        self._first_backtick = text.find("`")
        self._last_backtick = text.rfind("`")
        self._regions: CodeRegions | None = None
        self._blocks: CodeRegions | None = None  # kept: hostile texts ask thousands of times

    def contains(self, offset: int) -> bool:
        if not self._first_backtick <= offset <= self._last_backtick:
            return self.in_block(offset)
        if self._regions is None:
            self._regions = find_code_regions(self._text)
        return self._regions.contains(offset)

    def in_block(self, offset: int) -> bool:
        if self._blocks is None:
            self._blocks = find_code_regions(self._text, include_inline=False)
        return self._blocks.in_block(offset)
