"""Keyset pagination over ``(created_at, id)``, newest first, shared by every history list.

A cursor is the opaque position of the last row shown; the next page starts strictly after
it, so rows written meanwhile never shift a page and deep pages cost what the first does.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import Model, Q, QuerySet

from controlui.plumbing.errors import InvalidInput

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50

RowT = TypeVar("RowT", bound=Model)


def encode_cursor(row: Any) -> str:
    raw = f"{row.created_at.isoformat()}|{row.pk}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, _, pk = raw.partition("|")
        return datetime.fromisoformat(stamp), int(pk)
    except (ValueError, binascii.Error, UnicodeDecodeError):
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
class KeysetPage(Generic[RowT]):
    items: list[RowT]
    next_cursor: str | None


def keyset_page(rows: QuerySet[RowT], *, cursor: str | None, limit: int) -> KeysetPage[RowT]:
    """One page of ``rows`` (ordered newest first) after ``cursor``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit: must be between 1 and {MAX_PAGE_SIZE}, got {limit}", ["limit"])
    if cursor:
        rows = rows.filter(older_than(*decode_cursor(cursor)))
    items = list(rows[: limit + 1])
    has_more = len(items) > limit
    items = items[:limit]
    return KeysetPage(
        items=items, next_cursor=encode_cursor(items[-1]) if has_more and items else None
    )
