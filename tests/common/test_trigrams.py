"""The trigrams a trigram index reads to find a URL fragment: the rarest in a sample."""

from __future__ import annotations

import doctest

import pytest

from common import trigrams
from common.trigrams import rarest_trigrams

# Stored URLs as a sample would hold them: every one under "/review/", numbers of all kinds.
SAMPLE = [f"https://docs.example.com/review/{n * 7919 % 1000}" for n in range(200)]


def test_the_examples_in_the_module_docstring_hold() -> None:
    assert doctest.testmod(trigrams).failed == 0


def test_the_fragments_rarest_trigrams_are_read_as_written() -> None:
    # "rev", "evi", "vie", "iew" are in every sampled URL; the digits' trigrams in none.
    assert rarest_trigrams("/Review/481516", SAMPLE) == ["481", "815", "151", "516"]
    # Case is kept as written (the URL must hold it so); a trigram index ignores it.
    assert rarest_trigrams("/docs/AB7X9Q", SAMPLE) == ["AB7", "B7X", "7X9", "X9Q"]
    # At most MAX_TERMS, and a long fragment is weighed by its first CANDIDATES.
    assert len(rarest_trigrams("/" + "qwertyuiopasdfghjklzxcvbnm" * 20, SAMPLE)) == 4


def test_rarer_trigrams_come_first() -> None:
    # "abc" is in one sampled URL of 200 (0.5 %), "xyz"/"yzq" in none: those first.
    sample = [*SAMPLE[:199], "https://docs.example.com/abc"]
    assert rarest_trigrams("abc/xyzq", sample) == ["xyz", "yzq", "abc"]


@pytest.mark.parametrize(
    ("fragment", "sample"),
    [
        ("/review/", SAMPLE),  # every trigram common: the fragment as it is
        ("docs.example.com/review/9", SAMPLE),  # one rare trigram ("w/9" is not one)
        ("/review/481516", SAMPLE[:49]),  # too few URLs to tell
        ("/review/481516", []),  # no statistics yet
        ("/x_y/ab/", SAMPLE),  # no three letters or digits in a row
    ],
)
def test_without_two_rare_trigrams_the_index_reads_the_whole_fragment(fragment, sample) -> None:
    assert rarest_trigrams(fragment, sample) == []
