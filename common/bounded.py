"""Reads with a time budget: an answer in time, or None instead of a slow page.

On PostgreSQL the read runs in a transaction (a savepoint inside an outer one) with
``statement_timeout`` set for it and put back after; a statement cancelled by the timeout
(SQLSTATE 57014) rolls the savepoint back, which undoes the setting too, and the read
answers None. Other databases (SQLite, the embedded default, is not
meant for logs of this size) run the read as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction

T = TypeVar("T")

QUERY_CANCELED = "57014"


def budgeted(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether reads on this database answer by a time budget (``within``)."""
    return connections[using].vendor == "postgresql"


def within(budget_ms: int, read: Callable[[], T], using: str = DEFAULT_DB_ALIAS) -> T | None:
    """``read()``, or None when one of its statements ran past ``budget_ms`` (PostgreSQL;
    a budget already spent, ``budget_ms <= 0``, answers None without reading)."""
    connection = connections[using]
    if not budgeted(using):
        return read()
    if budget_ms <= 0:
        return None
    try:
        with transaction.atomic(using=using):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT current_setting('statement_timeout'),"
                    " set_config('statement_timeout', %s, true)",
                    [f"{budget_ms}ms"],
                )
                (previous, _) = cursor.fetchone()
            answer = read()
            # Inside an outer transaction the setting would outlive this savepoint.
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
            return answer
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == QUERY_CANCELED:
            return None
        raise
