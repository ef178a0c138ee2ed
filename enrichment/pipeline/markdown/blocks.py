"""The block structure of markdown text: fenced code, indented code and what lies between.

One scanner, read two ways:

- ``paragraph_regions`` (link detection): the spans that get CommonMark inline parsing,
  i.e. paragraphs and headings, cut at blank lines, code blocks, thematic breaks and
  setext underlines. Lists and block quotes count as paragraph text, which leaves inline
  links unchanged.
- ``code_blocks`` (the canvas directive parsers): fenced and indented code, where a
  directive is literal text. This reading knows no headings or thematic breaks: they are
  paragraph text to it, so an indented line right below one continues that paragraph.

The rules both readings share (CommonMark 0.31, 4.4 and 4.5):

- A fence is a run of three or more backticks or tildes after at most three spaces; a
  backtick fence's info string holds no backtick. The closing fence is a run of the same
  character, at least as long, after at most three spaces and followed only by spaces and
  tabs. An unclosed fence runs to the end of the text.
- A line indented four columns or more (a tab reaches the next multiple of four) is
  indented code, unless it continues a paragraph.

Line endings are CommonMark's: ``\\n``, ``\\r\\n`` and a bare ``\\r`` each end a line, as in
the markdown view that shows these texts, so a directive shown inside a code block is the
one left literal. (Before, the canvas split lines on ``\\n`` only and link detection looked
for block lines only after a ``\\n``.) Chat text rarely holds a bare ``\\r``; where it does,
the scan reads a copy in which each one is a ``\\n`` (``line_fed``: the same length, so
every offset holds), and everything below meets only ``\\n`` and ``\\r\\n``.

>>> text = "a [x](y)\\n\\n```\\n[z](w)\\n```\\n# b\\n    c"
>>> [text[start:end] for start, end in paragraph_regions(text)]
['a [x](y)\\n', '# b\\n']
>>> [text[start:end] for start, end in code_blocks(text)]
['```\\n[z](w)\\n```\\n']
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple

__all__ = [
    "code_blocks",
    "fence_opening",
    "fenced_block_end",
    "in_spans",
    "line_fed",
    "may_hold_code_block",
    "paragraph_regions",
]

_END = r"(?=[\r\n]|\Z)"  # on line-fed text a "\r" stands only before "\n"
# The kinds of line that may change block structure, tried in this order. "blank" takes a
# whole run of blank lines at once (possessive: nothing to backtrack into), or a last line
# holding only blanks.
_BLANK = r"(?P<blank>[ \t]*+(?:\r?\n(?:[ \t]*+\r?\n)*+|\Z))"
_INDENTATION = r" {4}| {0,3}\t"  # four columns or more: a tab reaches the next multiple of 4
_INDENTED = rf"(?P<indented>{_INDENTATION})"
_FENCE = r"(?P<fence> {0,3}(?P<marker>`{3,}(?=[^`\r\n]*" + _END + ")|~{3,}))"
_HEADING = r"(?P<heading> {0,3}#{1,6}(?:[ \t]|" + _END + "))"
_RULE = (
    r"(?P<rule> {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,}|-+[ \t]*|=+[ \t]*)"
    + _END
    + ")"
)
_INDENTED_TEXT_START = re.compile(_INDENTATION)
_INDENTED_LINE_AFTER_NEWLINE = re.compile(rf"\n(?:{_INDENTATION})")
_AFTER_ANY_END = 1 << 62  # sorts after every real end offset in (start, end) pairs


class _Grammar(NamedTuple):
    """The block-changing kinds of line one reading looks for."""

    at_line: re.Pattern[str]
    # "\n" and then a line: a literal first character lets the regex engine skip ordinary
    # lines fast (a MULTILINE "^" would be tried at every offset).
    after_newline: re.Pattern[str]


def _grammar(*kinds: str) -> _Grammar:
    either = "|".join(kinds)
    return _Grammar(re.compile(either), re.compile(rf"\n(?:{either})"))


_PARAGRAPH_BREAKS = _grammar(_BLANK, _INDENTED, _FENCE, _HEADING, _RULE)
_CODE = _grammar(_BLANK, _INDENTED, _FENCE)
_FENCES = _grammar(_FENCE)


def line_fed(text: str) -> str:
    """``text`` with each bare ``\\r`` (a line ending of its own) made a ``\\n``.

    >>> line_fed("a\\rb\\r\\nc") == "a\\nb\\r\\nc"
    True
    """
    if "\r" not in text:
        return text
    # str methods, not a regex substitution: a text of many bare "\r" stays cheap.
    return "\r\n".join(part.replace("\r", "\n") for part in text.split("\r\n"))


def paragraph_regions(text: str) -> Iterator[tuple[int, int]]:
    """Spans of ``text`` that get inline parsing: paragraphs and headings, minus code.

    Only lines that could change block structure are visited (blank, indented, fence,
    heading, thematic break or setext underline); everything between is paragraph text.
    """
    start = 0
    for kind, block_start, block_end in _blocks(line_fed(text), _PARAGRAPH_BREAKS):
        if block_start > start:
            yield start, block_start
        if kind == "heading":
            yield block_start, block_end
        start = block_end
    if len(text) > start:
        yield start, len(text)


def code_blocks(text: str) -> list[tuple[int, int]]:
    """Fenced and indented code of ``text`` as sorted ``(start, end)`` spans.

    A fenced block spans its opening line to the end of its closing line (line ending
    included) or of the text; indented code is one span per line, without its ``\\n``.

    >>> code_blocks("x\\n\\n    a\\n    b\\n~~~\\nc")
    [(3, 8), (9, 14), (15, 20)]
    """
    if not may_hold_code_block(text):
        return []
    fed = line_fed(text)
    fences = _fences(fed) if "```" in fed or "~~~" in fed else []
    if not _maybe_indented(fed) or not _indented_line_outside(fed, fences):
        return fences
    # Indented code depends on what precedes it (blank lines, code, paragraph text), so the
    # lines are walked in order; the fences come out the same.
    return [
        (start, end if kind == "fence" or fed[end - 1] != "\n" else end - 1)
        for kind, start, end in _blocks(fed, _CODE)
        if kind != "blank"
    ]


def may_hold_code_block(text: str) -> bool:
    """False when ``text`` can hold no code block: a few substring checks, much cheaper
    than a line scan (no fence marker, no tab and no line starting with four spaces)."""
    return "```" in text or "~~~" in text or _maybe_indented(text)


def fence_opening(text: str, line: int) -> re.Match[str] | None:
    """The fence that the line starting at ``line`` opens (its run is the ``marker``
    group), or None. ``text`` is line-fed."""
    return _FENCES.at_line.match(text, line)


def fenced_block_end(text: str, opening: re.Match[str]) -> int:
    """Where the fenced block that ``opening`` (a ``fence_opening``) opens ends: the start
    of the line after its closing fence, or the text's length when no line closes it.
    ``text`` is line-fed."""
    marker = opening.group("marker")
    # Search from the "\n" ending the opening line, so the body's first line counts.
    close = _closing_fence(marker).search(text, opening.end())
    return _next_line(text, close.end()) if close is not None else len(text)


def in_spans(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` lies in one of the sorted, non-overlapping ``spans``."""
    index = bisect_right(spans, (offset, _AFTER_ANY_END)) - 1
    return index >= 0 and offset < spans[index][1]


def _blocks(text: str, grammar: _Grammar) -> Iterator[tuple[str, int, int]]:
    """``(kind, start, end)`` of each block of line-fed ``text`` that ``grammar`` knows.

    The kinds: "blank" (a run of blank lines), "indented" (one line of indented code),
    "fence" (with its body), "heading" and "rule". ``start`` is the block's first line,
    ``end`` the start of the line after it (the text's length at the end); the text between
    two blocks is paragraph text. Only the lines the grammar matches are visited.
    """
    at_line, after_newline = grammar
    length = len(text)
    paragraph_start = pos = 0  # pos is always a line start; paragraph text would start here
    while pos < length:
        if (match := at_line.match(text, pos)) is not None:
            line = pos
        elif (match := after_newline.search(text, pos)) is not None:
            line = match.start() + 1
        else:
            return
        if line >= length:
            return
        kind = match.lastgroup or ""
        if kind == "blank":
            end = match.end()
        else:
            newline = text.find("\n", match.end())
            end = length if newline == -1 else newline + 1
            if kind == "indented" and line > paragraph_start:
                pos = end
                continue  # indented code cannot interrupt a paragraph
            if kind == "rule" and line == paragraph_start and text[line] == "=":
                pos = end
                continue  # no setext underline without a paragraph above it
            if kind == "fence":
                end = fenced_block_end(text, match)
        yield kind, line, end
        pos = paragraph_start = end


def _next_line(text: str, pos: int) -> int:
    """The start of the line after the one holding ``pos`` (the text's length at the end)."""
    newline = text.find("\n", pos)
    return len(text) if newline == -1 else newline + 1


@functools.cache
def _closing_fence(marker: str) -> re.Pattern[str]:
    return re.compile(rf"\n {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*{_END}")


def _fences(text: str) -> list[tuple[int, int]]:
    return [(start, end) for _kind, start, end in _blocks(text, _FENCES)]


def _maybe_indented(text: str) -> bool:
    # Indented code needs a line whose indentation reaches four columns: a tab somewhere or
    # four spaces at a line start. Without either, only fences can open a block.
    return "\t" in text or text.startswith("    ") or "\n    " in text or "\r    " in text


def _indented_line_outside(text: str, fences: list[tuple[int, int]]) -> bool:
    """Whether a line indented four columns or more lies outside every fence.

    A line indented that far never opens or closes a fence, so the fences do not depend on
    indented code; when every such line sits inside a fence (the indented body of a fenced
    snippet), the fences alone are the answer and the line-by-line walk is not needed."""
    starts = _indented_line_starts(text) if "\t" in text else _four_space_line_starts(text)
    return any(not fences or not in_spans(fences, start) for start in starts)


# Both look from the "\n" before a line: a line-anchored regex is tried at every offset.
def _indented_line_starts(text: str) -> Iterator[int]:
    if _INDENTED_TEXT_START.match(text):
        yield 0
    yield from (line.start() + 1 for line in _INDENTED_LINE_AFTER_NEWLINE.finditer(text))


def _four_space_line_starts(text: str) -> Iterator[int]:
    if text.startswith("    "):
        yield 0
    found = text.find("\n    ")
    while found != -1:
        yield found + 1
        found = text.find("\n    ", found + 1)
