"""Bytes to text as a browser would read them, and the characters a browser never shows.

>>> decode_body("café".encode("cp1252"), "text/plain; charset=utf-8")  # a wrong label
'café'
>>> strip_invisible("pa\u200bss")
'pass'
>>> media_type_of("Text/HTML; charset=x")
'text/html'
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

# Zero-width characters, bidi controls, word joiners, the soft hyphen and Unicode tag
# characters: invisible in a browser, so they can only hide or reorder text for a model.
_INVISIBLE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0000-\U000e007f]"
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG: browsers decode these labels as windows-1252, and real pages rely on it.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
}
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")
_MIN_DETECTION_BYTES = 1024
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)


def strip_invisible(text: str) -> str:
    """Remove characters that render as nothing: ``'pa\\u200bss'`` -> ``'pass'``."""
    return _INVISIBLE.sub("", text)


def media_type_of(content_type: str | None) -> str:
    """``'Text/HTML; charset=x'`` -> ``'text/html'``; an absent header gives ``''``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def decode_body(body: bytes, content_type: str | None, *, html: bool = False) -> str:
    """Decode with the BOM, else the header charset, else ``<meta charset>``; else guess.

    A declared charset that does not decode the bytes cleanly is treated as wrong (servers
    often say utf-8 for cp1252 pages), and the next source is tried.
    """
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    declared = [_header_charset(content_type)]
    if html or media_type_of(content_type) in ("application/xhtml+xml", "text/xml"):
        declared += _document_charsets(body[:4096])
    for label in declared:
        decoded = _try_decode(body, label)
        if decoded is not None:
            return decoded
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Detection needs a sample to be reliable; a short undeclared non-UTF-8 body is most
    # likely windows-1252 (the web's legacy default).
    if len(body) >= _MIN_DETECTION_BYTES:
        best = charset_normalizer.from_bytes(body).best()
        if best is not None:
            return str(best)
    return body.decode("cp1252", errors="replace")


def _header_charset(content_type: str | None) -> str | None:
    match = _HEADER_CHARSET.search(content_type or "")
    return match.group(1) if match else None


def _document_charsets(head: bytes) -> list[str | None]:
    found: list[str | None] = []
    for pattern in (_XML_ENCODING, _META_CHARSET):
        match = pattern.search(head)
        if match:
            found.append(match.group(1).decode("ascii", errors="ignore"))
    return found


def _try_decode(body: bytes, label: str | None) -> str | None:
    if not label:
        return None
    name = _CHARSET_ALIASES.get(label.strip().lower(), label.strip().lower())
    try:
        codecs.lookup(name)
        return body.decode(name)
    except (LookupError, UnicodeDecodeError):
        return None
