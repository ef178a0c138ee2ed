"""Markdown code-region detection, shared by every directive parser.

Directives inside code are literal text, so each parser asks ``CodeRegions.contains(offset)``
before acting on a match. Three kinds of code are recognised: fenced blocks (``` or ~~~,
unclosed fences run to the end of the text), indented code (4+ columns after a blank line,
the start of the text or another code line) and inline code spans (a backtick run closed by
the next run of the same length, never across a blank line or a code block).

>>> regions = find_code_regions("a `[[x]]` b")
>>> regions.contains(3), regions.contains(10)
(True, False)

Everything here is O(n log n): backtick runs and barriers are located once and paired
with bisection, so hostile inputs (thousands of unmatched backticks) stay cheap.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_TAB_WIDTH = 4


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


def _backtick_runs(text: str) -> list[tuple[int, int]]:
    """``(offset, length)`` of each maximal run of backticks."""
    runs: list[tuple[int, int]] = []
    start = text.find("`")
    while start != -1:
        end = start + 1
        while end < len(text) and text[end] == "`":
            end += 1
        runs.append((start, end - start))
        start = text.find("`", end)
    return runs


def _inline_regions(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    block_starts = tuple(start for start, _ in blocks)
    block_ends = tuple(end for _, end in blocks)
    runs = _backtick_runs(text)
    if blocks:
        runs = [run for run in runs if not _inside(block_starts, block_ends, run[0])]
    if len(runs) < 2:
        return []
    # next_same[i]: index of the next run with the same length (one backward sweep).
    next_same: list[int | None] = [None] * len(runs)
    last_seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1]
        next_same[index] = last_seen.get(length)
        last_seen[length] = index
    barriers = [m.start() + 1 for m in _BLANK_LINE.finditer(text)] if "\n" in text else []
    if blocks:
        barriers = sorted(barriers + list(block_starts))
    regions: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        closing_index = next_same[index]
        if closing_index is None:
            index += 1
            continue
        position, length = runs[index]
        closing = runs[closing_index][0]
        barrier_index = bisect_left(barriers, position) if barriers else 0
        if barrier_index < len(barriers) and barriers[barrier_index] < closing:
            index += 1
            continue
        regions.append((position, closing + length))
        index = closing_index + 1
    return regions


NO_CODE = CodeRegions((), (), (), ())


def find_code_regions(text: str, *, include_inline: bool = True) -> CodeRegions:
    maybe_inline = include_inline and "`" in text
    if not maybe_inline and not _maybe_block(text):
        return NO_CODE
    return _find_code_regions(text, include_inline)


def _maybe_block(text: str) -> bool:
    # Substring checks, much cheaper than a line scan: without a fence marker, a tab or a
    # four-space indent there can be no code block.
    return (
        "```" in text
        or "~~~" in text
        or "\t" in text
        or "\n    " in text
        or text.startswith("    ")
    )


# Successive parsers often look at the same text (a pass that removed nothing hands its
# input on unchanged), so a tiny cache saves recomputing the regions.
@lru_cache(maxsize=4)
def _find_code_regions(text: str, include_inline: bool) -> CodeRegions:
    blocks = find_block_regions(text) if _maybe_block(text) else []
    spans = list(blocks)
    if include_inline and "`" in text:
        spans.extend(_inline_regions(text, blocks))
        if blocks:
            spans.sort()
    starts, ends = zip(*spans, strict=True) if spans else ((), ())
    block_starts, block_ends = zip(*blocks, strict=True) if blocks else ((), ())
    return CodeRegions(starts, ends, block_starts, block_ends)
