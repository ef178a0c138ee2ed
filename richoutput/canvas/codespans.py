"""Markdown code-region detection, shared by every directive parser.

Directives inside code are literal text, so each parser asks ``CodeLocator.contains(offset)``
(regions computed only when needed) before acting on a match. Three kinds of code are recognised: fenced blocks (``` or ~~~,
unclosed fences run to the end of the text), indented code (4+ columns after a blank line,
the start of the text or another code line) and inline code spans (a backtick run closed by
the next run of the same length, never across a blank line or a code block).

>>> regions = find_code_regions("a `[[x]]` b")
>>> regions.contains(3), regions.contains(10)
(True, False)

Everything here is O(n log n): backtick runs, fences and barriers are located with
``str.find`` (line-anchored regexes would be tried at every offset) and paired with
bisection, so hostile inputs (thousands of unmatched backticks) stay cheap.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_FENCE_RUN = re.compile(r"`+|~+")
_BACKTICK_RUN = re.compile("`+")
_INDENTED_LINE = re.compile(r"^(?: {4}| {0,3}\t)", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_TAB_WIDTH = 4
_AFTER_ANY_END = 1 << 62  # sorts after every real end offset in (start, end) pairs


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


def _indent_columns(line: str) -> int:
    columns = 0
    for char in line:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += _TAB_WIDTH - columns % _TAB_WIDTH
        else:
            break
    return columns


def _is_closing_fence(line: str, marker: str) -> bool:
    stripped = line.rstrip(" \t\r")
    body = stripped.lstrip(" ")
    if len(stripped) - len(body) > 3 or not body:
        return False
    return body.startswith(marker) and set(body) == {marker[0]}


def find_block_regions(text: str) -> list[tuple[int, int]]:
    """Fenced and indented code blocks as ``(start, end)`` spans, whole lines each."""
    fences = _fenced_blocks(text) if "```" in text or "~~~" in text else []
    if _maybe_indented(text) and _indented_line_outside(text, fences):
        return _scan_block_lines(text)
    return fences


def _maybe_indented(text: str) -> bool:
    # Indented code needs a line whose indentation reaches four columns: a tab somewhere or
    # four spaces at a line start. Without either, only fences can open a block.
    return "\t" in text or "\n    " in text or text.startswith("    ")


def _indented_line_outside(text: str, fences: list[tuple[int, int]]) -> bool:
    """Whether a line indented four columns or more lies outside every fence.

    A line indented that far never opens or closes a fence, so the fences do not depend on
    indented code; when every such line sits inside a fence (the indented body of a fenced
    snippet), the fences alone are the answer and the line-by-line scan is not needed."""
    if "\t" in text:
        starts: Iterator[int] = (line.start() for line in _INDENTED_LINE.finditer(text))
    else:
        starts = _four_space_line_starts(text)
    return any(not fences or not _inside_spans(fences, start) for start in starts)


def _four_space_line_starts(text: str) -> Iterator[int]:
    # str.find instead of a line-anchored regex, which would be tried at every offset.
    if text.startswith("    "):
        yield 0
    found = text.find("\n    ")
    while found != -1:
        yield found + 1
        found = text.find("\n    ", found + 1)


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    """``find_block_regions`` for text without indented code: only fences, located with
    ``str.find`` (a line-anchored regex would be tried at every offset)."""
    regions: list[tuple[int, int]] = []
    position = 0
    while (opening := _next_fence_opening(text, position)) is not None:
        line_start, marker, marker_end = opening
        line_end = _line_end(text, marker_end)
        if marker[0] == "`" and text.find("`", marker_end, line_end) != -1:
            position = line_end + 1  # an inline span on one line, not a fence
            continue
        closing_end = _closing_fence_end(text, marker, line_end + 1)
        if closing_end is None:
            regions.append((line_start, len(text)))
            break
        position = min(closing_end + 1, len(text))
        regions.append((line_start, position))
    return regions


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end == -1 else end


def _fence_line_start(text: str, offset: int) -> int | None:
    """The start of the line when only up to three spaces precede ``offset`` on it."""
    newline = text.rfind("\n", max(0, offset - 4), offset)
    if newline == -1 and offset > 3:
        return None
    line_start = newline + 1
    return line_start if not text[line_start:offset].strip(" ") else None


def _next_fence_opening(text: str, position: int) -> tuple[int, str, int] | None:
    """``(line start, marker, marker end)`` of the next line opening a fence."""
    while True:
        found = (text.find("```", position), text.find("~~~", position))
        candidates = [offset for offset in found if offset != -1]
        if not candidates:
            return None
        start = min(candidates)
        end = _FENCE_RUN.match(text, start).end()  # type: ignore[union-attr]
        line_start = _fence_line_start(text, start)
        if line_start is not None:
            return line_start, text[start:end], end
        position = end  # the whole run is mid-line: skip it in one step


def _closing_fence_end(text: str, marker: str, position: int) -> int | None:
    """The end of the first line from ``position`` on that closes a ``marker`` fence: up
    to three spaces, at least ``len(marker)`` marker characters, then only blanks."""
    while (start := text.find(marker, position)) != -1:
        end = _FENCE_RUN.match(text, start).end()  # type: ignore[union-attr]
        if _fence_line_start(text, start) is not None:
            line_end = _line_end(text, end)
            if not text[end:line_end].strip(" \t\r"):
                return line_end
        position = end
    return None


def _scan_block_lines(text: str) -> list[tuple[int, int]]:
    regions: list[tuple[int, int]] = []
    offset = 0
    fence: str | None = None  # the opening marker while inside a fenced block
    fence_start = 0
    previous_blank = True  # the start of the text behaves like a blank line
    previous_code = False
    for line in text.split("\n"):
        line_end = offset + len(line)
        next_offset = line_end + 1
        blank = not line.strip(" \t\r")
        if fence is not None:
            if _is_closing_fence(line, fence):
                regions.append((fence_start, min(next_offset, len(text))))
                fence = None
                previous_code = True
            offset = next_offset
            previous_blank = blank
            continue
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in line[opening.end() :]):
            fence = opening.group(1)
            fence_start = offset
        elif not blank and _indent_columns(line) >= 4 and (previous_blank or previous_code):
            regions.append((offset, line_end))
            previous_code = True
        elif not blank:
            previous_code = False
        previous_blank = blank
        offset = next_offset
    if fence is not None:
        regions.append((fence_start, len(text)))
    return regions


def _inline_regions(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    positions: list[int] = []
    lengths: list[int] = []
    # str.find jumps between backticks far faster than a regex scan over every character.
    start = text.find("`")
    while start != -1:
        end = _BACKTICK_RUN.match(text, start).end()  # type: ignore[union-attr]
        if not blocks or not _inside_spans(blocks, start):
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
    barriers = _Barriers(text, [start for start, _ in blocks])
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


def _inside_spans(spans: list[tuple[int, int]], offset: int) -> bool:
    index = bisect_right(spans, (offset, _AFTER_ANY_END)) - 1
    return index >= 0 and offset < spans[index][1]


class _Barriers:
    """Blank lines and code-block starts, which no inline span crosses.

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
    return _block_regions(text) if _maybe_block(text) else NO_CODE


def _maybe_block(text: str) -> bool:
    # Substring checks, much cheaper than a line scan: without a fence marker, a tab or a
    # four-space indent there can be no code block.
    return "```" in text or "~~~" in text or _maybe_indented(text)


# Successive parsers often look at the same text (a pass that removed nothing hands its
# input on unchanged), so tiny caches save recomputing the regions.
@lru_cache(maxsize=4)
def _block_regions(text: str) -> CodeRegions:
    blocks = find_block_regions(text)
    starts, ends = _unzip(blocks)
    return CodeRegions(starts, ends, starts, ends)


@lru_cache(maxsize=4)
def _all_regions(text: str) -> CodeRegions:
    blocks = _block_regions(text) if _maybe_block(text) else NO_CODE
    block_spans = list(zip(blocks.block_starts, blocks.block_ends, strict=True))
    inline = _inline_regions(text, block_spans)
    if not inline:
        return blocks
    spans = sorted(block_spans + inline) if block_spans else inline
    starts, ends = _unzip(spans)
    return CodeRegions(starts, ends, blocks.block_starts, blocks.block_ends)


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
