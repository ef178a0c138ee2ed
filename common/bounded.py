"""Reads with a time budget: an answer in time, or None instead of a slow page.

On PostgreSQL the read runs in a transaction of its own with ``statement_timeout`` (and any
other ``settings``) set for it alone (``set_config(…, true)``: they end with the transaction);
a statement cancelled by the timeout (SQLSTATE 57014) rolls the transaction back and the read
answers None. Inside an outer transaction the read runs in a savepoint instead, and the
settings it changed are put back after it (a released savepoint keeps them). Other databases
(SQLite, the embedded default, is not meant for logs of this size) run the read as it is.

A read outside any transaction (a request's usual case) costs the round trips of its own
statements plus three (BEGIN, the settings, COMMIT); in a savepoint, plus four (the savepoint,
the settings with their values before, the settings put back, its release).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction

T = TypeVar("T")

QUERY_CANCELED = "57014"


def budgeted(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether reads on this database answer by a time budget (``within``)."""
    return connections[using].vendor == "postgresql"


def within(
    budget_ms: int,
    read: Callable[[], T],
    using: str = DEFAULT_DB_ALIAS,
    *,
    settings: Mapping[str, str] | None = None,
) -> T | None:
    """``read()``, or None when one of its statements ran past ``budget_ms`` (PostgreSQL;
    a budget already spent, ``budget_ms <= 0``, answers None without reading). ``settings``:
    other run-time settings of PostgreSQL for the read alone (e.g. ``enable_seqscan: off``)."""
    connection = connections[using]
    if not budgeted(using):
        return read()
    if budget_ms <= 0:
        return None
    local = {"statement_timeout": f"{budget_ms}ms", **(settings or {})}
    nested = connection.in_atomic_block
    try:
        with transaction.atomic(using=using):
            previous = settings_set_local(using, local, keep=nested)
            answer = read()
            if nested:  # a released savepoint would hand its settings to the outer transaction
                settings_set_local(using, previous)
            return answer
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == QUERY_CANCELED:
            return None
        raise


def settings_set_local(
    using: str, values: Mapping[str, str], *, keep: bool = False
) -> dict[str, str]:
    """Set PostgreSQL run-time settings until the end of the current transaction, in one
    statement; with ``keep``, answer their values before (to put them back)."""
    names = list(values)
    if not names:
        return {}
    columns = [
        *(["current_setting(%s)"] * len(names) if keep else []),
        *["set_config(%s, %s, true)"] * len(names),
    ]
    params: list[str] = [*(names if keep else [])]
    for name in names:
        params.extend([name, values[name]])
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(columns)}", params)
        row = cursor.fetchone()
    return dict(zip(names, map(str, row[: len(names)]), strict=True)) if keep else {}
