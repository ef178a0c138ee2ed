"""The history's text filters, each in a form its database answers from an index.

- ``q`` (full text over the two bodies; link summaries are appended to the enriched one).
  On PostgreSQL it is PostgreSQL's own text search: every word of ``q``, anywhere in the
  run, as a whole word, case-insensitive (``plainto_tsquery`` with the ``simple``
  configuration: no stemming, no stop words, any language; operators in ``q`` are plain
  text, so no input is a syntax error). It reads the stored vector ``body_search`` and its
  GIN index (migration 0008). On SQLite it is a case-insensitive substring, as before.
- ``url`` (part of a URL, case-sensitive substring), the trigram index
  ``urldecision_url_trgm`` on PostgreSQL. A trigram lookup needs three letters or digits
  in a row; shorter fragments are refused on both databases, with the same message (a
  one-letter fragment matches nearly every run; on PostgreSQL it was a one-second scan of
  every URL at a million runs).

Newest-first pages filtered by a word: PostgreSQL guesses how many runs hold a word it has
no statistics for (a rare one) as 0.5 % of the table, so it walks the history index
expecting a match every ~200 runs, and for a rare word reads the whole table (or ANDs a
bitmap of a quarter of the table from another filter's index). ``planned`` tells rare from
common first (the planner's estimate when it has statistics for the word, else a bounded
list of its runs from the GIN index alone); the reads of a rare word then ask for "one of
these runs", which the planner estimates right.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import BooleanField, Exists, Expression, OuterRef, Q, QuerySet
from django.db.models.sql.compiler import SQLCompiler

from controlui.plumbing.errors import InvalidInput
from enrichment.models import Run, UrlDecision

MIN_URL_FRAGMENT = 3
# Three word characters in a row: what a trigram index can look up (pg_trgm skips the
# punctuation around them).
_INDEXABLE_URL = re.compile(r"\w{3}")
_WORD = re.compile(r"\w")
TEXT_CONFIG = "simple"
SEARCH_COLUMN = "body_search"  # PostgreSQL only: migration 0008
# At most this many matches, a word is "rare": its runs are fetched from the GIN index and
# sorted (bounded by this number); beyond it, walking the history newest first meets a
# match at least every N / RARE_MATCHES runs (every ~200 at 1M runs).
RARE_MATCHES = 5000
# PostgreSQL's guess for the share of rows holding a word absent from its statistics is at
# most 0.5 % (DEFAULT_TS_MATCH_SEL): an estimate well above it (twice: row estimates are
# rounded) comes from real statistics.
COMMON_WORD_SHARE = 0.01


@dataclass(frozen=True)
class _RareWord:
    query: str
    run_ids: list[int]


# Inside ``planned``: the rare word and its runs (``BodyMatches`` then reads as "one of
# these runs"), or False for a common word.
_PLANNED: ContextVar[_RareWord | bool | None] = ContextVar("text_search_planned", default=None)


def url_fragment_problem(fragment: str) -> str | None:
    """Why ``fragment`` cannot be a URL filter, or None (an empty one is no filter)."""
    if not fragment:
        return None
    if len(fragment) < MIN_URL_FRAGMENT:
        return (
            f"URL filter needs at least {MIN_URL_FRAGMENT} characters "
            "(a shorter fragment matches nearly every run)"
        )
    if not _INDEXABLE_URL.search(fragment):
        return (
            f"URL filter needs {MIN_URL_FRAGMENT} letters or digits in a row "
            "(e.g. part of a host name or path)"
        )
    return None


def text_query_problem(query: str) -> str | None:
    """Why ``query`` cannot be a full-text filter, or None."""
    if query and not _WORD.search(query):
        return "full-text search needs a word (letters or digits)"
    return None


def check_text_filters(url: str, q: str) -> None:
    for name, problem in (("url", url_fragment_problem(url)), ("q", text_query_problem(q))):
        if problem:
            raise InvalidInput(f"{name}: {problem}", [name])


class BodyMatches(Expression):
    """``<run>.body_search @@ plainto_tsquery('simple', q)`` (PostgreSQL only), naming the
    run table by the alias of the query it is compiled in. Inside ``planned`` for a rare
    word: ``<run>.id = ANY(<its runs>)``."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, query: str) -> None:
        super().__init__()
        self.query = query

    def as_sql(self, compiler: SQLCompiler, connection: Any) -> tuple[str, list[Any]]:
        table = compiler.quote_name_unless_alias(compiler.query.get_initial_alias())
        planned_word = _PLANNED.get()
        if isinstance(planned_word, _RareWord) and planned_word.query == self.query:
            return f"{table}.{connection.ops.quote_name('id')} = ANY(%s)", [planned_word.run_ids]
        column = f"{table}.{connection.ops.quote_name(SEARCH_COLUMN)}"
        return f"{column} @@ plainto_tsquery('{TEXT_CONFIG}'::regconfig, %s)", [self.query]


def body_text_condition(query: str, vendor: str) -> Q | BodyMatches:
    """Runs whose bodies hold ``query``: full text on PostgreSQL, a substring elsewhere."""
    if vendor == "postgresql":
        return BodyMatches(query)
    return Q(original_body__icontains=query) | Q(enriched_body__icontains=query)


def url_condition(fragment: str) -> Exists:
    """Runs with a URL containing ``fragment`` (on PostgreSQL: the URL trigram index)."""
    return Exists(UrlDecision.objects.filter(run=OuterRef("pk"), url__contains=fragment))


def _estimated_rows(runs: QuerySet[Any]) -> float:
    """The planner's row estimate for ``runs`` (an EXPLAIN, nothing is read)."""
    plan = json.loads(runs.order_by().values("pk").explain(format="json"))
    return float(plan[0]["Plan"]["Plan Rows"])


@contextmanager
def planned(query: str, using: str = DEFAULT_DB_ALIAS) -> Iterator[bool | None]:
    """Run the history reads inside this block with a plan fit for how rare the word(s)
    ``query`` are. Yields True for a rare word, False for a common one, None when there is
    nothing to plan (no ``q``, or not PostgreSQL). Evaluate the querysets inside the block.

    A word is common when PostgreSQL's statistics say so (its estimate is then well above
    the 0.5 % it guesses for words it knows nothing of, and above ``RARE_MATCHES``):
    walking the history newest first meets its runs soon. Otherwise its runs are listed from the GIN index alone, at most
    ``RARE_MATCHES + 1`` of them; when that is all there are, the reads inside the block
    look for "one of these runs", which the planner estimates right (no walk of the whole
    history for one match, no bitmap of another index ANDed in)."""
    connection = connections[using]
    if not query or connection.vendor != "postgresql" or _PLANNED.get() is not None:
        planned_word = _PLANNED.get()
        yield None if planned_word is None else planned_word is not False
        return
    matching = Run.objects.using(using).filter(BodyMatches(query))
    estimate = _estimated_rows(matching)
    share = estimate / max(_estimated_rows(Run.objects.using(using)), 1.0)
    plan: _RareWord | bool = False
    if share <= COMMON_WORD_SHARE or estimate <= RARE_MATCHES:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            # Only the GIN index can answer: bounded work whatever the word.
            cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")
            ids = list(matching.order_by().values_list("pk", flat=True)[: RARE_MATCHES + 1])
            cursor.execute(
                "SET LOCAL enable_seqscan TO DEFAULT; SET LOCAL enable_indexscan TO DEFAULT"
            )
        if len(ids) <= RARE_MATCHES:
            plan = _RareWord(query, ids)
    token = _PLANNED.set(plan)
    try:
        yield plan is not False
    finally:
        _PLANNED.reset(token)
