"""Which text encoding a file's bytes are in, and decoding them (notes §12.3).

Order of the checks: a UTF-16 BOM or the zero-byte parity heuristic, then strict UTF-8, then
Windows-1252 (the SPEC decodes CP1252 instead of rejecting it). Worked example::

    >>> detect_text_encoding("café au lait".encode("cp1252"))
    'cp1252'
    >>> decode_text(b"caf\\xe9 au lait", "cp1252")
    'café au lait'

Undefined CP1252 bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) stay C1 controls, so decoding never fails.
"""

from __future__ import annotations

import unicodedata

# Windows-1252 for 0x80-0x9F; None marks the five undefined slots, kept as C1 controls.
_CP1252_HIGH: tuple[str | None, ...] = tuple(
    None if c == "_" else c for c in "€_‚ƒ„…†‡ˆ‰Š‹Œ_Ž__‘’“”•–—˜™š›œ_žŸ"
)


def detect_utf16(data: bytes) -> str | None:
    """BOM, else the zero-byte parity heuristic over the first 2048 bytes (notes §12.3).

    ``b"h\\x00i\\x00"`` has zeros at odd offsets, so it is ``utf-16le``; a ratio of exactly
    20 % zero bytes is *not* UTF-16.
    """
    if len(data) < 2:
        return None
    if data.startswith(b"\xff\xfe"):
        return "utf-16le"
    if data.startswith(b"\xfe\xff"):
        return "utf-16be"
    sample = data[:2048]
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    if (even + odd) / len(sample) <= 0.2:
        return None
    return "utf-16le" if odd >= even else "utf-16be"


def detect_text_encoding(data: bytes) -> str | None:
    """``utf-16le``/``utf-16be``/``utf-8``/``cp1252`` when the bytes read as text, else None."""
    utf16 = detect_utf16(data)
    if utf16 is not None:
        return utf16
    sample = data[:4096]
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as error:
        # A multibyte character cut by the 4096-byte window is not a reason to give up on
        # UTF-8 — but only when the window did cut the data: a whole file ending in a stray
        # high byte (b"caf\xe9") is CP1252, not broken UTF-8.
        window_cut = len(data) > len(sample)
        if (
            window_cut
            and error.reason == "unexpected end of data"
            and len(sample) - error.start < 4
        ):
            text = sample[: error.start].decode("utf-8")
        else:
            cp1252 = decode_cp1252(sample)
            if _printable_ratio(cp1252) > 0.95 and _wordish_ratio(cp1252) > 0.3:
                return "cp1252"
            return None
    return "utf-8" if text and _printable_ratio(text) > 0.85 else None


def _is_layout(char: str) -> bool:
    return char in "\t\n\r "


def _is_control(char: str) -> bool:
    code = ord(char)
    return not _is_layout(char) and (code < 32 or 0x7F <= code <= 0x9F)


def _printable_ratio(text: str) -> float:
    if not text:
        return 0.0
    controls = sum(1 for char in text if _is_control(char))
    return (len(text) - controls) / len(text)


def _wordish_ratio(text: str) -> float:
    if not text:
        return 0.0
    wordish = sum(
        1 for char in text if _is_layout(char) or unicodedata.category(char)[0] in ("L", "N")
    )
    return wordish / len(text)


def decode_cp1252(data: bytes) -> str:
    """Windows-1252 where defined; the five undefined bytes stay C1 controls (never fails)."""
    chars = []
    for byte in data:
        mapped = _CP1252_HIGH[byte - 0x80] if 0x80 <= byte <= 0x9F else None
        chars.append(mapped if mapped is not None else chr(byte))
    return "".join(chars)


def decode_text(data: bytes, encoding: str) -> str:
    """Decode with the detected charset; a BOM is consumed; bad bytes become U+FFFD."""
    if encoding == "cp1252":
        return decode_cp1252(data)
    if encoding == "utf-16le":
        body = data[2:] if data.startswith(b"\xff\xfe") else data
        return body.decode("utf-16-le", errors="replace")
    if encoding == "utf-16be":
        body = data[2:] if data.startswith(b"\xfe\xff") else data
        return body.decode("utf-16-be", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def cut_to_utf16_units(text: str, limit: int) -> str:
    """Keep at most ``limit`` UTF-16 code units, never splitting a surrogate pair."""
    if len(text) <= limit // 2 or len(text.encode("utf-16-le")) <= 2 * limit:
        return text
    units = 0
    for position, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:position]
    return text
