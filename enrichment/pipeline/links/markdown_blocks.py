"""Block structure of a chat message, as far as inline link parsing needs it.

Which parts of a message get CommonMark inline parsing: paragraphs and headings, cut at
blank lines, fenced and indented code, thematic breaks and setext underlines. Lists and
block quotes count as paragraph text, which leaves inline links unchanged.

>>> text = "a [x](y)\\n\\n```\\n[z](w)\\n```\\n# b"
>>> [text[start:end] for start, end in paragraph_regions(text)]
['a [x](y)\\n', '# b']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

__all__ = ["closing_fence_line", "line_end", "paragraph_regions"]

_END = r"(?=[\r\n]|\Z)"
_LINE_END = re.compile(r"\r\n|\r|\n")
# The kinds of line that may change block structure, tried in this order.
_BLOCK_LINE_KINDS = (
    r"(?P<blank>[ \t]*(?:\r\n|\r|\n|\Z))"
    r"|(?P<indented> {4}| {0,3}\t)"
    r"|(?P<fence> {0,3}(?P<marker>`{3,}(?=[^`\r\n]*" + _END + ")|~{3,}))"
    r"|(?P<heading> {0,3}#{1,6}(?:[ \t]|" + _END + "))"
    r"|(?P<rule> {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,}|-+[ \t]*|=+[ \t]*)"
    + _END
    + ")"
)
_BLOCK_LINE = re.compile(_BLOCK_LINE_KINDS)
# After a "\n": a literal first character lets the regex engine skip ordinary lines fast.
_BLOCK_LINE_AFTER_NEWLINE = re.compile(r"\n(?:" + _BLOCK_LINE_KINDS + ")")


def line_end(text: str, pos: int) -> tuple[int, int]:
    """(end of content, start of next line) for the line starting at ``pos``."""
    match = _LINE_END.search(text, pos)
    return (match.start(), match.end()) if match else (len(text), len(text))


def paragraph_regions(text: str) -> Iterator[tuple[int, int]]:
    """Spans of text that get inline parsing: paragraphs and headings, minus code.

    Only lines that could change block structure are visited (blank, indented, fence,
    heading, thematic break or setext underline); everything between is paragraph text.
    Lists and block quotes are treated as paragraph text, which leaves spans unchanged.
    """
    region_start = pos = 0
    while (found := _next_block_line(text, pos)) is not None:
        block, line = found
        if line >= len(text):
            break
        _content_end, next_line = line_end(text, line)
        pos = next_line if next_line > line else len(text)
        in_paragraph = line > region_start
        kind = block.lastgroup
        if kind == "blank":
            cut = (line, next_line)
        elif kind == "indented":
            if in_paragraph:
                continue  # indented code cannot interrupt a paragraph
            cut = (line, next_line)
        elif kind == "fence":
            close = closing_fence_line(text, block.group("marker"), next_line)
            cut = (line, line_end(text, close)[1] if close is not None else len(text))
        elif kind == "heading":
            if line > region_start:
                yield region_start, line
            cut = (next_line, next_line)
            region_start = line
        elif kind == "rule" and (in_paragraph or text[line] != "="):
            cut = (line, next_line)
        else:
            continue
        if cut[0] > region_start:
            yield region_start, cut[0]
        region_start = pos = cut[1]
    if len(text) > region_start:
        yield region_start, len(text)


def _next_block_line(text: str, pos: int) -> tuple[re.Match[str], int] | None:
    """The first block-changing line at or after ``pos`` and its start (0 or after "\n")."""
    if pos == 0 or text[pos - 1] == "\n":
        block = _BLOCK_LINE.match(text, pos)
        if block is not None:
            return block, pos
    block = _BLOCK_LINE_AFTER_NEWLINE.search(text, pos)
    return (block, block.start() + 1) if block is not None else None


def closing_fence_line(text: str, marker: str, pos: int) -> int | None:
    """Start of the first line at or after ``pos`` (> 0) that closes a ``marker`` fence."""
    # Search from the "\n" ending the previous line, so a line starting at pos counts.
    start = pos - 1 if text[pos - 1] == "\n" else pos
    close = _closing_fence(marker).search(text, start)
    return close.start() + 1 if close is not None else None


@functools.cache
def _closing_fence(marker: str) -> re.Pattern[str]:
    # A literal "\n" first lets the regex engine skip ahead; a MULTILINE "^" does not.
    return re.compile(rf"\n {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*{_END}")
