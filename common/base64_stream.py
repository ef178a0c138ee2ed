"""Strict base64 checked and decoded a slice at a time, so a 25 MiB attachment never needs a
second whole copy of itself in memory::

    base64_valid("aGVsbG8=")                        -> True
    decode_base64_into("aGVsbG8=", out, 1 << 20)    -> 5   (b"hello" written to ``out``)

Slices are a multiple of 4 characters, so each decodes on its own; padding is allowed only at
the very end, as in ``base64.b64decode(text, validate=True)``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import IO

SLICE_CHARS = 1 << 20  # 1 MiB of text -> 768 KiB of bytes at a time


class Base64TooLarge(ValueError):
    """The decoded data passes the limit given; ``limit`` says which."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"decodes to more than {limit} bytes")
        self.limit = limit


def _slices(text: str) -> Iterator[bytes]:
    if len(text) % 4:
        raise ValueError("not valid base64 (length not a multiple of 4)")
    last = len(text) - SLICE_CHARS
    for start in range(0, len(text), SLICE_CHARS):
        piece = text[start : start + SLICE_CHARS]
        if start < last and piece.endswith("="):
            raise ValueError("not valid base64 (padding before the end)")
        try:
            yield base64.b64decode(piece, validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise ValueError("not valid base64") from None


def base64_valid(text: str) -> bool:
    """Whether ``text`` is strict base64, without holding its decoded bytes."""
    try:
        for _ in _slices(text):
            pass
    except ValueError:
        return False
    return True


def decode_base64_into(text: str, out: IO[bytes], max_bytes: int) -> int:
    """Decode ``text`` into ``out``; the number of bytes written. ``ValueError`` for bad
    base64, ``Base64TooLarge`` as soon as the bytes pass ``max_bytes``."""
    if len(text) // 4 * 3 - 2 > max_bytes:
        raise Base64TooLarge(max_bytes)
    written = 0
    for chunk in _slices(text):
        written += len(chunk)
        if written > max_bytes:
            raise Base64TooLarge(max_bytes)
        out.write(chunk)
    return written
