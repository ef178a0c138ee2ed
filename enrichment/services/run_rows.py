"""A run's hot statements, written out: its INSERT, its rows' INSERTs, its UPDATE.

Every message inserts its run (``running``), then its URL decisions and attempts, and
updates the run when it finishes. The ORM compiles each of those statements anew for every
run; under load that compiling was most of the CPU a worker spent storing runs. Here each
statement is written once per shape (the model and number of rows inserted; the fields
updated) and each value is prepared by its model field (``pre_save``, ``get_db_prep_save``),
as the ORM's compiler prepares it, so what is stored is the same
(``tests/enrichment/services/test_runs.py`` compares them on both databases).
The config version check before a run is written the same way (``enrichment.config.cache``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import Any

from django.db import DatabaseError, connection, models, transaction

from enrichment.models import Run


def rows_insert(rows: Sequence[models.Model]) -> None:
    """Insert new rows of one model, setting their ids: ``bulk_create``, written out. A
    row's foreign keys take the ids of the rows they point at (saved before it, as
    ``bulk_create`` requires). The ids come back from ``RETURNING``, in the order of the
    rows, as ``bulk_create`` relies on. What this does not cover goes to ``bulk_create``:
    a database that cannot return the ids, a model without a database-numbered id or with
    parents, a database default or an expression as a value."""
    if not rows:
        return
    model = type(rows[0])
    fields = _insert_fields(model)
    if fields is None or not connection.features.can_return_rows_from_bulk_insert:
        model._default_manager.bulk_create(rows)
        return
    values = [[_insert_value(field, row) for field in fields] for row in rows]
    if any(hasattr(value, "resolve_expression") for row in values for value in row):
        model._default_manager.bulk_create(rows)
        return
    size = connection.ops.bulk_batch_size(list(fields), rows) or len(rows)
    # One statement is all or nothing by itself; several (the database's limit of
    # parameters) are one transaction.
    with transaction.atomic() if len(rows) > size else contextlib.nullcontext():
        for start in range(0, len(rows), size):
            _insert(rows[start : start + size], values[start : start + size], fields)


def _insert_value(field: models.Field[Any, Any], row: models.Model) -> Any:
    if field.many_to_one:  # a foreign key to a row given as an object: that row's key now
        target = field.get_cached_value(row, default=None)  # type: ignore[attr-defined]
        if target is not None:
            if target.pk is None:
                raise ValueError(f"{type(row).__name__}.{field.name} points at an unsaved row")
            if getattr(row, field.attname) in field.empty_values:
                setattr(row, field.name, target)  # sets the key column from the target
    return field.pre_save(row, add=True)


def _insert(
    rows: Sequence[models.Model],
    values: Sequence[Sequence[Any]],
    fields: Sequence[models.Field[Any, Any]],
) -> None:
    model = type(rows[0])
    params = [
        field.get_db_prep_save(value, connection)
        for row in values
        for field, value in zip(fields, row, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(_insert_statement(model, connection.vendor, len(rows)), params)
        ids = [returned[0] for returned in cursor.fetchall()]
    for row, pk in zip(rows, ids, strict=True):
        row.pk = pk
        row._state.adding = False
        row._state.db = connection.alias


def run_update(run: Run, fields: Sequence[str]) -> None:
    """Store these fields of a stored run. Its time is in the WHERE clause with its id: on
    partitioned storage PostgreSQL then reads and locks the run's month only, where by id
    alone it would probe every month (more of them each month) and wait for a lock held on
    any of them (an old month being dropped). A run no longer stored raises, as
    ``save(update_fields=...)`` would.

    It is ``Run.objects.filter(pk=, created_at=).update(...)``, written out. A field named
    twice (two stages keep their records in ``stage_records``) is set once."""
    fields = tuple(dict.fromkeys(fields))
    columns = [_field(name) for name in fields]
    params = [field.get_db_prep_save(getattr(run, field.attname), connection) for field in columns]
    params.append(_field("id").get_db_prep_value(run.pk, connection))
    params.append(_field("created_at").get_db_prep_value(run.created_at, connection))
    with connection.cursor() as cursor:
        cursor.execute(_update_statement(connection.vendor, fields), params)
        stored = cursor.rowcount
    if stored != 1:
        raise DatabaseError(f"run {run.pk} is not stored: its {', '.join(fields)} were not saved")


@functools.cache
def _insert_fields(model: type[models.Model]) -> tuple[models.Field[Any, Any], ...] | None:
    """Every column of a row but its id, which the database numbers (None: a model this
    module leaves to the ORM)."""
    meta = model._meta
    if meta.parents or not isinstance(meta.pk, models.AutoField | models.BigAutoField):
        return None
    return tuple(field for field in meta.concrete_fields if not field.primary_key)


@functools.lru_cache(maxsize=128)
def _insert_statement(model: type[models.Model], vendor: str, rows: int) -> str:
    fields = _insert_fields(model) or ()
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    return (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES {', '.join([row] * rows)}"
        f" RETURNING {quote(model._meta.pk.column)}"
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
