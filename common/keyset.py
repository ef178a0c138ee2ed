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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from django.db.models import BooleanField, Expression, F, Model, Q, QuerySet, Value
from django.db.models.expressions import Combinable

from common.errors import InvalidInput

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


def cursor_time(text: str) -> datetime:
    """A cursor's time; ValueError when it is not one, or is one no database can compare
    (an offset that takes it past year 1 or 9999 in UTC)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is not None:
        try:
            moment.astimezone(UTC)
        except OverflowError as error:
            raise ValueError(f"{text!r} is out of range in UTC") from error
    return moment


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        stamp, _, pk = _unb64(cursor).partition("|")
        return cursor_time(stamp), int(pk)
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


class RowComparison(Expression):
    """``(a, b) < (c, d)``: a row-value comparison, which a two-column btree index on
    ``(a, b)`` answers as one range. Spelled out as ``a < c OR (a = c AND b < d)`` the
    database can seek only on ``a``, and a page deep inside a long run of equal keys (URL
    count has a handful of values) would read every row of that run before it."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, operator: str, left: list[Any], right: list[Any]) -> None:
        super().__init__()
        if operator not in ("<", ">") or len(left) != len(right):
            raise ValueError("a row comparison is < or > between rows of equal length")
        self.operator = operator
        self.left = left
        self.right = right

    def get_source_expressions(self) -> list[Any]:
        return [*self.left, *self.right]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        half = len(exprs) // 2
        self.left, self.right = list(exprs[:half]), list(exprs[half:])

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        sides, params = [], []
        for row in (self.left, self.right):
            parts = []
            for expression in row:
                sql, part_params = compiler.compile(expression)
                parts.append(sql)
                params.extend(part_params)
            sides.append(f"({', '.join(parts)})")
        return f"{sides[0]} {self.operator} {sides[1]}", params


def stored_int(text: str) -> int:
    """An integer a database column can hold (signed 64 bits): a cursor's key or id. A larger
    one is refused (``ValueError``) rather than sent on (SQLite cannot bind it: a 500).

    >>> stored_int("9223372036854775807")
    9223372036854775807
    >>> stored_int("9" * 30)
    Traceback (most recent call last):
    ...
    ValueError: out of range: 999999999999999999999999999999
    """
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"out of range: {text[:40]}")
    return value


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
    parse: Callable[[str], Any] = stored_int
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
        """Rows strictly after (value, pk) in this order: ``(key, pk) < (value, pk)`` (``>``
        ascending). The leading bound on the key alone is implied by it but lets an index
        that has other columns before the key (``outcome, created_at, id``) start there."""
        bound = f"{SORT_KEY}__lte" if self.descending else f"{SORT_KEY}__gte"
        row = RowComparison(
            "<" if self.descending else ">",
            [F(SORT_KEY), F("pk")],
            [Value(value), Value(pk)],
        )
        return Q(**{bound: value}) & Q(row)

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
            return self.parse(value), stored_int(pk)
        except ValueError:
            raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"]) from None


def datetime_ordering(name: str, field: str, *, descending: bool, legacy: bool = False) -> Ordering:
    return Ordering(
        name,
        field,
        descending,
        parse=cursor_time,
        format=lambda value: value.isoformat(),
        legacy=legacy,
    )


@dataclass(frozen=True)
class KeysetPage(Generic[RowT]):
    items: list[RowT]
    next_cursor: str | None


def page_size_check(limit: int) -> int:
    """``limit``, or ``InvalidInput`` naming it when no page may hold that many rows."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit: must be between 1 and {MAX_PAGE_SIZE}, got {limit}", ["limit"])
    return limit


def keyset_page(
    rows: QuerySet[RowT], *, cursor: str | None, limit: int, ordering: Ordering | None = None
) -> KeysetPage[RowT]:
    """One page of ``rows`` after ``cursor``: in ``ordering``, or (without one) ``rows`` as
    given, ordered newest first by ``(created_at, id)``."""
    page_size_check(limit)
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
