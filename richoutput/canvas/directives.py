"""``[[audio_as_voice]]``, ``[[reply_to_current]]`` and ``[[reply_to:<id>]]`` (notes §5, §6).

Tags are case-insensitive, allow whitespace (newlines too) inside the brackets and are
literal inside any Markdown code. Reply ids are sanitised: trimmed, control characters and
square brackets deleted, capped at 256 code points; the last valid id wins.

>>> strip_reply_tags("[[reply_to_current]] Hi [[reply_to: m-1 ]]").reply_to_id
'm-1'
>>> strip_audio_tags("see[[audio_as_voice]]now").text
'see now'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from richoutput.canvas.codespans import CodeLocator
from richoutput.canvas.gaps import remove_spans
from richoutput.canvas.textutil import JS_SPACE_CLASS, JS_WHITESPACE, CharPositions, js_trim

MAX_REPLY_ID_CODE_POINTS = 256
SILENT_TOKEN = "NO_REPLY"

_S = JS_SPACE_CLASS
_FLAGS = re.IGNORECASE | re.ASCII
_AUDIO_TAG = re.compile(r"\[\[" + _S + r"*audio_as_voice" + _S + r"*\]\]", _FLAGS)
_REPLY_OPEN = re.compile(
    r"\[\[" + _S + r"*reply_to(?:(_current" + _S + r"*\]\])|" + _S + r"*:)", _FLAGS
)
_ID_JUNK = re.compile(r"[\x00-\x1f\x7f-\x9f\[\]]")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t\r]*\n)+")
_MALFORMED_PREFIXES = (
    re.compile(r"[ \t]*\[\[" + _S + r"*reply_to_current(?:" + _S + r"*\](?!\])|(?=" + _S + r")|$)"),
    re.compile(r"[ \t]*\[\[" + _S + r"*reply_to" + _S + r"*:[^\]\r\n]*\](?!\])"),
    re.compile(r"[ \t]*\[\[" + _S + r"*reply_to" + _S + r"*:" + _S + r"*$"),
)
_TRAILING_SPACE = re.compile(_S + r"+$")


@dataclass(frozen=True)
class AudioTags:
    text: str
    found: bool


@dataclass(frozen=True)
class ReplyTags:
    text: str
    reply_to_id: str | None  # the last valid explicit id
    reply_to_current: bool
    tag_seen: bool  # any complete reply tag, blank-id ones included


def sanitize_reply_id(raw: str) -> str | None:
    cleaned = js_trim(_ID_JUNK.sub("", js_trim(raw)))
    return _truncate_code_points(cleaned, MAX_REPLY_ID_CODE_POINTS) or None


def _truncate_code_points(value: str, limit: int) -> str:
    """Cut after ``limit`` code points, counting a (JSON-decoded) surrogate pair as one."""
    count = 0
    index = 0
    while index < len(value) and count < limit:
        pair = "\ud800" <= value[index] <= "\udbff" and index + 1 < len(value)
        index += 2 if pair and "\udc00" <= value[index + 1] <= "\udfff" else 1
        count += 1
    return value[:index]


def _explicit_id_body(content: str) -> str | None:
    """The raw id between ``reply_to:`` and ``]]``, or None when this is not a tag.

    The id may not contain a line feed, but line feeds around it are fine; a blank id
    is a tag unless it is made only of line feeds (``[[reply_to:\\n]]`` is not a tag)."""
    core = content.strip(JS_WHITESPACE)
    if core:
        return None if "\n" in core else core
    return content if content.replace("\n", "") else None


def tidy_boundaries(text: str) -> str:
    """After a removal: drop leading blank lines and one lone leading blank, trim the end."""
    text = _LEADING_BLANK_LINES.sub("", text, count=1) if text[:1] in " \t\r\n" else text
    if len(text) > 1 and text[0] in " \t" and text[1] not in JS_WHITESPACE:
        text = text[1:]
    return trim_end(text)


def trim_end(text: str) -> str:
    return text.rstrip(JS_WHITESPACE)


def strip_audio_tags(text: str) -> AudioTags:
    if "[[" not in text:
        return AudioTags(text, False)
    spans = [m.span() for m in _AUDIO_TAG.finditer(text)]
    if spans:
        code = CodeLocator(text)
        spans = [span for span in spans if not code.contains(span[0])]
    if not spans:
        return AudioTags(text, False)
    return AudioTags(remove_spans(text, spans), True)


def strip_reply_tags(text: str) -> ReplyTags:
    if "[[" not in text or _REPLY_OPEN.search(text) is None:
        return ReplyTags(text, None, False, False)
    code = CodeLocator(text)
    closers = CharPositions.of(text, "]")
    spans: list[tuple[int, int]] = []
    reply_to_id: str | None = None
    current = False
    position = 0
    while (match := _REPLY_OPEN.search(text, position)) is not None:
        position = match.start() + 1
        if code.contains(match.start()):
            continue
        if match.group(1):
            current = True
            end = match.end()
        else:
            close = closers.next_at_or_after(match.end())
            if close is None or text[close + 1 : close + 2] != "]":
                continue
            body = _explicit_id_body(text[match.end() : close])
            if body is None:
                continue
            reply_to_id = sanitize_reply_id(body) or reply_to_id
            end = close + 2
        spans.append((match.start(), end))
        position = end
    if not spans:
        return ReplyTags(text, None, False, False)
    return ReplyTags(tidy_boundaries(remove_spans(text, spans)), reply_to_id, current, True)


def strip_malformed_reply_prefix(text: str) -> str:
    """Delivery cleanup: a broken reply tag at the very start goes, setting nothing."""
    start = len(text) - len(text.lstrip(" \t"))
    if not text.startswith("[[", start) or _starts_in_code(text, start):
        return text
    for pattern in _MALFORMED_PREFIXES:
        match = pattern.match(text)
        if match:
            return text[match.end() :].lstrip(JS_WHITESPACE)
    return text


def _starts_in_code(text: str, start: int) -> bool:
    # Text that begins with "[[" can only be code as an indented block (an inline span
    # or a fence would begin with a backtick or tilde).
    return "\t" in text[:start] or start >= 4


def is_silent(text: str) -> bool:
    """Exactly ``NO_REPLY`` (trimmed) or the JSON envelope ``{"action": "NO_REPLY"}``."""
    stripped = js_trim(text)
    if stripped == SILENT_TOKEN:
        return True
    if not (stripped.startswith("{") and len(stripped) < 256):
        return False
    try:
        envelope: object = json.loads(stripped)
    except ValueError:
        return False
    return bool(envelope == {"action": SILENT_TOKEN})
