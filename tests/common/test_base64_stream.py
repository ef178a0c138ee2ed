"""Base64 checked and decoded a slice at a time agrees with the standard library."""

from __future__ import annotations

import base64
import io

import pytest

from common import base64_stream
from common.base64_stream import Base64TooLarge, base64_valid, decode_base64_into


@pytest.fixture(autouse=True)
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base64_stream, "SLICE_CHARS", 8)  # many slices from short inputs


@pytest.mark.parametrize("data", [b"", b"h", b"he", b"hello", bytes(range(256)) * 3])
def test_round_trip_across_slices(data: bytes) -> None:
    out = io.BytesIO()
    text = base64.b64encode(data).decode()
    assert base64_valid(text)
    assert decode_base64_into(text, out, 10_000) == len(data)
    assert out.getvalue() == data


@pytest.mark.parametrize(
    "text", ["aGVsbG8", "AB==CD==", "ABCDAB==ABCD", "ABC=DEFG", "AB!D", "é123", "A==="]
)
def test_what_strict_base64_refuses_is_refused(text: str) -> None:
    assert not base64_valid(text)
    with pytest.raises(ValueError):
        decode_base64_into(text, io.BytesIO(), 10_000)


def test_decoded_size_over_the_limit_stops_early() -> None:
    text = base64.b64encode(b"x" * 30).decode()
    with pytest.raises(Base64TooLarge) as refused:
        decode_base64_into(text, io.BytesIO(), 29)
    assert refused.value.limit == 29
    assert decode_base64_into(text, io.BytesIO(), 30) == 30
