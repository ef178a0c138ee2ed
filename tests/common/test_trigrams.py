"""The parts of a URL fragment a trigram index reads: those that narrow it in a sample."""

from __future__ import annotations

import doctest

import pytest

from common import trigrams
from common.trigrams import index_terms

# Stored URLs as a sample would hold them: every one under "/review/", numbers of all kinds.
SAMPLE = [f"https://docs.example.com/review/{n * 7919 % 1000}" for n in range(200)]


def test_the_examples_in_the_module_docstring_hold() -> None:
    assert doctest.testmod(trigrams).failed == 0


def test_the_fragments_index_terms_are_read_as_written() -> None:
    # "rev", "evi", "vie", "iew" are in every sampled URL; the digits' trigrams in none.
    assert index_terms("/Review/481516", SAMPLE) == ["481", "815", "151", "516"]
    # Case is kept as written (the URL must hold it so); a trigram index ignores it.
    assert index_terms("/docs/AB7X9Q", SAMPLE) == ["AB7", "B7X", "7X9", "X9Q"]
    # At most MAX_TERMS, and a long fragment is weighed by its first CANDIDATES.
    assert len(index_terms("/" + "qwertyuiopasdfghjklzxcvbnm" * 20, SAMPLE)) == 4


def test_when_the_sample_can_tell_no_more_another_word_comes_first() -> None:
    # "xyz" is in no sampled URL: the sample tells no more. "abc", of another word (in one
    # URL of 200), narrows in the table about by its share; "yzq" of "xyzq" hardly at all.
    sample = [*SAMPLE[:199], "https://docs.example.com/abc"]
    assert index_terms("abc/xyzq", sample) == ["xyz", "abc", "yzq"]


# URLs of eight hosts and twelve words: a host is in an eighth of them, a word in a twelfth.
HOSTS = ("docs", "blog", "shop", "news", "wiki", "mail", "maps", "chat")
WORDS = "deploy review build release status upgrade invoice ticket query guide plan team"
SITES = [f"https://{h}.example.com/{w}/{n}" for h in HOSTS for w in WORDS.split() for n in range(3)]


def test_trigrams_rare_one_by_one_but_common_together_give_way_to_ones_that_narrow() -> None:
    # The four of "deploy" always come together (in a twelfth of the URLs each): one is
    # read. The host's "doc" narrows that to a ninety-sixth, and "/1" (a word starting with
    # 1: "  1" to the index) to a third of that; "exa", "com" narrow nothing.
    assert index_terms("docs.example.com/deploy/1", SITES) == ["dep", "doc", "/1"]
    assert index_terms("https://docs.example.com/deploy/1", SITES) == ["dep", "doc", "/1"]


def test_a_host_that_narrows_a_rare_word_comes_before_the_words_other_trigrams() -> None:
    # "deploy" is in one URL of sixty: its trigrams are each rare but always together (at
    # 10M runs, 167,000 rows to test). "doc" narrows them to one URL in 480 and is read
    # second; the word's other trigrams only after, and the hosts' common ones never.
    words = ["deploy", *(f"w{i:02d}x" for i in range(59))]
    sample = [f"https://{h}.example.com/{w}/{n}" for h in HOSTS for w in words for n in range(3)]
    terms = index_terms("docs.example.com/deploy/1", sample)
    assert terms[:2] == ["dep", "doc"] and len(terms) == 4
    assert not {"exa", "xam", "com"} & set(terms)


def test_a_word_too_short_for_a_trigram_is_read_by_its_start() -> None:
    # The index keeps "  1" for a word starting with 1 after any other character, and
    # nothing for the text's first word, whose start it cannot know.
    assert index_terms("/x_y/ab/", SAMPLE) == ["/x", "_y", "/ab"]
    assert index_terms("ab/cd", SAMPLE) == []  # one part, "/cd": the text is read whole


def test_trigrams_common_together_are_not_read() -> None:
    # A word alone (in a twelfth of the URLs) or a host alone (in an eighth) is not rare,
    # however its parts are read: the whole fragment is read.
    assert index_terms("/deploy/", SITES) == []
    assert index_terms("docs.example.com", SITES) == []


@pytest.mark.parametrize(
    ("fragment", "sample"),
    [
        ("/review/", SAMPLE),  # every trigram common: the fragment as it is
        ("docs.example.com/review/9", SAMPLE),  # "/9" (a number from 9) in a tenth
        ("/review/481516", SAMPLE[:49]),  # too few URLs to tell
        ("/review/481516", []),  # no statistics yet
    ],
)
def test_without_rare_parts_the_index_reads_the_whole_fragment(fragment, sample) -> None:
    assert index_terms(fragment, sample) == []


def test_a_part_every_url_holding_a_chosen_part_holds_is_not_read() -> None:
    # Hosts of their own top-level domains: "org" is only ever beside "code". Once "dep",
    # "cod" and "/1" leave fewer URLs than the sample can tell by, "org" would be read as
    # another word, but every sampled URL holding "cod" holds it: its list narrows nothing
    # (at 10M runs, "org" after "git" of github.example.org cost a tenth of the listing).
    hosts = ("docs.example.com", "code.example.org", "news.example.net", "wiki.example.io")
    words = ["deploy", *(f"w{i:02d}x" for i in range(29))]
    sample = [
        f"https://{h}/{w}/{n}"
        for h in (*hosts, "shop.example.co")
        for w in words
        for n in (1, 22, 333, 4444)
    ]
    assert index_terms("code.example.org/deploy/1", sample) == ["dep", "cod", "/1"]
    # Where some URLs hold "cod" without "org" and others "org" without "cod", "org"
    # narrows and is read.
    sample[-6:] = [
        f"https://{h}.example.{d}/w00x/{n}"
        for h, d in (("code", "io"), ("shop", "org"))
        for n in (5, 66, 777)
    ]
    assert index_terms("code.example.org/deploy/1", sample) == ["dep", "cod", "/1", "org"]
