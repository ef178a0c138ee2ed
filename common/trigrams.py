"""Which parts of a text a trigram index should read to find it cheaply.

A trigram index (PostgreSQL's ``pg_trgm``) answers "rows holding this text" by reading a
posting list for each trigram of the text, and testing the rows in all of them. Its
trigrams are the three-letter runs inside each word (letters and digits), plus, at a
word's start, the word's first letters padded with spaces: ``/1`` gives ``"  1"``, the
trigram of every word starting with a 1. A trigram that most rows hold (a host's name, a
common first letter) costs a long list and narrows little; trigrams that always come
together (those of one word) narrow no more than the first of them.

``index_terms`` picks, rarest first by a sample of the stored values, the parts of the
text (a word's trigram, or a short word with the character before it) that narrow the
sample's matches, so the index reads only those and the whole text is tested on the few
rows they leave::

    >>> hosts = "docs blog shop news wiki mail maps chat".split()
    >>> words = "deploy review build release status upgrade invoice ticket query guide".split()
    >>> sample = [f"https://{host}.example.com/{word}/{n}"
    ...           for host in hosts for word in words for n in (1, 22, 333)]
    >>> index_terms("/review/481516", sample)  # "481": none left; "review"; rare ones
    ['481', 'rev', '815', '151']
    >>> index_terms("docs.example.com/deploy/1", sample)  # "dep", "doc", "/1" narrow
    ['dep', 'doc', '/1']
    >>> index_terms("/review/", sample)  # 1 in 10 URLs: not rare, read the text
    []
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# At most MAX_TERMS parts are returned, and only when the sampled values holding all of
# them are at most RARE_SHARE of a sample of at least MIN_SAMPLE values. First come the
# ones that narrow the sample's matches (one in every value, or only where a chosen one
# is, narrows nothing: its list is not read). When the sample can tell no more, the
# rarest part of each word not read yet follows, if in at most OTHER_WORD_SHARE (words
# vary apart, so each narrows about by its share: at 10M runs reading a host's 2.5M-entry
# list took 10 ms and spared 60 ms of testing rows) and not in all of the values, if
# MIN_SEEN or more, that held the chosen parts before none was left, or that hold any one
# chosen part; then other rare parts. A text's first CANDIDATES distinct parts are
# weighed (a long one has plenty): with a sample of 1,000 values at most 48,000 tests, a
# few ms.
MAX_TERMS = 4
RARE_SHARE = 0.02
OTHER_WORD_SHARE = 0.25
MIN_SEEN = 3
MIN_SAMPLE = 50
CANDIDATES = 24
_WORD = re.compile(r"[^\W_]+")  # a trigram index keeps letters and digits only


@dataclass(frozen=True)
class _Part:
    text: str  # as written in the text searched for
    word: int  # which word of that text it comes from
    needle: str  # what a stored value holds to give the index its trigrams (lower case)
    at_start: bool = False  # only at a word's start (a short word: its padded trigram)

    def holders(self, values: Sequence[str]) -> list[str]:
        """The ``values`` that give the index this part's trigrams (a substring test each,
        in one comprehension: a regex search or a call per value cost three times more,
        and a fragment's parts are tested on every sampled value)."""
        needle = self.needle
        if not self.at_start:
            return [value for value in values if needle in value]
        # the look-behind is slow to search a value with: the substring test first
        pattern = re.compile(r"(?<![^\W_])" + re.escape(needle))
        return [value for value in values if needle in value and pattern.search(value)]


def index_terms(text: str, sample: Sequence[str]) -> list[str]:
    """The parts of ``text`` for a trigram index to read, as written in ``text``: rarest
    first in ``sample`` (stored values, lower case; a trigram index ignores case), those
    that narrow the sampled values holding the ones before them, then those of other
    words and other rare ones. None when the sample is too small to tell, when the values
    holding them all are not rare in it, or when fewer than two are found. Every value
    holding ``text`` holds each, and each gives the index at least one trigram."""
    if len(sample) < MIN_SAMPLE:
        return []
    parts: dict[str, _Part] = {}  # lower case → the first one
    for part in _parts(text):
        parts.setdefault(part.text.lower(), part)
        if len(parts) == CANDIDATES:
            break
    holders = {part: part.holders(sample) for part in parts.values()}
    weighed = sorted(
        (len(holders[part]) / len(sample), position, part)
        for position, part in enumerate(parts.values())
    )
    chosen: list[_Part] = []
    holding = seen = list(sample)  # the sampled values holding every chosen part; the
    for _, _, part in weighed:  # last of those before none was left
        narrowed = part.holders(holding)
        if len(chosen) < MAX_TERMS and len(narrowed) < len(holding):
            chosen.append(part)
            holding = narrowed
            seen = holding or seen
    if len(holding) / len(sample) > RARE_SHARE:
        return []
    read = {part.word for part in chosen}
    # The sample can tell no more: other words, but not one that all of several values
    # hold where they hold the chosen ones (a host's "com" beside its name, or beside
    # another word of the name: "org" after "git" of github.example.org narrows nothing,
    # and its list cost a tenth of the listing at 10M runs).
    groups = [seen, *(holders[part] for part in chosen)]
    for share, _, part in weighed:
        if part.word in read or share > OTHER_WORD_SHARE or _implied(part, groups):
            continue
        chosen.append(part)
        read.add(part.word)
        groups.append(holders[part])
    chosen += [part for share, _, part in weighed if share <= RARE_SHARE and part not in chosen]
    return [part.text for part in chosen[:MAX_TERMS]] if len(chosen) >= 2 else []


def _implied(part: _Part, groups: Sequence[Sequence[str]]) -> bool:
    """Whether every value of a group of at least MIN_SEEN values holds ``part``."""
    return any(
        len(group) >= MIN_SEEN and len(part.holders(group)) == len(group) for group in groups
    )


def _parts(text: str) -> Iterator[_Part]:
    """Each word's trigrams, word by word; a word too short to have one, after the
    character before it (``/1``: to the index, the padded trigram of a word starting with
    1; none for the text's first word, whose start is unknown)."""
    for index, word in enumerate(_WORD.finditer(text)):
        if word.end() - word.start() < 3 and word.start() > 0:
            short = text[word.start() - 1 : word.end()]
            yield _Part(short, index, word.group().lower(), at_start=True)
        for start in range(word.start(), word.end() - 2):
            trigram = text[start : start + 3]
            yield _Part(trigram, index, trigram.lower())
