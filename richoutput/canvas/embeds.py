"""``[embed …]`` shortcodes -> stored canvas blocks.

Two shapes are recognised (``embed`` in any case, at least one whitespace after it):

* self-closing ``[embed ref="cv_1" title="Status" /]`` (the space before ``/]`` is optional);
* block ``[embed ref="cv_1"]ignored body[/embed]`` (the body is discarded).

The first ``]`` after ``[embed`` decides the shape: preceded by ``/`` it closes a
self-closing tag, otherwise it opens a block that needs a later ``[/embed]``. That is why a
self-closing tag can never open a block that swallows text up to a stray ``[/embed]``.

>>> result = extract_embeds('see [embed ref="a b" height="0x1F4"/] end')
>>> result.text
'see  end'
>>> result.blocks[0]["preview"]["url"], result.blocks[0]["preview"]["preferredHeight"]
('/__openclaw__/canvas/documents/a%20b/index.html', 500)

A shortcode without ``url``/``ref`` (or with a foreign ``target``) yields no block and stays
in the text verbatim; the reason is recorded in ``ExtractedEmbeds.skipped``.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

from richoutput.canvas.codespans import CodeLocator
from richoutput.canvas.textutil import (
    JS_SPACE_CLASS,
    JS_WHITESPACE,
    CharPositions,
    encode_uri_component,
    js_number,
    js_trim,
)

CanvasBlock = dict[str, object]

CANVAS_DOCUMENT_PREFIX = "/__openclaw__/canvas/documents/"
MAX_ATTRIBUTE_TEXT = 10_240
MIN_HEIGHT = 160
MAX_HEIGHT = 1200
ASSISTANT_SURFACE = "assistant_message"

_EMBED_OPEN = re.compile(r"\[embed", re.IGNORECASE | re.ASCII)
_EMBED_CANDIDATE = re.compile(r"\[embed" + JS_SPACE_CLASS, re.IGNORECASE | re.ASCII)
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_EQUALS_QUOTE = re.compile(JS_SPACE_CLASS + r"*=" + JS_SPACE_CLASS + r"*([\"'])")
_UNSAFE_SPACE = re.compile(r"[\x00-\x20\x7f-\x9f" + re.escape(JS_WHITESPACE) + "]+")
_SCRIPT_SCHEMES = ("javascript:", "vbscript:")


@dataclass(frozen=True)
class EmbedMatch:
    start: int
    end: int
    attribute_text: str


@dataclass(frozen=True)
class SkippedEmbed:
    source: str
    reason: str


@dataclass(frozen=True)
class ExtractedEmbeds:
    text: str
    blocks: tuple[CanvasBlock, ...]
    skipped: tuple[SkippedEmbed, ...]


def find_embed_matches(text: str) -> list[EmbedMatch]:
    """Shortcodes outside code, left to right; a match overlapping an earlier one loses."""
    if _EMBED_CANDIDATE.search(text) is None:
        return []
    code = CodeLocator(text)
    closers = CharPositions.of(text, "]")
    block_ends: CharPositions | None = None  # built on the first block-form candidate
    matches: list[EmbedMatch] = []
    taken_until = 0
    for opening in _EMBED_OPEN.finditer(text):
        start = opening.start()
        after = opening.end()
        if start < taken_until or code.contains(start):
            continue
        if after >= len(text) or text[after] not in JS_WHITESPACE:
            continue
        close = closers.next_at_or_after(after)
        if close is None:
            break  # no "]" anywhere later: no later shortcode can match either
        if text[close - 1] == "/":
            match = EmbedMatch(start, close + 1, text[after : close - 1])
        else:
            if block_ends is None:
                block_ends = CharPositions.of(text, "[/embed]", ignore_case=True)
            body_end = block_ends.next_at_or_after(close + 1)
            if body_end is None:
                continue
            match = EmbedMatch(start, body_end + len("[/embed]"), text[after:close])
        matches.append(match)
        taken_until = match.end
    return matches


def is_dangerous_value(value: str) -> bool:
    """Script URLs and non-image ``data:`` URLs, also when hidden behind entities/spaces."""
    if ":" not in value and "&" not in value:
        return False  # no scheme, and no entity that could spell one
    folded = _UNSAFE_SPACE.sub("", html.unescape(value).lower())
    if folded.startswith(_SCRIPT_SCHEMES):
        return True
    if folded.startswith("data:"):
        return not folded.startswith("data:image/") or "script" in folded
    return False


def parse_attributes(attribute_text: str) -> dict[str, str]:
    """``name="value"`` / ``name='value'`` pairs; names lower-cased, values trimmed.

    Empty values, ``on*`` names and dangerous values are dropped; a later duplicate wins;
    text over 10,240 characters yields nothing (hardening, SPEC §8)."""
    if len(attribute_text) > MAX_ATTRIBUTE_TEXT:
        return {}
    exhausted: set[str] = set()  # quote characters that no longer occur: never search again
    attributes: dict[str, str] = {}
    position = 0
    while True:
        name_match = _ATTRIBUTE_NAME.search(attribute_text, position)
        if name_match is None:
            return attributes
        position = name_match.end()
        equals = _EQUALS_QUOTE.match(attribute_text, position)
        if equals is None:
            continue  # suffixes of this name cannot match either, so skip the whole name
        position = equals.end()
        quote = equals.group(1)
        # Each successful search jumps past the closing quote and a failed one retires the
        # quote character, so all searches together stay linear in the text length.
        closing = -1 if quote in exhausted else attribute_text.find(quote, position)
        if closing == -1:
            exhausted.add(quote)
            continue
        name = name_match.group().lower()
        value = js_trim(attribute_text[position:closing])
        position = closing + 1
        if value and not name.startswith("on") and not is_dangerous_value(value):
            attributes[name] = value


def preferred_height(raw: str | None) -> int | None:
    if raw is None:
        return None
    number = js_number(raw)
    if not math.isfinite(number) or number < MIN_HEIGHT:
        return None
    return min(int(number), MAX_HEIGHT)


def canvas_block_from_attributes(attributes: dict[str, str]) -> CanvasBlock | str:
    """The stored canvas block, or the reason no block is produced."""
    target = attributes.get("target")
    if target is not None and target != ASSISTANT_SURFACE:
        return f"target {target!r} is not {ASSISTANT_SURFACE}"
    ref = attributes.get("ref")
    url = attributes.get("url")
    if url is None and ref is not None:
        encoded = encode_uri_component(ref)
        if encoded is None:
            return "ref cannot be URL-encoded"
        url = f"{CANVAS_DOCUMENT_PREFIX}{encoded}/index.html"
    if url is None:
        return "missing url or ref"
    preview: dict[str, object] = {
        "kind": "canvas",
        "surface": ASSISTANT_SURFACE,
        "render": "url",
    }
    if ref is not None:
        preview["viewId"] = ref
    preview["url"] = url
    if "title" in attributes:
        preview["title"] = attributes["title"]
    height = preferred_height(attributes.get("height"))
    if height is not None:
        preview["preferredHeight"] = height
    return {"type": "canvas", "preview": preview}


def extract_embeds(text: str) -> ExtractedEmbeds:
    """Cut rendered shortcodes out of ``text`` (surrounding spaces are not merged)."""
    matches = find_embed_matches(text) if "[" in text else []
    if not matches:
        return ExtractedEmbeds(text, (), ())
    pieces: list[str] = []
    blocks: list[CanvasBlock] = []
    skipped: list[SkippedEmbed] = []
    cursor = 0
    for match in matches:
        outcome = canvas_block_from_attributes(parse_attributes(match.attribute_text))
        if isinstance(outcome, str):
            skipped.append(SkippedEmbed(text[match.start : match.end], outcome))
            continue
        blocks.append(outcome)
        pieces.append(text[cursor : match.start])
        cursor = match.end
    pieces.append(text[cursor:])
    return ExtractedEmbeds("".join(pieces), tuple(blocks), tuple(skipped))


_CONTENT_TYPE = re.compile(r"content_type\s*=\s*[\"']\s*html", re.IGNORECASE)


def embed_notice(skipped: SkippedEmbed) -> str:
    """What the preview says about a shortcode that gave no canvas block (it stays in the
    text, as in the reference), in words a person can act on.

    >>> embed_notice(SkippedEmbed('[embed content_type="html"]<h1>x</h1>[/embed]', "missing url or ref"))
    'Inline HTML embeds are not rendered: an embed needs a url or ref. Store the HTML as a canvas document and embed it with ref="…".'
    """
    if skipped.reason == "missing url or ref":
        if _CONTENT_TYPE.search(skipped.source) or "<" in skipped.source:
            return (
                "Inline HTML embeds are not rendered: an embed needs a url or ref. Store the "
                'HTML as a canvas document and embed it with ref="…".'
            )
        return "This embed is not rendered: it needs a url or ref attribute."
    return f"This embed is not rendered: {skipped.reason}."
