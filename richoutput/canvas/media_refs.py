"""``MEDIA:`` lines (notes §4): line-start directives that attach media to a reply.

A line is a directive when, after leading whitespace, it starts with ``MEDIA:`` in any case
and it is not inside a code block. The payload is split into references (quoted payloads
are one reference; spaced local paths are re-joined), each checked by
``validate_media_reference``.

>>> split_media_lines("Here\\nMEDIA: /tmp/My File.png\\nMEDIA:https://127.0.0.1/x.png").media_urls
('/tmp/My File.png',)

Outcome per line: something accepted -> the line becomes the rejected leftovers (or goes);
nothing accepted but path-shaped -> the line vanishes (private paths never leak);
otherwise the line stays verbatim (SPEC §8: rejected URLs stay visible).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from richoutput.canvas.codespans import find_code_regions
from richoutput.canvas.media_validation import (
    has_scheme,
    looks_like_local_path,
    starts_with_path_root,
    validate_media_reference,
)

_DIRECTIVE = re.compile(r"[ \t]*media:[ \t]*`?", re.IGNORECASE)
_ANY_DIRECTIVE_LINE = re.compile(r"^[ \t]*media:", re.IGNORECASE | re.MULTILINE)
_QUOTED = re.compile(r"([\"'`])(.*)\1", re.DOTALL)
_JSON_TAIL = re.compile(r"\.[A-Za-z0-9]{1,10}(?=[\"'][\]},:])")
_HAS_EXTENSION = re.compile(r"\.\w{1,10}$")
_LEADING_JUNK = "`\"'[{("
_TRAILING_JUNK = "`\"'\\})],"
_LEADING_BLANK_LINES = re.compile(r"(?:[ \t\r]*\n)+")
# Budgets keep hostile messages cheap; real replies stay far below them. Over budget, a
# line is rejected as a whole (and removed when it looks like a local path).
MAX_MEDIA_LINES = 100
MAX_FRAGMENTS_PER_LINE = 32


@dataclass(frozen=True)
class RejectedReference:
    reference: str
    reason: str


@dataclass(frozen=True)
class MediaLines:
    text: str
    media_urls: tuple[str, ...]
    rejected: tuple[RejectedReference, ...]
    directives_seen: bool


@dataclass(frozen=True)
class _LineOutcome:
    accepted: list[str]
    leftovers: list[str]
    rejected: list[RejectedReference]
    remove_line: bool


def clean_reference(piece: str) -> str:
    """Strip wrapping punctuation and a serialized-JSON tail (``a.png"}],"x":1`` -> ``a.png``)."""
    tail = _JSON_TAIL.search(piece)
    if tail:
        piece = piece[: tail.end()]
    return piece.strip().lstrip(_LEADING_JUNK).rstrip(_TRAILING_JUNK)


def _should_glue(previous_clean: str, fragment: str) -> bool:
    if not starts_with_path_root(previous_clean):
        return False
    if starts_with_path_root(fragment) or has_scheme(fragment):
        return False
    if not _HAS_EXTENSION.search(previous_clean):
        return True
    return not validate_media_reference(clean_reference(fragment)).ok


def split_payload(payload: str) -> list[str]:
    """Whitespace-split pieces with spaced local paths re-joined.

    ``/Users/pete/My File.png`` stays whole, ``/tmp/a.png /tmp/b.png`` is two pieces."""
    groups: list[str] = []
    previous_clean = ""
    for fragment in payload.split():
        if groups and _should_glue(previous_clean, fragment):
            groups[-1] = f"{groups[-1]} {fragment}"
        else:
            groups.append(fragment)
        previous_clean = clean_reference(groups[-1])
    return groups


def _parse_quoted(inner: str) -> _LineOutcome:
    reference = inner.strip()
    check = validate_media_reference(reference, allow_spaces=True)
    if check.ok:
        return _LineOutcome([reference], [], [], False)
    reason = check.reason or "rejected"
    remove = looks_like_local_path(reference)
    return _LineOutcome([], [], [RejectedReference(reference, reason)], remove)


def _whole_payload_fallback(
    payload: str, valid_count: int, pieces: int, leftover_urls: bool
) -> str | None:
    """Retry the whole unquoted payload as one reference (notes §4.2 step 5).

    A rejected piece that is a URL (``https://127.0.0.1/x.png``) is a sibling reference,
    never part of a spaced path, so ``C:\\Users\\First Last\\a.png https://127.0.0.1/x.png``
    is not glued into one "path": the URL stays visible as rejected text."""
    whole = clean_reference(payload)
    if valid_count == 1 and pieces > 1:
        if leftover_urls:
            return None
        as_spaced_path = looks_like_local_path(whole)
        check = validate_media_reference(whole, allow_spaces=True)
    elif valid_count == 0:
        as_spaced_path = True
        check = validate_media_reference(whole, allow_spaces=" " in whole, allow_bare_filename=True)
    else:
        return None
    return whole if as_spaced_path and check.ok else None


def _rejected_line(payload: str, reason: str) -> _LineOutcome:
    reference = payload.strip()
    remove = looks_like_local_path(clean_reference(reference))
    return _LineOutcome([], [], [RejectedReference(reference[:200], reason)], remove)


def parse_payload(payload: str) -> _LineOutcome:
    stripped = payload.strip()
    quoted = _QUOTED.fullmatch(stripped)
    if quoted:
        return _parse_quoted(quoted.group(2))
    if len(stripped.split(maxsplit=MAX_FRAGMENTS_PER_LINE)) > MAX_FRAGMENTS_PER_LINE:
        return _rejected_line(stripped, "too many references on one line")
    accepted: list[str] = []
    leftovers: list[str] = []
    rejected: list[RejectedReference] = []
    groups = split_payload(stripped)
    for group in groups:
        reference = clean_reference(group)
        check = validate_media_reference(reference, allow_spaces=" " in group)
        if check.ok:
            accepted.append(reference)
            continue
        rejected.append(RejectedReference(reference, check.reason or "rejected"))
        # Path-shaped leftovers are dropped, not echoed: never leak private paths.
        if not looks_like_local_path(reference):
            leftovers.append(group)
    leftover_urls = any(has_scheme(clean_reference(piece)) for piece in leftovers)
    whole = (
        _whole_payload_fallback(stripped, len(accepted), len(groups), leftover_urls)
        if stripped
        else None
    )
    if whole is not None:
        return _LineOutcome([whole], [], [], False)
    remove = not accepted and looks_like_local_path(clean_reference(stripped))
    return _LineOutcome(accepted, leftovers, rejected, remove)


def has_media_line(text: str) -> bool:
    """Whether any line starts (after blanks) with ``MEDIA:``, in any case.

    Substring search plus a look back to the line start: much cheaper than a multi-line
    regex, which would try a match at every offset."""
    if ":" not in text:
        return False
    if text.isascii():
        return _has_ascii_media_line(text)
    lowered = text.lower()
    if len(lowered) != len(text):  # rare: lower-casing changed offsets
        return _ANY_DIRECTIVE_LINE.search(text) is not None
    index = lowered.find("media:")
    while index != -1:
        line_start = lowered.rfind("\n", 0, index) + 1
        if not lowered[line_start:index].strip(" \t"):
            return True
        index = lowered.find("media:", index + 1)
    return False


def _has_ascii_media_line(text: str) -> bool:
    # Walk the colons (few in prose) instead of lower-casing the whole text.
    colon = text.find(":", 5)
    while colon != -1:
        if text[colon - 5 : colon].lower() == "media":
            line_start = text.rfind("\n", 0, colon - 5) + 1
            if not text[line_start : colon - 5].strip(" \t"):
                return True
        colon = text.find(":", colon + 1)
    return False


def split_media_lines(text: str) -> MediaLines:
    """Extract ``MEDIA:`` references; the visible text keeps every other line as written."""
    if not has_media_line(text):
        return MediaLines(text, (), (), False)
    regions = find_code_regions(text, include_inline=False)  # only code blocks matter here
    kept: list[str] = []
    media: list[str] = []
    rejected: list[RejectedReference] = []
    seen = False
    directive_count = 0
    offset = 0
    for line in text.split("\n"):
        directive = _DIRECTIVE.match(line)
        if directive is None or regions.in_block(offset):
            kept.append(line)
            offset += len(line) + 1
            continue
        offset += len(line) + 1
        seen = True
        directive_count += 1
        payload = line[directive.end() :].rstrip("\r")
        if directive_count > MAX_MEDIA_LINES:
            outcome = _rejected_line(payload, "too many MEDIA lines")
        else:
            outcome = parse_payload(payload)
        media.extend(outcome.accepted)
        rejected.extend(outcome.rejected)
        if outcome.accepted:
            if outcome.leftovers:
                kept.append(" ".join(outcome.leftovers))
        elif not outcome.remove_line:
            kept.append(line)
    visible = "\n".join(kept) if seen else text
    if seen:
        visible = (
            _LEADING_BLANK_LINES.sub("", visible, count=1) if visible[:1].isspace() else visible
        )
    return MediaLines(visible, tuple(media), tuple(rejected), seen)
