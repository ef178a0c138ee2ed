"""The run row's two hot statements, written out: a new run's INSERT and a run's UPDATE.

Every message inserts its run (``running``) and updates it when it finishes. The ORM
compiles each of those statements anew for every run; under load that compiling was most
of the CPU a worker spent storing runs. Here each statement is written once per shape (the
fields updated; the number of rows inserted) and each value is prepared by its model field
(``pre_save``, ``get_db_prep_save``), as the ORM's compiler prepares it, so what is stored
is the same (``tests/enrichment/services/test_runs.py`` compares them on both databases).
The config version check before a run is written the same way (``enrichment.config.cache``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import Any

from django.db import DatabaseError, connection, models, transaction

from enrichment.models import Run


def runs_insert(runs: Sequence[Run]) -> None:
    """Insert new runs, setting their ids: ``bulk_create`` (or ``save`` for one), written
    out. The ids come back from ``RETURNING``, in the order of the rows, as ``bulk_create``
    relies on; a database that cannot return them saves the runs one by one."""
    if not connection.features.can_return_rows_from_bulk_insert:
        with transaction.atomic():
            for run in runs:
                run.save(force_insert=True)
        return
    fields = _insert_fields()
    rows = [[field.pre_save(run, add=True) for field in fields] for run in runs]
    if any(hasattr(value, "resolve_expression") for row in rows for value in row):
        Run.objects.bulk_create(runs)  # a database default or an expression: the ORM's job
        return
    size = connection.ops.bulk_batch_size(fields, runs) or len(runs)
    # One statement is all or nothing by itself; several (the database's limit of
    # parameters) are one transaction.
    with transaction.atomic() if len(runs) > size else contextlib.nullcontext():
        for start in range(0, len(runs), size):
            _insert(runs[start : start + size], rows[start : start + size], fields)


def _insert(runs: Sequence[Run], rows: Sequence[Sequence[Any]], fields: Sequence[Any]) -> None:
    params = [
        field.get_db_prep_save(value, connection)
        for row in rows
        for field, value in zip(fields, row, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(_insert_statement(connection.vendor, len(rows)), params)
        ids = [row[0] for row in cursor.fetchall()]
    for run, pk in zip(runs, ids, strict=True):
        run.pk = pk
        run._state.adding = False
        run._state.db = connection.alias


def run_update(run: Run, fields: Sequence[str]) -> None:
    """Store these fields of a stored run. Its time is in the WHERE clause with its id: on
    partitioned storage PostgreSQL then reads and locks the run's month only, where by id
    alone it would probe every month (more of them each month) and wait for a lock held on
    any of them (an old month being dropped). A run no longer stored raises, as
    ``save(update_fields=...)`` would.

    It is ``Run.objects.filter(pk=, created_at=).update(...)``, written out."""
    columns = [_field(name) for name in fields]
    params = [field.get_db_prep_save(getattr(run, field.attname), connection) for field in columns]
    params.append(_field("id").get_db_prep_value(run.pk, connection))
    params.append(_field("created_at").get_db_prep_value(run.created_at, connection))
    with connection.cursor() as cursor:
        cursor.execute(_update_statement(connection.vendor, tuple(fields)), params)
        stored = cursor.rowcount
    if stored != 1:
        raise DatabaseError(f"run {run.pk} is not stored: its {', '.join(fields)} were not saved")


@functools.cache
def _insert_fields() -> tuple[models.Field[Any, Any], ...]:
    """Every column of a run but its id, which the database numbers."""
    return tuple(field for field in Run._meta.concrete_fields if not field.primary_key)


@functools.lru_cache(maxsize=128)
def _insert_statement(vendor: str, rows: int) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in _insert_fields())
    row = "(" + ", ".join(["%s"] * len(_insert_fields())) + ")"
    return (
        f"INSERT INTO {quote(Run._meta.db_table)} ({columns}) VALUES {', '.join([row] * rows)}"
        f" RETURNING {quote(_field('id').column)}"
    )


@functools.lru_cache(maxsize=32)
def _update_statement(vendor: str, fields: tuple[str, ...]) -> str:
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(_field(name).column)} = %s" for name in fields)
    return (
        f"UPDATE {quote(Run._meta.db_table)} SET {assignments}"
        f" WHERE {quote(_field('id').column)} = %s AND {quote(_field('created_at').column)} = %s"
    )


def _field(name: str) -> models.Field[Any, Any]:
    field = Run._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field
