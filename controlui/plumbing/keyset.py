"""Keyset pagination, shared by every history list.

The classic order is ``(created_at, id)``, newest first; an ``Ordering`` describes any other
one (a sort key expression, ascending or descending, with the primary key breaking ties in the
same direction, so one two-column index serves both directions).

A cursor is the opaque position of the last row shown; the next page starts strictly after
it, so rows written meanwhile never shift a page and deep pages cost what the first does.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import F, Model, Q, QuerySet
from django.db.models.expressions import Combinable

from controlui.plumbing.errors import InvalidInput

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50
SORT_KEY = "keyset_sort_key"  # the alias a sorted page gives its key expression

RowT = TypeVar("RowT", bound=Model)


def encode_cursor(row: Any) -> str:
    return _b64(f"{row.created_at.isoformat()}|{row.pk}")


def _b64(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _unb64(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"]) from None


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        stamp, _, pk = _unb64(cursor).partition("|")
        return datetime.fromisoformat(stamp), int(pk)
    except ValueError:
        raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"]) from None


def older_than(created: datetime, pk: int) -> Q:
    """Rows after (created, pk) in newest-first order.

    The leading ``created_at <=`` is implied by the OR but is what lets the database start
    the index scan at the cursor: without it PostgreSQL walked the history index from the
    newest row and filtered, so a page 500,000 rows deep read 500,000 index entries.
    """
    return Q(created_at__lte=created) & (
        Q(created_at__lt=created) | Q(created_at=created, id__lt=pk)
    )


def newer_than(created: datetime, pk: int) -> Q:
    """Rows before (created, pk) in newest-first order; the mirror of ``older_than``."""
    return Q(created_at__gte=created) & (
        Q(created_at__gt=created) | Q(created_at=created, id__gt=pk)
    )


@dataclass(frozen=True)
class Ordering:
    """One keyset order: ``key`` (a field name or a non-null expression), then the primary key,
    both descending or both ascending.

    ``name`` is written into the cursor, so a cursor of one order is refused by another
    (``legacy``: the order of the plain ``created_at|id`` cursors, kept readable as before).
    ``parse``/``format`` turn the key's value into cursor text and back.
    """

    name: str
    key: str | Combinable
    descending: bool
    parse: Callable[[str], Any] = int
    format: Callable[[Any], str] = str
    legacy: bool = False

    def expression(self) -> Combinable:
        return F(self.key) if isinstance(self.key, str) else self.key

    def order_by(self) -> tuple[Any, Any]:
        key = F(SORT_KEY)
        if self.descending:
            return key.desc(), F("pk").desc()
        return key.asc(), F("pk").asc()

    def after(self, value: Any, pk: int) -> Q:
        """Rows strictly after (value, pk) in this order. The leading bound (implied by the OR)
        is what lets the database start the index scan at the cursor (see ``older_than``)."""
        if self.descending:
            return Q(**{f"{SORT_KEY}__lte": value}) & (
                Q(**{f"{SORT_KEY}__lt": value}) | Q(**{SORT_KEY: value, "pk__lt": pk})
            )
        return Q(**{f"{SORT_KEY}__gte": value}) & (
            Q(**{f"{SORT_KEY}__gt": value}) | Q(**{SORT_KEY: value, "pk__gt": pk})
        )

    def before(self, value: Any, pk: int) -> Q:
        """Rows strictly before (value, pk): ``after`` in the reversed order."""
        return self.reversed().after(value, pk)

    def reversed(self) -> Ordering:
        return Ordering(self.name, self.key, not self.descending, self.parse, self.format)

    def sorted(self, rows: QuerySet[RowT]) -> QuerySet[RowT]:
        """``rows`` in this order, each carrying its key as ``keyset_sort_key``."""
        return rows.annotate(**{SORT_KEY: self.expression()}).order_by(*self.order_by())

    def encode(self, row: Any) -> str:
        value = self.format(getattr(row, SORT_KEY))
        if self.legacy:
            return _b64(f"{value}|{row.pk}")
        return _b64(f"{self.name}|{value}|{row.pk}")

    def decode(self, cursor: str) -> tuple[Any, int]:
        parts = _unb64(cursor).split("|")
        if len(parts) == 2 and self.legacy:
            parts = [self.name, *parts]
        if len(parts) != 3:
            raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"])
        name, value, pk = parts
        if name != self.name:
            raise InvalidInput(
                f"cursor: it pages the order {name!r}, not {self.name!r}; "
                "start again from the first page",
                ["cursor"],
            )
        try:
            return self.parse(value), int(pk)
        except ValueError:
            raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"]) from None


def datetime_ordering(name: str, field: str, *, descending: bool, legacy: bool = False) -> Ordering:
    return Ordering(
        name,
        field,
        descending,
        parse=datetime.fromisoformat,
        format=lambda value: value.isoformat(),
        legacy=legacy,
    )


@dataclass(frozen=True)
class KeysetPage(Generic[RowT]):
    items: list[RowT]
    next_cursor: str | None


def keyset_page(
    rows: QuerySet[RowT], *, cursor: str | None, limit: int, ordering: Ordering | None = None
) -> KeysetPage[RowT]:
    """One page of ``rows`` after ``cursor``: in ``ordering``, or (without one) ``rows`` as
    given, ordered newest first by ``(created_at, id)``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit: must be between 1 and {MAX_PAGE_SIZE}, got {limit}", ["limit"])
    if ordering is not None:
        rows = ordering.sorted(rows)
        if cursor:
            rows = rows.filter(ordering.after(*ordering.decode(cursor)))
    elif cursor:
        rows = rows.filter(older_than(*decode_cursor(cursor)))
    items = list(rows[: limit + 1])
    has_more = len(items) > limit
    items = items[:limit]
    encode = ordering.encode if ordering is not None else encode_cursor
    return KeysetPage(items=items, next_cursor=encode(items[-1]) if has_more and items else None)
