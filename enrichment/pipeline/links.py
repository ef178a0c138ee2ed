"""Find the bare http(s) links in a chat message that link understanding may fetch.

Markdown inline links, images and ``<…>`` autolinks are removed first (CommonMark
rules, each span replaced by one space), so links a user *presented* are not
re-fetched; reference definitions and code are left in and scanned. Each bare token
loses trailing punctuation (never inside the query or fragment, balanced closers
kept), must pass the SSRF host check (WHATWG-normalised host, no DNS), is deduped by
exact string and returned as written.

>>> extract_links("see [docs](https://a.example/d) and (https://b.example/wiki/X_(y)), ok?")
['https://b.example/wiki/X_(y)']
>>> extract_links("http://127.1/ http://0x7f.1/ HTTP://Example.com/A. https://example.com/a?q=1.")
['HTTP://Example.com/A', 'https://example.com/a?q=1.']
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator

from enrichment.pipeline.ssrf import (
    DEFAULT_POLICY,
    JS_WHITESPACE,
    SsrfPolicy,
    check_url,
    classify_host,
)

DEFAULT_MAX_LINKS = 3

_BARE_URL = re.compile(r"[hH][tT][tT][pP][sS]?://[^" + JS_WHITESPACE + r"]+")
_TRAILING_PUNCTUATION = frozenset(",.;:?!\"'\u2026")
_OPENER_OF = {")": "(", "]": "[", "}": "{", ">": "<"}
_TRIM_CANDIDATES = _TRAILING_PUNCTUATION | frozenset(_OPENER_OF)


def extract_links(
    message: str, max_links: object = DEFAULT_MAX_LINKS, policy: SsrfPolicy = DEFAULT_POLICY
) -> list[str]:
    source = message.strip(JS_WHITESPACE)
    if not source:
        return []
    cap = resolve_max_links(max_links)
    links: list[str] = []
    seen: set[str] = set()
    for piece in sanitized_pieces(source):
        for match in _BARE_URL.finditer(piece):
            token = trim_trailing_punctuation(match.group())
            if token in seen:
                continue
            seen.add(token)  # blocked tokens too: they would be blocked again
            if is_fetchable(token, policy):
                links.append(token)
                if len(links) >= cap:
                    return links
    return links


_SIMPLE_URL = re.compile(
    r"[hH][tT][tT][pP][sS]?://((?:[A-Za-z0-9-]+\.)*([A-Za-z0-9-]+))(?::(\d{1,5}))?(?:[/?#\\][!-~]*)?"
)
_NUMERIC_LABEL = re.compile(r"\d+|0[xX][0-9A-Fa-f]*")


def is_fetchable(token: str, policy: SsrfPolicy = DEFAULT_POLICY) -> bool:
    """``not check_url(token, policy).blocked``, with a fast path for plain ASCII URLs.

    For a printable-ASCII URL whose authority is only ``name(.name)*`` and an optional
    port, the WHATWG host is the lower-cased name, unless a label is punycode or the
    last label is numeric (WHATWG then parses an IPv4 address), which take the full path.
    """
    simple = _SIMPLE_URL.fullmatch(token)
    if (
        simple is None
        or "xn--" in simple.group(1).lower()
        or _NUMERIC_LABEL.fullmatch(simple.group(2))
        or int(simple.group(3) or 0) > 65535
    ):
        return not check_url(token, policy).blocked
    return not classify_host(simple.group(1).lower(), policy).blocked


def resolve_max_links(value: object) -> int:
    """A positive finite number is floored (at least 1); anything else means 3.

    >>> [resolve_max_links(v) for v in (2.9, 0.5, 0, -1, float("nan"), True, "5", None)]
    [2, 1, 3, 3, 3, 3, 3, 3]
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DEFAULT_MAX_LINKS
    if not math.isfinite(value) or value <= 0:
        return DEFAULT_MAX_LINKS
    # The reference checks the cap only after a push, so 0.5 (floor 0) still yields one.
    return max(1, math.floor(value))


def trim_trailing_punctuation(token: str) -> str:
    """Drop trailing punctuation and unbalanced closers, but only in the path region.

    >>> trim_trailing_punctuation("https://x.example/a(b)_c).,")
    'https://x.example/a(b)_c'
    >>> trim_trailing_punctuation("https://x.example/s?q=a,b,")
    'https://x.example/s?q=a,b,'
    """
    if token[-1] not in _TRIM_CANDIDATES:
        return token
    path_end = len(token)
    for marker in "?#":
        index = token.find(marker)
        if index != -1:
            path_end = min(path_end, index)
    counts = {char: token.count(char) for char in "()[]{}<>"}
    end = len(token)
    while 0 < end <= path_end:
        last = token[end - 1]
        opener = _OPENER_OF.get(last)
        if opener is not None:
            if counts[last] <= counts[opener]:
                break
            counts[last] -= 1
        elif last not in _TRAILING_PUNCTUATION:
            break
        end -= 1
    return token[:end]


# --- Markdown spans (CommonMark, no GFM) -----------------------------------------------

_END = r"(?=[\r\n]|\Z)"
_SPECIAL_LINE = re.compile(r"^(?=[ \t\r\n`~#*_=+-]|\Z)", re.MULTILINE)
_LINE_END = re.compile(r"\r\n|\r|\n")
_BLANK = re.compile(r"[ \t]*(?:\r\n|\r|\n|\Z)")
_INDENTED = re.compile(r" {4}| {0,3}\t")
_FENCE = re.compile(r" {0,3}(`{3,}(?=[^`\r\n]*" + _END + ")|~{3,})")
_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|" + _END + ")")
_BREAK_OR_UNDERLINE = re.compile(
    r" {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,}|-+[ \t]*|=+[ \t]*)" + _END
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
_INLINE_SPECIAL = re.compile(r"\\[!-/:-@\[-`{-~]|!\[|[\[\]<`]")
_BACKTICKS = re.compile(r"`+")
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


def strip_markdown_links(text: str) -> str:
    """Replace each outermost inline link, image or autolink span with one space.

    >>> strip_markdown_links("a [x [y]](<b c> 'it\\\\'s') ![i](j) <https://k> `[l](m)` [r]: https://n")
    'a       `[l](m)` [r]: https://n'
    """
    return "".join(sanitized_pieces(text))


def sanitized_pieces(text: str) -> Iterator[str]:
    """``strip_markdown_links(text)`` in consecutive pieces, computed lazily.

    Link spans never cross a paragraph, and pieces end at line starts, so a caller that
    only needs the first few links stops parsing early. Reference definitions anywhere
    change how brackets pair, so when the text may hold one, all are collected first.
    """
    if "](" not in text and "<" not in text:
        yield text  # no inline link or autolink can exist: skip the parse
        return
    definitions: set[str] = set()
    regions: Iterable[tuple[int, int]] = _paragraph_regions(text)
    if "]:" in text and _DEFINITION_CANDIDATE.search(text):
        regions = [(_skip_definitions(text, s, e, definitions), e) for s, e in regions]
    cursor = 0
    for start, end in regions:
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
    regions = [(_skip_definitions(text, s, e, definitions), e) for s, e in _paragraph_regions(text)]
    return [span for start, end in regions for span in _region_spans(text, start, end, definitions)]


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


def _line_end(text: str, pos: int) -> tuple[int, int]:
    """(end of content, start of next line) for the line starting at ``pos``."""
    match = _LINE_END.search(text, pos)
    return (match.start(), match.end()) if match else (len(text), len(text))


def _paragraph_regions(text: str) -> Iterator[tuple[int, int]]:
    """Spans of text that get inline parsing: paragraphs and headings, minus code.

    Only lines that could change block structure are visited (blank, indented, fence,
    heading, thematic break or setext underline); everything between is paragraph text.
    Lists and block quotes are treated as paragraph text, which leaves spans unchanged.
    """
    region_start = pos = 0
    while (match := _SPECIAL_LINE.search(text, pos)) is not None and match.start() < len(text):
        line, (_content_end, next_line) = match.start(), _line_end(text, match.start())
        pos = next_line if next_line > line else len(text)
        in_paragraph = line > region_start
        if _BLANK.match(text, line) is not None:
            cut = (line, next_line)
        elif _INDENTED.match(text, line):
            if in_paragraph:
                continue  # indented code cannot interrupt a paragraph
            cut = (line, next_line)
        elif fence := _FENCE.match(text, line):
            close = _closing_fence(fence.group(1)).search(text, next_line)
            cut = (line, _line_end(text, close.start())[1] if close else len(text))
        elif _ATX_HEADING.match(text, line):
            if line > region_start:
                yield region_start, line
            cut = (next_line, next_line)
            region_start = line
        elif _BREAK_OR_UNDERLINE.match(text, line) and (in_paragraph or text[line] != "="):
            cut = (line, next_line)
        else:
            continue
        if cut[0] > region_start:
            yield region_start, cut[0]
        region_start = pos = cut[1]
    if len(text) > region_start:
        yield region_start, len(text)


@functools.cache
def _closing_fence(marker: str) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*{_END}", re.M)


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
        handlers: dict[str, Callable[[int], int]] = {
            "[": lambda at: self._push(at, image=False),
            "!": lambda at: self._push(at, image=True),
            "]": self._close_bracket,
            "`": self._code_span,
            "<": self._angle,
        }
        pos = self.start
        while (match := _INLINE_SPECIAL.search(self.text, pos, self.end)) is not None:
            first = match.group()[0]
            pos = match.end() if first == "\\" else handlers[first](match.start())

    def _push(self, at: int, *, image: bool) -> int:
        self.openers.append((at, image))
        return at + (2 if image else 1)

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
