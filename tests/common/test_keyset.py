"""Keyset cursors' numbers: what a database column holds, nothing larger."""

from __future__ import annotations

import doctest

import pytest

from common import keyset


def test_the_examples_in_the_docstrings_hold() -> None:
    assert doctest.testmod(keyset).failed == 0


@pytest.mark.parametrize("text", ["-9223372036854775808", "0", "9223372036854775807"])
def test_every_signed_64_bit_number_is_a_stored_int(text) -> None:
    assert keyset.stored_int(text) == int(text)


@pytest.mark.parametrize("text", ["-9223372036854775809", "9223372036854775808", "1" * 5000, "x"])
def test_anything_else_is_a_value_error(text) -> None:
    with pytest.raises(ValueError):
        keyset.stored_int(text)
