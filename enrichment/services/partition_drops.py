"""Dropping months of the partitioned decision log whole, their files removed on several
connections at once.

A month's three partitions (runs, URL decisions, attempts) hold ~1.75 GB in ~30 relations
for a million runs. PostgreSQL removes a dropped relation's files when the dropping
transaction commits, after it has released its locks, one file after another; where the
file system discards freed blocks at once (``-o discard``: a virtual disk) that took 2.25 s
of a 2.0–2.7 s pass while other sessions were writing (bench/README.md). So a pass, for each month due:

1. deletes the month's child rows stored in the default partition (no row outlives its run);
2. detaches the month's three partitions and renames them ``<partition>_expired``, in one
   short transaction under the short lock timeout (``partitions.ddl_under_short_locks``): from then on
   no query of the log sees the month, and no insert can reach its tables
   (``month_detach``: 1 and 2);

then drops every such table on several connections at once, in the transactions
``drop_plan`` lays out (a table's indexes in groups apart, then the table itself), while
the pass removes what else is due row by row, and ends once every one has committed: the
months' files are gone when the pass ends (``dropping``).

A pass that stops before that ends (a crash, a step that failed) leaves ``*_expired`` tables
that no query reads; ``expired_tables_drop`` (the next pass, first thing) drops them.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from django.db import connection, transaction

from enrichment.pipeline.retention.drop_plan import DetachedTable, DropStep, drop_plan
from enrichment.pipeline.retention.partitions import MonthPartition
from enrichment.services.partitions import (
    RUNS_TABLE,
    TABLES,
    PartitionError,
    ddl_under_short_locks,
    quoted,
    sql_rows,
)

EXPIRED = "_expired"
# Connections dropping a month's tables at once (the plan has about six steps; a process's
# pool holds DATABASE_POOL_MAX_SIZE, 10 by default).
DROP_CONNECTIONS = 6
# A table smaller than this with its indexes is dropped in one transaction (drop_plan).
SPLIT_FROM = 64 * 2**20
# The expired tables are out of the log: only our own steps wait for their locks (a table's
# index groups one after another), each for a commit.
EXPIRED_LOCK_TIMEOUT = "10s"


def month_detach(month: MonthPartition) -> list[str]:
    """Take a month's partitions, its runs' with their URL decisions and attempts, out of
    the log (1 and 2 of the module's docstring; each can be run again after a failure);
    returns the tables ``dropping`` is to drop."""
    if connection.in_atomic_block:
        # the steps commit apart, and the tables are dropped on other connections
        raise PartitionError("a month is dropped outside a transaction")
    _default_rows_delete(month)
    _detach(month)
    return [f"{table}_{month.name}{EXPIRED}" for table, _c in TABLES]


def expired_tables_drop(*, connections: int = DROP_CONNECTIONS) -> list[str]:
    """Drop the tables of months detached by a pass that did not finish dropping them;
    returns their names."""
    pattern = "^(" + "|".join(re.escape(table) for table, _c in TABLES) + r")_p\d{4}_\d{2}"
    names = [
        name
        for (name,) in sql_rows(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND NOT relispartition"
            " AND relnamespace = current_schema()::regnamespace AND relname ~ %s",
            [pattern + re.escape(EXPIRED) + "$"],
        )
    ]
    tables_drop(names, connections=connections)
    return names


def _default_rows_delete(month: MonthPartition) -> None:
    """A child row stored without the run's creation time (written by a release before the
    column, or by a raw insert) lives in the default partition: those of the month's runs
    are deleted before the month goes."""
    runs = quoted(f"{RUNS_TABLE}_{month.name}")
    if not sql_rows("SELECT to_regclass(%s) IS NOT NULL", [f"{RUNS_TABLE}_{month.name}"])[0][0]:
        return  # detached already (a pass that stopped half way)
    decisions, attempts = quoted(f"{TABLES[1][0]}_legacy"), quoted(f"{TABLES[2][0]}_legacy")
    first, last = sql_rows(f"SELECT min(id), max(id) FROM {runs}")[0]
    if first is None:
        return
    # the id range first: an index range on the default partition, not a scan of it
    of_month = f"run_id BETWEEN {int(first)} AND {int(last)} AND run_id IN (SELECT id FROM {runs})"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {attempts} WHERE url_decision_id IN"
            f" (SELECT id FROM {decisions} WHERE {of_month})"
        )
        cursor.execute(f"DELETE FROM {decisions} WHERE {of_month}")


def _detach(month: MonthPartition) -> None:
    """The month's partitions out of the log and renamed, in one transaction: the parents'
    exclusive locks are held for the catalog changes only (no file is removed here)."""

    def statements() -> list[str]:
        found = dict(
            sql_rows(
                "SELECT c.relname, c.relispartition FROM pg_class c WHERE c.relname = ANY(%s)"
                " AND c.relnamespace = current_schema()::regnamespace",
                [[f"{table}_{month.name}" for table, _c in TABLES]],
            )
        )
        detach = []
        # children first, the order the month's DROP TABLEs always took (each try is
        # bounded by the lock timeout, whatever order a writer takes the parents in)
        for table, _column in reversed(TABLES):
            name = f"{table}_{month.name}"
            if found.get(name):
                detach.append(f"ALTER TABLE {quoted(table)} DETACH PARTITION {quoted(name)}")
            if name in found:
                detach.append(f"ALTER TABLE {quoted(name)} RENAME TO {quoted(name + EXPIRED)}")
        return detach

    ddl_under_short_locks(statements)


def tables_drop(names: Sequence[str], *, connections: int = DROP_CONNECTIONS) -> None:
    """Drop these tables (out of the log: ``month_detach``) on up to ``connections``
    connections at once; returns once all are gone."""
    with dropping(names, connections=connections):
        pass


@contextmanager
def dropping(names: Sequence[str], *, connections: int = DROP_CONNECTIONS) -> Iterator[None]:
    """Drop these tables on other connections while the block runs (a pass's row-by-row
    removal); the block's end waits until all are gone, and raises when a step failed."""
    steps = drop_plan(_detached_tables(names), split_from=SPLIT_FROM) if names else []
    # A table's own step waits until each of its index groups has dropped its indexes (not
    # committed: the table's lock then passes to it at that commit), so that those indexes
    # are not left to the table's one transaction. Steps are taken in order: a table's
    # groups are all under way before its own step is taken, whatever ``connections`` is.
    ready = {step: threading.Event() for step in steps if step.indexes}
    todo: queue.SimpleQueue[DropStep] = queue.SimpleQueue()
    for step in steps:
        todo.put(step)
    failures: list[BaseException] = []

    def work() -> None:
        try:
            while True:
                try:
                    step = todo.get_nowait()
                except queue.Empty:
                    return
                if not step.indexes:
                    for group, done in ready.items():
                        if group.table == step.table:
                            done.wait()
                try:
                    _step_run(step, ready.get(step))
                except Exception as error:  # noqa: BLE001 - reported after the others
                    failures.append(error)
        finally:
            connection.close()  # this thread's own connection (back to the pool)

    threads = [threading.Thread(target=work) for _ in range(min(connections, len(steps)))]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for thread in threads:
            thread.join()
    if failures:
        raise PartitionError(
            f"{len(failures)} of {len(steps)} steps dropping {', '.join(names)} failed (the next"
            f" pass drops what is left; no query reads these tables): {failures[0]}"
        ) from failures[0]


def _step_run(step: DropStep, done: threading.Event | None) -> None:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{EXPIRED_LOCK_TIMEOUT}'")
            if step.indexes:
                for index in step.indexes:
                    cursor.execute(f"DROP INDEX IF EXISTS {quoted(index)}")
            else:
                cursor.execute(f"DROP TABLE IF EXISTS {quoted(step.table)}")
            if done is not None:
                done.set()  # before the commit: the table's own step queues for its lock
    finally:
        if done is not None:
            done.set()  # also when this step failed: the table's drop takes its indexes


def _detached_tables(names: Sequence[str]) -> list[DetachedTable]:
    """The tables with their sizes: what goes only with each table (heap, TOAST, the
    indexes its constraints own) and each of its other indexes."""
    tables = sql_rows(
        "SELECT c.relname, pg_table_size(c.oid) + coalesce((SELECT sum(pg_relation_size("
        "i.indexrelid)) FROM pg_index i JOIN pg_constraint k ON k.conindid = i.indexrelid"
        " WHERE i.indrelid = c.oid), 0) FROM pg_class c WHERE c.relname = ANY(%s)"
        " AND c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace",
        [list(names)],
    )
    indexes = sql_rows(
        "SELECT t.relname, x.relname, pg_relation_size(x.oid) FROM pg_index i"
        " JOIN pg_class t ON t.oid = i.indrelid JOIN pg_class x ON x.oid = i.indexrelid"
        " WHERE t.relname = ANY(%s) AND t.relnamespace = current_schema()::regnamespace"
        " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
        [list(names)],
    )
    return [
        DetachedTable(
            name,
            int(size),
            tuple((index, int(bytes_)) for table, index, bytes_ in indexes if table == name),
        )
        for name, size in tables
    ]
