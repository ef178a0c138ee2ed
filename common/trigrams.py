"""Which trigrams of a text a trigram index should read to find it cheaply.

A trigram index answers "rows holding this text" by reading a posting list for each of
the text's three-character parts; a part that most rows hold (a word's first letters, a
number's first digit) costs a long list and narrows nothing. ``rarest_trigrams`` picks
the parts that are rare in a sample of the stored values, so the index reads only those
and the whole text is tested on the few rows they leave::

    >>> sample = [f"https://example.com/review/{n}" for n in range(100)]
    >>> rarest_trigrams("/review/481516", sample)
    ['481', '815', '151', '516']
    >>> rarest_trigrams("/review/", sample)  # every part common: read the text itself
    []
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# At most MAX_TERMS trigrams are returned, each in at most RARE_SHARE of the sample (a
# trigram in none is rarest), from a sample of at least MIN_SAMPLE values; a text's first
# CANDIDATES distinct trigrams are weighed (a long one has plenty): with a sample of 1,000
# values at most 24,000 substring tests, about 1 ms.
MAX_TERMS = 4
RARE_SHARE = 0.02
MIN_SAMPLE = 50
CANDIDATES = 24
_WORD_RUN = re.compile(r"[^\W_]{3,}")  # a trigram index keeps letters and digits only


def rarest_trigrams(text: str, sample: Sequence[str]) -> list[str]:
    """The three-character parts of ``text`` (letters or digits) that are rarest in
    ``sample`` (stored values, lower case; a trigram index ignores case), at most
    ``MAX_TERMS``, rarest first and as written in ``text``; none when fewer than two are
    rare or the sample is too small to tell. Every value holding ``text`` holds each."""
    if len(sample) < MIN_SAMPLE:
        return []
    candidates: dict[str, str] = {}  # lower case → as written (the first one)
    for run in _WORD_RUN.finditer(text):
        for start in range(len(run.group()) - 2):
            term = run.group()[start : start + 3]
            candidates.setdefault(term.lower(), term)
        if len(candidates) >= CANDIDATES:
            break
    weighed = sorted(
        (sum(key in value for value in sample) / len(sample), position, term)
        for position, (key, term) in enumerate(list(candidates.items())[:CANDIDATES])
    )
    rare = [term for share, _, term in weighed if share <= RARE_SHARE][:MAX_TERMS]
    return rare if len(rare) >= 2 else []
