"""Where a chat message holds CommonMark inline links, images and autolinks (no GFM).

Link detection removes these spans before scanning for bare URLs, so links a user
*presented* are not fetched again. Code spans, code blocks, raw HTML and reference
definitions are recognised only so that their brackets do not pair; they are kept.

>>> text = 'a [x](y "t") b ![i](j) <https://k> `[l](m)` c'
>>> [text[start:end] for start, end in markdown_link_spans(text)]
['[x](y "t")', '![i](j)', '<https://k>']
>>> strip_markdown_links(text)
'a   b     `[l](m)` c'
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from enrichment.pipeline.markdown.blocks import (
    fence_opening,
    fenced_block_end,
    paragraph_regions,
)

# "(dest)" or '(dest "title")' with nothing to unescape or balance, in one match.
_SIMPLE_RESOURCE = re.compile(
    r'\((?:[^\x00-\x20\x7f()\\<][^\x00-\x20\x7f()\\]*(?:[ \t]+"[^"\\\r\n]*")?)?\)'
)
_SPACE_ONE_NEWLINE = re.compile(r"[ \t]*(?:(?:\r\n|\r|\n)[ \t]*)?")
_ANGLE_DESTINATION = re.compile(r"<(?:[^<>\\\r\n]|\\[^\r\n])*>")
_RAW_DESTINATION_CHUNK = re.compile(r"[^\x00-\x20\x7f()\\]+")
_TITLE = {
    '"': re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL),
    "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.DOTALL),
    "(": re.compile(r"\((?:[^()\\]|\\.)*\)", re.DOTALL),
}
_DEFINITION_CANDIDATE = re.compile(r"^ {0,3}\[(?:[^\[\]\\]|\\.)+\]:", re.MULTILINE)
_DEFINITION_LABEL = re.compile(r" {0,3}\[((?:[^\[\]\\]|\\.){1,999})\]:", re.DOTALL)
_LINE_REST = re.compile(r"[ \t]*(?:\r\n|\r|\n|\Z)")
# Each branch starts with a literal so the regex engine skips ahead on a first-character
# set; a "[\[\]<`]" branch (or "`+") makes it try every position, several times slower.
_INLINE_SPECIAL = re.compile(r"\\[!-/:-@\[-`{-~]|!\[|\[|\]|<|`")
_BACKTICKS = re.compile(r"``*")
_AUTOLINK = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\x00-\x20\x7f<>]*"
    r"|[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>"
)
_HTML_TAG = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*"
    r"(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?"
    r"|/[A-Za-z][A-Za-z0-9-]*\s*|!--->|!-->)>"
)
_HTML_UNTIL = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_REFERENCE_LABEL = re.compile(r"\[((?:[^\[\]\\]|\\.){0,999})\]", re.DOTALL)
_MAX_PAREN_DEPTH = 32  # micromark's limit for unbracketed destinations
# The constructs of the common chat message, for ``simple_link_spans``: an inline link
# or image whose label holds no bracket, backslash, backtick or "<" and whose resource
# is simple; a code span between single backticks on one line.
_SIMPLE_LINK = re.compile(r"\[[^\[\]\\`<\r\n]*\]" + _SIMPLE_RESOURCE.pattern)
_SIMPLE_CODE_SPAN = re.compile(r"`[^`\r\n]+`(?!`)")
_FENCE_MARKER = "`" * 3


def strip_markdown_links(text: str) -> str:
    """Replace each outermost inline link, image or autolink span with one space.

    >>> strip_markdown_links("a [x [y]](<b c> 'it\\\\'s') ![i](j) <https://k> `[l](m)` [r]: https://n")
    'a       `[l](m)` [r]: https://n'
    """
    return "".join(sanitized_pieces(text))


def sanitized_pieces(text: str, needle: str | None = None) -> Iterator[str]:
    """``strip_markdown_links(text)`` in consecutive pieces, computed lazily.

    Link spans never cross a paragraph, and pieces end at line starts, so a caller that
    only needs the first few links stops parsing early. Reference definitions anywhere
    change how brackets pair, so when the text may hold one, all are collected first.

    With ``needle``, a paragraph that does not contain it is passed through unparsed:
    its spans could only remove text in which a caller looking for ``needle`` (and for
    runs of non-whitespace around it, which never cross a piece) finds nothing anyway.

    >>> list(sanitized_pieces("[a](b) no link\\n\\nsee [c](http://d) http://e", needle="://"))
    ['[a](b) no link\\n\\nsee ', ' ', ' http://e', '']
    """
    if ("](" not in text and "<" not in text) or (needle is not None and needle not in text):
        yield text  # no inline link or autolink can exist (or matter): skip the parse
        return
    definitions: set[str] = set()
    regions: Iterable[tuple[int, int]] = paragraph_regions(text)
    if "]:" in text and _DEFINITION_CANDIDATE.search(text):
        regions = [(_skip_definitions(text, s, e, definitions), e) for s, e in regions]
    cursor = 0
    for start, end in regions:
        if needle is not None and text.find(needle, start, end) == -1:
            continue  # its text is yielded with the next piece, unchanged
        spans = _region_spans(text, start, end, definitions)
        for span_start, span_end in spans:
            yield text[cursor:span_start]
            yield " "
            cursor = span_end
        yield text[cursor:end]
        cursor = end
    yield text[cursor:]


def markdown_link_spans(text: str) -> list[tuple[int, int]]:
    """Outermost ``[start, end)`` spans of inline links, images and autolinks, in order."""
    definitions: set[str] = set()
    regions = [(_skip_definitions(text, s, e, definitions), e) for s, e in paragraph_regions(text)]
    return [span for start, end in regions for span in _region_spans(text, start, end, definitions)]


def simple_link_spans(text: str) -> list[tuple[int, int]] | None:
    """``markdown_link_spans(text)`` for the common chat message, found with string
    searches instead of a scan of every character; None when the text needs the parser.

    The common message: no tab, carriage return, indented line, "~~~" fence or link
    reference definition; "```" only as fences; and outside fences, every "[", "<" and
    backtick opens a simple link, image, autolink or code span (``_SIMPLE_LINK``,
    ``_AUTOLINK``, ``_SIMPLE_CODE_SPAN``) not preceded by a backslash. None of these
    constructs crosses a line, and no bracket is ever left open, so paragraph breaks do
    not matter and each construct is what the full scan finds at the same place.

    >>> simple_link_spans("see [a](https://x) `[b](c)` <https://y>")
    [(4, 18), (28, 39)]
    >>> simple_link_spans("a [b] c") is None
    True
    """
    if "\t" in text or "\r" in text or "~~~" in text:
        return None
    if "]:" in text and _DEFINITION_CANDIDATE.search(text):
        return None
    spans: list[tuple[int, int]] = []
    start = 0
    while (fence := text.find(_FENCE_MARKER, start)) != -1:
        line = text.rfind("\n", 0, fence) + 1
        opening = fence_opening(text, line)
        if opening is None or opening.start("marker") != fence:
            return None  # a run of three backticks that does not open a fence
        if not _simple_paragraphs(text, start, line, spans):
            return None
        start = fenced_block_end(text, opening)
    return spans if _simple_paragraphs(text, start, len(text), spans) else None


def _simple_paragraphs(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Append the spans of ``text[start:end]`` (no fence inside); False if not simple."""
    if text.startswith("    ", start) or text.find("\n    ", start, end) != -1:
        return False  # maybe indented code
    bracket, angle, tick = (_find_or_end(text, char, start, end) for char in "[<`")
    while (at := min(bracket, angle, tick)) < end:
        if at > start and text[at - 1] == "\\":
            return False  # an escape: the full scanner decides what it means
        char = text[at]
        if char == "`":
            match = _SIMPLE_CODE_SPAN.match(text, at, end)
        elif char == "<":
            match = _AUTOLINK.match(text, at, end)
        else:
            match = _SIMPLE_LINK.match(text, at, end)
            if at > start and text[at - 1] == "!":
                if at - 1 > start and text[at - 2] == "\\":
                    return False
                at -= 1  # an image
        if match is None:
            return False
        after = match.end()
        if char != "`":
            spans.append((at, after))
        if bracket < after:
            bracket = _find_or_end(text, "[", after, end)
        if angle < after:
            angle = _find_or_end(text, "<", after, end)
        if tick < after:
            tick = _find_or_end(text, "`", after, end)
    return True


def _find_or_end(text: str, char: str, start: int, end: int) -> int:
    found = text.find(char, start, end)
    return end if found == -1 else found


def _region_spans(text: str, start: int, end: int, definitions: set[str]) -> list[tuple[int, int]]:
    if text.find("](", start, end) == -1 and text.find("<", start, end) == -1:
        return []
    spans: list[tuple[int, int]] = []
    _InlineScanner(text, start, end, definitions, spans).run()
    spans.sort(key=lambda span: (span[0], -span[1]))
    outermost: list[tuple[int, int]] = []
    for span in spans:
        if not outermost or span[0] >= outermost[-1][1]:
            outermost.append(span)
    return outermost


def _skip_space(text: str, pos: int, end: int) -> int:
    """Skip spaces and tabs including at most one line ending."""
    return _SPACE_ONE_NEWLINE.match(text, pos, end).end()  # type: ignore[union-attr]


def _normalize_label(label: str) -> str:
    return " ".join(label.split()).casefold()


def _skip_definitions(text: str, pos: int, end: int, definitions: set[str]) -> int:
    """Record the link reference definitions opening a paragraph; return where it goes on."""
    while (label := _DEFINITION_LABEL.match(text, pos, end)) is not None:
        if not label.group(1).strip():
            break
        after = _definition_end(text, _skip_space(text, label.end(), end), end)
        if after is None:
            break
        definitions.add(_normalize_label(label.group(1)))
        pos = after
    return pos


def _definition_end(text: str, pos: int, end: int) -> int | None:
    destination_end = _destination_end(text, pos, end)
    if destination_end is None or destination_end == pos:
        return None
    space_end = _skip_space(text, destination_end, end)
    if space_end > destination_end and space_end < end and text[space_end] in _TITLE:
        title = _TITLE[text[space_end]].match(text, space_end, end)
        rest = _LINE_REST.match(text, title.end(), end) if title else None
        if rest is not None:
            return rest.end()
    rest = _LINE_REST.match(text, destination_end, end)
    return rest.end() if rest else None


def _destination_end(text: str, pos: int, end: int) -> int | None:
    """End of a link destination starting at ``pos`` (may be empty), or None if invalid."""
    if pos < end and text[pos] == "<":
        angle = _ANGLE_DESTINATION.match(text, pos, end)
        return angle.end() if angle else None
    depth = 0
    while pos < end:
        chunk = _RAW_DESTINATION_CHUNK.match(text, pos, end)
        if chunk is not None:
            pos = chunk.end()
            continue
        char = text[pos]
        if char == "\\":
            pos += 2 if pos + 1 < end and text[pos + 1] in "()\\" else 1
        elif char == "(":
            depth += 1
            if depth > _MAX_PAREN_DEPTH:
                return None
            pos += 1
        elif char == ")" and depth > 0:
            depth -= 1
            pos += 1
        else:
            break
    return pos if depth == 0 else None


class _InlineScanner:
    """The CommonMark "look for link or image" pass over one paragraph.

    Code spans, autolinks and raw HTML are consumed as they are met (their brackets do
    not count); ``]`` closes the latest opener. A link deactivates every earlier ``[``
    opener, tracked with a watermark on the opener stack so that runs like 100 KiB of
    ``[`` stay linear.
    """

    def __init__(
        self, text: str, start: int, end: int, definitions: set[str], spans: list[tuple[int, int]]
    ) -> None:
        self.text, self.start, self.end = text, start, end
        self.definitions, self.spans = definitions, spans
        self.openers: list[tuple[int, bool]] = []  # (position, is image)
        self.watermark = 0  # non-image openers below this index are inactive
        self.backtick_runs: dict[int, list[int]] | None = None
        self.search_cache: dict[str, tuple[int, int]] = {}

    def run(self) -> None:
        text, end, openers = self.text, self.end, self.openers
        pos = self.start
        while (match := _INLINE_SPECIAL.search(text, pos, end)) is not None:
            at = match.start()
            first = text[at]
            if first == "[":
                openers.append((at, False))
                pos = at + 1
            elif first == "!":
                openers.append((at, True))
                pos = at + 2
            elif first == "]":
                pos = self._close_bracket(at)
            elif first == "`":
                pos = self._code_span(at)
            elif first == "<":
                pos = self._angle(at)
            else:  # a backslash escape
                pos = match.end()

    def _code_span(self, at: int) -> int:
        length = _BACKTICKS.match(self.text, at, self.end).end() - at  # type: ignore[union-attr]
        if self.backtick_runs is None:
            self.backtick_runs = {}
            for run in _BACKTICKS.finditer(self.text, self.start, self.end):
                self.backtick_runs.setdefault(run.end() - run.start(), []).append(run.start())
        starts = self.backtick_runs.get(length, [])
        index = bisect.bisect_right(starts, at)
        return starts[index] + length if index < len(starts) else at + length

    def _angle(self, at: int) -> int:
        autolink = _AUTOLINK.match(self.text, at, self.end)
        if autolink is not None:
            self.spans.append((at, autolink.end()))
            return autolink.end()
        tag = _HTML_TAG.match(self.text, at, self.end)
        if tag is not None:
            return tag.end()
        for opening, closing in _HTML_UNTIL:
            if self.text.startswith(opening, at) and (
                opening != "<!" or _ASCII_LETTER.match(self.text, at + 2, self.end)
            ):
                found = self._find(closing, at + len(opening))
                return found + len(closing) if found != -1 else at + 1
        return at + 1

    def _find(self, needle: str, pos: int) -> int:
        """str.find bounded to the paragraph, remembering the last answer so repeated
        unclosed openers (``<!--<!--<!--``) cost linear time."""
        searched_from, found = self.search_cache.get(needle, (self.end + 1, -1))
        if pos >= searched_from and (found == -1 or found >= pos):
            return found
        found = self.text.find(needle, pos, self.end)
        self.search_cache[needle] = (pos, found)
        return found

    def _close_bracket(self, at: int) -> int:
        if not self.openers:
            return at + 1
        opener, image = self.openers.pop()
        active = image or len(self.openers) >= self.watermark
        self.watermark = min(self.watermark, len(self.openers))
        if not active:
            return at + 1  # a link already closed inside this one
        resource_end = self._inline_resource_end(at + 1)
        if resource_end is not None:
            self.spans.append((opener, resource_end))
            next_pos, is_link = resource_end, True
        else:
            reference_end = self._reference_end(opener + (2 if image else 1), at)
            next_pos, is_link = reference_end or at + 1, reference_end is not None
        if is_link and not image:
            self.watermark = len(self.openers)  # links may not contain links
        return next_pos

    def _inline_resource_end(self, pos: int) -> int | None:
        text, end = self.text, self.end
        if pos >= end or text[pos] != "(":
            return None
        simple = _SIMPLE_RESOURCE.match(text, pos, end)
        if simple is not None:
            return simple.end()
        destination_start = _skip_space(text, pos + 1, end)
        destination_end = _destination_end(text, destination_start, end)
        if destination_end is None:
            return None
        pos = _skip_space(text, destination_end, end)
        if pos > destination_end and pos < end and text[pos] in _TITLE:
            title = _TITLE[text[pos]].match(text, pos, end)
            if title is None:
                return None
            pos = _skip_space(text, title.end(), end)
        return pos + 1 if pos < end and text[pos] == ")" else None

    def _reference_end(self, label_start: int, close: int) -> int | None:
        """Full, collapsed or shortcut reference to a known definition: end, else None."""
        if not self.definitions:
            return None
        text, after = self.text, close + 1
        label, end = text[label_start:close], after
        if after < self.end and text[after] == "[":
            full = _REFERENCE_LABEL.match(text, after, self.end)
            if full is not None:
                end = full.end()
                if full.group(1).strip():
                    label = full.group(1)
        if len(label) > 999 or _normalize_label(label) not in self.definitions:
            return None
        return end
