"""Small text helpers with JavaScript semantics (the reference is a TypeScript system)."""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from urllib.parse import quote

# JavaScript's \s and String.prototype.trim() whitespace set. Python's str.isspace() differs
# (it counts U+001C..U+001F and U+0085, and misses U+FEFF), so we spell the set out.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_SPACE_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"

_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = re.compile(r"0(?:[xX]([0-9a-fA-F]+)|[oO]([0-7]+)|[bB]([01]+))")
_URI_COMPONENT_SAFE = "!'()*-._~"


def js_trim(value: str) -> str:
    return value.strip(JS_WHITESPACE)


def js_number(value: str) -> float:
    """``Number(value)`` for a string: ``" 400 "`` -> 400, ``"0x1F4"`` -> 500, ``""`` -> 0,
    ``"1e3"`` -> 1000, ``"320px"``/``"abc"``/``"1_0"`` -> NaN."""
    text = js_trim(value)
    if not text:
        return 0.0
    radix = _RADIX.fullmatch(text)
    if radix:
        digits, base = next((d, b) for d, b in zip(radix.groups(), (16, 8, 2), strict=True) if d)
        return float(int(digits, base))
    if _DECIMAL.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    return math.nan


def encode_uri_component(value: str) -> str | None:
    """``encodeURIComponent`` (UTF-8, upper-case hex, keeps ``A-Za-z0-9-_.!~*'()``).

    Returns None where JavaScript would throw a URIError (a lone surrogate)."""
    try:
        return quote(value, safe=_URI_COMPONENT_SAFE, encoding="utf-8", errors="strict")
    except UnicodeEncodeError:
        return None


def _find_all(text: str, needle: str) -> list[int]:
    positions: list[int] = []
    index = text.find(needle)
    while index != -1:
        positions.append(index)
        index = text.find(needle, index + 1)
    return positions


@dataclass(frozen=True)
class CharPositions:
    """Offsets of one literal needle in a text, for O(log n) "next occurrence" lookups.

    ``str.find`` from many start points would rescan the same tail again and again on
    hostile input (100 KiB of ``[embed `` with no ``]``); bisection keeps that linear-ish."""

    positions: tuple[int, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, text: str, needle: str, *, ignore_case: bool = False) -> CharPositions:
        if not ignore_case:
            return cls(tuple(_find_all(text, needle)))
        pattern = re.compile(re.escape(needle), re.IGNORECASE | re.ASCII)
        return cls(tuple(match.start() for match in pattern.finditer(text)))

    def next_at_or_after(self, offset: int) -> int | None:
        index = bisect_left(self.positions, offset)
        return self.positions[index] if index < len(self.positions) else None
