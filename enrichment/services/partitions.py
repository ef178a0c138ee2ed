"""Partitioned storage of the decision log on PostgreSQL: the switch, the months ahead, and
what a retention pass reads of a month (dropping it whole: ``partition_drops``).

``partitioned_storage_switch`` turns the three decision-log tables (runs, URL decisions,
attempts) into tables partitioned by month of the run's creation, online:

1. The foreign keys between them go (a partitioned table has no unique ``id`` to point at;
   Django deletes a run's rows itself, and the rows of a run share its month).
2. Each table gets a check that its rows are older than the first boundary (the next month
   start, a day away at least), added ``NOT VALID`` and then validated: the validation scans
   under a lock that lets inserts go on.
3. One short transaction per table renames it ``<table>_legacy``, creates the partitioned
   table in its place (same columns, defaults, checks and generated column; ids from a
   sequence carrying on from the old one) and attaches the old table: the runs' as the
   partition of everything before the boundary, the child tables' as their default partition
   (their rows stored before ``run_created_at`` existed have none). The validated check
   spares the scan, so this holds its exclusive lock for milliseconds.
4. Each index of the old table becomes an index of the partitioned table (same name and
   definition) with the old index attached to it: nothing is rebuilt. Primary keys and
   unique constraints stay per partition (a unique index over partitions must hold the
   month); every partition gets the same ones.
5. The partitions of the months ahead are created (``partitions_ensure``).

Every statement that takes a lock blocking inserts runs with a short ``lock_timeout``
(``PARTITION_LOCK_TIMEOUT_MS``) and is tried again when it times out, so an insert never
waits behind the switch or a maintenance step for longer than that.

SQLite stays unpartitioned: these functions refuse it (``PartitionError``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.retention.partitions import (
    MonthPartition,
    first_boundary,
    month_name,
    month_start,
    months_to_create,
)

# The tables, parents first, with the column each is partitioned by.
TABLES = (
    (Run._meta.db_table, "created_at"),
    (UrlDecision._meta.db_table, "run_created_at"),
    (Attempt._meta.db_table, "run_created_at"),
)
RUNS_TABLE = Run._meta.db_table
BOUND_CHECK = "before_partitions"
LOCK_RETRIES = 100
LOCK_NOT_AVAILABLE = "55P03"  # SQLSTATE of a lock_timeout
MONTH_SUFFIX = re.compile(r"_p(\d{4})_(\d{2})$")
# Partitions ahead for less than this: the overview warns, and /api/health is degraded.
RUNNING_OUT = timedelta(days=7)

Say = Callable[[str], None]


class PartitionError(Exception):
    """Partitioned storage cannot be set up or kept (the message says why)."""


def _quiet(_message: str) -> None:
    return None


def _require_postgres() -> None:
    if connection.vendor != "postgresql":
        raise PartitionError(
            f"partitioned storage needs PostgreSQL; this database is {connection.vendor} "
            "(SQLite stays unpartitioned: retention removes old runs row by row)"
        )


def quoted(name: str) -> str:
    """A table's or index's name quoted for SQL (our own names: months, tables)."""
    return connection.ops.quote_name(name)


def _timestamp(moment: datetime) -> str:
    return f"'{moment.isoformat()}'::timestamptz"


def sql_rows(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of one query on the default connection."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def ddl_under_short_locks(statements: Callable[[], Sequence[str]] | Sequence[str]) -> None:
    """Run DDL in one transaction under the short lock timeout; when a lock is not granted
    in time (a long query holds the table), wait a little and try again."""
    timeout = int(settings.PARTITION_LOCK_TIMEOUT_MS)
    for attempt in range(LOCK_RETRIES):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL lock_timeout = '{timeout}ms'")
                for statement in statements() if callable(statements) else statements:
                    cursor.execute(statement)
            return
        except OperationalError as error:
            if getattr(error.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            time.sleep(min(0.02 * (attempt + 1), 0.5))
    raise PartitionError(
        f"a lock on the decision log was not granted within {timeout} ms in "
        f"{LOCK_RETRIES} tries (a long transaction holds it); nothing was changed by this step"
    )


def is_partitioned(table: str = RUNS_TABLE) -> bool:
    if connection.vendor != "postgresql":
        return False
    found = sql_rows("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [table])
    return bool(found) and found[0][0] == "p"


@dataclass(frozen=True)
class PartitionStatus:
    partitioned: bool
    available: bool = True  # PostgreSQL (SQLite stays unpartitioned)
    months: tuple[MonthPartition, ...] = ()
    legacy: bool = False  # the runs stored before the switch still have their partition

    @property
    def until(self) -> datetime | None:
        """Runs created from this moment on have no partition yet (inserts would fail)."""
        return self.months[-1].end if self.months else None

    def running_out(self, now: datetime) -> bool:
        """Less than ``RUNNING_OUT`` left ahead: prune passes are not creating months."""
        return self.until is not None and self.until - now < RUNNING_OUT


def partition_status() -> PartitionStatus:
    """How the log is stored (one catalog query on PostgreSQL, none on SQLite)."""
    if connection.vendor != "postgresql":
        return PartitionStatus(partitioned=False, available=False)
    found = sql_rows(
        "SELECT c.relkind, ARRAY(SELECT p.relname FROM pg_inherits i JOIN pg_class p"
        " ON p.oid = i.inhrelid WHERE i.inhparent = c.oid) FROM pg_class c"
        " WHERE c.oid = to_regclass(%s)",
        [RUNS_TABLE],
    )
    if not found or found[0][0] != "p":
        return PartitionStatus(partitioned=False)
    names = found[0][1]
    return PartitionStatus(
        partitioned=True,
        months=tuple(sorted(_months(RUNS_TABLE, names), key=lambda m: m.start)),
        legacy=f"{RUNS_TABLE}_legacy" in names,
    )


def _partitions(table: str) -> list[tuple[str, str]]:
    return sql_rows(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)",
        [table],
    )


def _months(table: str, names: Sequence[str]) -> Iterator[MonthPartition]:
    for name in names:
        if name.startswith(table) and (match := MONTH_SUFFIX.search(name)):
            year, month = int(match[1]), int(match[2])
            yield MonthPartition(datetime(year, month, 1, tzinfo=UTC))


def partitioned_storage_switch(
    *,
    now: datetime | None = None,
    ahead: int | None = None,
    first: datetime | None = None,
    say: Say = _quiet,
) -> PartitionStatus:
    """Partition the decision log (see the module's docstring); a table already partitioned
    is left as it is, so a switch that stopped half way is finished by running it again.
    Then the months ahead are created.

    ``first`` sets the first month boundary (default: the next one at least a day away),
    and every month from it gets its partition. An earlier one is only for a database
    nobody writes to meanwhile (a new one, to be loaded): its rows must all be older."""
    _require_postgres()
    now = now or timezone.now()
    if first is not None and first != month_start(first):
        raise PartitionError(f"the first boundary must be a month start, not {first}")
    if first is not None and is_partitioned():
        raise PartitionError("the decision log is partitioned already: its first month stays")
    boundary = first if first is not None else _boundary(now)
    for table, column in TABLES:
        if not is_partitioned(table):
            say(f"{table}: dropping the foreign keys between the decision log's tables")
            _foreign_keys_drop(table)
            say(f"{table}: checking that every row is older than {boundary:%Y-%m-%d}")
            try:
                _bound_check(table, column, boundary)
            except IntegrityError:
                raise PartitionError(
                    f"{table} holds rows from {boundary:%Y-%m-%d} on: the first month must "
                    "be later (nothing was switched)"
                ) from None
            say(f"{table}: switching to a partitioned table (the old one is {table}_legacy)")
            _switch(table, column, boundary)
        # also after a switch that stopped before its indexes: the ones left are lifted
        say(f"{table}: indexes of the partitioned table (the old ones attached, not rebuilt)")
        _indexes_lift(table)
    return partitions_ensure(now=now, ahead=ahead, say=say, past=first is not None)


def _boundary(now: datetime) -> datetime:
    """The first month boundary: the start of the first monthly partition when the runs'
    table is already partitioned (a switch finished half way), else the next one ahead."""
    if is_partitioned(RUNS_TABLE):
        bounds = sql_rows(
            "SELECT pg_get_expr(c.relpartbound, c.oid) FROM pg_class c WHERE c.oid = "
            "to_regclass(%s)",
            [f"{RUNS_TABLE}_legacy"],
        )
        if bounds and (found := re.search(r"TO \('([^']+)'\)", bounds[0][0])):
            return datetime.fromisoformat(found[1])
        months = partition_status().months
        if months:
            return months[0].start
    return first_boundary(now)


def _foreign_keys_drop(table: str) -> None:
    keys = sql_rows(
        "SELECT conrelid::regclass::text, conname FROM pg_constraint WHERE contype = 'f'"
        " AND (conrelid = to_regclass(%s) OR confrelid = to_regclass(%s))",
        [table, table],
    )
    for owner, name in keys:
        ddl_under_short_locks([f"ALTER TABLE {owner} DROP CONSTRAINT {quoted(name)}"])


def _bound_check(table: str, column: str, boundary: datetime) -> None:
    """A check that every row is older than the boundary: added ``NOT VALID`` (new rows are
    checked at once), then validated by a scan that lets inserts go on. A check left by an
    earlier attempt is replaced; one that does not hold is removed again (it would refuse
    new rows)."""
    name = quoted(f"{table}_{BOUND_CHECK}")
    condition = f"{quoted(column)} < {_timestamp(boundary)}"
    if column != "created_at":
        condition = f"{quoted(column)} IS NULL OR {condition}"
    ddl_under_short_locks(
        [
            f"ALTER TABLE {quoted(table)} DROP CONSTRAINT IF EXISTS {name}",
            f"ALTER TABLE {quoted(table)} ADD CONSTRAINT {name} CHECK ({condition}) NOT VALID",
        ]
    )
    try:
        # SHARE UPDATE EXCLUSIVE: the scan runs while inserts go on
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {quoted(table)} VALIDATE CONSTRAINT {name}")
    except IntegrityError:
        ddl_under_short_locks([f"ALTER TABLE {quoted(table)} DROP CONSTRAINT IF EXISTS {name}"])
        raise


def _switch(table: str, column: str, boundary: datetime) -> None:
    legacy = f"{table}_legacy"
    sequence = sql_rows("SELECT pg_get_serial_sequence(%s, 'id')", [table])[0][0]
    sequence_name = sequence.split(".")[-1].strip('"')
    bound = (
        f"FOR VALUES FROM (MINVALUE) TO ({_timestamp(boundary)})"
        if column == "created_at"
        else "DEFAULT"
    )

    identity = sql_rows(
        "SELECT attidentity <> '' FROM pg_attribute WHERE attrelid = to_regclass(%s)"
        " AND attname = 'id'",
        [table],
    )[0][0]

    def statements() -> list[str]:
        # Inside the transaction, after the rename locks the old table: no insert can take
        # an id between reading the sequence and the new one carrying on from it.
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {quoted(table)} RENAME TO {quoted(legacy)}")
            cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
            last_value, is_called = cursor.fetchone()
        # A partitioned table has no identity column (before PostgreSQL 17): the ids come
        # from a sequence of the same name, carrying on. A serial column (a database created
        # by an older Django) keeps its sequence.
        carry_on = [
            f"ALTER TABLE {quoted(legacy)} ALTER COLUMN id DROP IDENTITY",
            f"CREATE SEQUENCE {quoted(sequence_name)}",
            f"SELECT setval('{quoted(sequence_name)}', {int(last_value)}, {bool(is_called)})",
        ]
        return [
            f"CREATE TABLE {quoted(table)} (LIKE {quoted(legacy)} INCLUDING DEFAULTS"
            f" INCLUDING CONSTRAINTS INCLUDING GENERATED) PARTITION BY RANGE ({quoted(column)})",
            f"ALTER TABLE {quoted(table)} DROP CONSTRAINT {quoted(f'{table}_{BOUND_CHECK}')}",
            *(carry_on if identity else []),
            f"ALTER SEQUENCE {quoted(sequence_name)} OWNED BY {quoted(table)}.id",
            f"ALTER TABLE {quoted(table)} ALTER COLUMN id SET DEFAULT"
            f" nextval('{quoted(sequence_name)}'::regclass)",
            f"ALTER TABLE {quoted(table)} ATTACH PARTITION {quoted(legacy)} {bound}",
        ]

    ddl_under_short_locks(statements)


def _indexes_lift(table: str) -> None:
    """Each index of the legacy partition that no constraint owns, made an index of the
    partitioned table by the same name, with the legacy one attached to it."""
    legacy = f"{table}_legacy"
    indexes = sql_rows(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(%s)"
        " AND NOT i.indisunique AND NOT EXISTS (SELECT 1 FROM pg_constraint k"
        " WHERE k.conindid = i.indexrelid)",
        [legacy],
    )
    for name, definition in indexes:
        if name.endswith("_legacy"):
            continue
        renamed = f"{name[:56]}_legacy"
        using = definition[definition.index(" USING ") :]
        ddl_under_short_locks(
            [
                f"ALTER INDEX {quoted(name)} RENAME TO {quoted(renamed)}",
                f"CREATE INDEX {quoted(name)} ON ONLY {quoted(table)}{using}",
                f"ALTER INDEX {quoted(name)} ATTACH PARTITION {quoted(renamed)}",
            ]
        )


def partitions_ensure(
    *,
    now: datetime | None = None,
    ahead: int | None = None,
    say: Say = _quiet,
    past: bool = False,
) -> PartitionStatus:
    """Create the partitions of every month from the first boundary to ``ahead`` months
    after now (``RUNS_PARTITIONS_AHEAD``), the runs' first, for each table; existing ones
    are kept. Each is created apart and attached (no lock on the parent that blocks
    inserts; a child table's default partition is locked for an instant)."""
    _require_postgres()
    if not is_partitioned():
        raise PartitionError("the decision log is not partitioned (manage.py partition_runs)")
    if not all(is_partitioned(table) for table, _column in TABLES):
        raise PartitionError(
            "the switch to partitioned storage stopped half way: run manage.py partition_runs "
            "again to finish it"
        )
    now = now or timezone.now()
    ahead = ahead if ahead is not None else settings.RUNS_PARTITIONS_AHEAD
    for month in months_to_create(_boundary(now), now, ahead=ahead, past=past):
        for table, _column in TABLES:
            if _partition_create(table, MonthPartition(month)):
                say(f"created {table}_{month_name(month)}")
    return partition_status()


def _partition_create(table: str, month: MonthPartition) -> bool:
    name = f"{table}_{month.name}"
    attached = sql_rows(
        "SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(%s)"
        " AND inhparent = to_regclass(%s)",
        [name, table],
    )
    if attached:
        return False
    if not sql_rows("SELECT to_regclass(%s) IS NOT NULL", [name])[0][0]:
        template = _newest_partition(table)
        local = sql_rows(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid ="
            " to_regclass(%s) AND contype IN ('p', 'u') ORDER BY contype, conname",
            [template],
        )
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE {quoted(name)} (LIKE {quoted(table)} INCLUDING DEFAULTS"
                " INCLUDING CONSTRAINTS INCLUDING GENERATED)"
            )
            for index, (definition,) in enumerate(local):
                cursor.execute(
                    f"ALTER TABLE {quoted(name)} ADD CONSTRAINT {quoted(f'{name}_k{index}')} {definition}"
                )
    ddl_under_short_locks(
        [
            f"ALTER TABLE {quoted(table)} ATTACH PARTITION {quoted(name)} FOR VALUES FROM"
            f" ({_timestamp(month.start)}) TO ({_timestamp(month.end)})"
        ]
    )
    return True


def _newest_partition(table: str) -> str:
    """The partition whose primary key and unique constraints a new one copies."""
    names = [name for name, _bound in _partitions(table)]
    months = sorted(_months(table, names), key=lambda m: m.start)
    return f"{table}_{months[-1].name}" if months else f"{table}_legacy"


def month_runs(month: MonthPartition) -> int:
    return sql_rows(f"SELECT count(*) FROM {quoted(f'{RUNS_TABLE}_{month.name}')}")[0][0]


def month_holds(month: MonthPartition, outcomes: Sequence[str]) -> bool:
    """Whether the month holds a run of one of these outcomes (kept forever)."""
    if not outcomes:
        return False
    return bool(
        sql_rows(
            f"SELECT EXISTS (SELECT 1 FROM {quoted(f'{RUNS_TABLE}_{month.name}')}"
            " WHERE outcome = ANY(%s))",
            [list(outcomes)],
        )[0][0]
    )


def month_run_ids(month: MonthPartition, batch_size: int) -> Iterator[list[int]]:
    """The ids of a month's runs, oldest first, a batch at a time (for the export)."""
    table = quoted(f"{RUNS_TABLE}_{month.name}")
    after = (datetime.min.replace(tzinfo=UTC), 0)
    while True:
        rows = sql_rows(
            f"SELECT id, created_at FROM {table} WHERE (created_at, id) > (%s, %s)"
            " ORDER BY created_at, id LIMIT %s",
            [after[0], after[1], batch_size],
        )
        if not rows:
            return
        after = (rows[-1][1], rows[-1][0])
        yield [run_id for run_id, _created_at in rows]
