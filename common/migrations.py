"""Migration operations shared by the apps.

``CreateModelMovedFrom`` is how a model moves from one app to another without losing a row.
Until 2026-12 the API tokens, assistant messages, canvas blocks and canvas documents were
models of the ``controlui`` app (tables ``controlui_apitoken`` …); they now belong to the
``accounts`` and ``richoutput`` apps. Their first migration creates each model, except where
the old table is there already (a database created by an earlier release): then it renames
that table, rows, indexes and constraints included, and nothing is created. Going back
renames the table back, so the earlier release finds its data where it left it::

    database at 2026-11 (controlui_canvasdocument, 3 rows)
    migrate richoutput 0001   -> richoutput_canvasdocument, the same 3 rows
    migrate richoutput zero   -> controlui_canvasdocument, the same 3 rows
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations import AddIndex, RemoveIndex
from django.db.migrations.state import ProjectState


class MovedModelError(RuntimeError):
    """The old table exists, but not in the shape the last migration of its old app left."""


class CreateModelMovedFrom(migrations.CreateModel):
    """``CreateModel`` that adopts (renames) ``old_table`` when a database already has it.

    ``requires`` names the last migration of the old app (``(app_label, name)``): a table
    from before it would lack columns the model has, so adopting it is refused with a message
    saying which release to migrate with first.
    """

    def __init__(
        self,
        name: str,
        fields: list[tuple[str, Any]],
        *,
        old_table: str,
        requires: tuple[str, str],
        **kwargs: Any,
    ) -> None:
        self.old_table = old_table
        self.requires = tuple(requires)
        super().__init__(name, fields, **kwargs)

    def deconstruct(self) -> tuple[str, Sequence[Any], dict[str, Any]]:
        name, args, kwargs = super().deconstruct()
        kwargs["old_table"] = self.old_table
        kwargs["requires"] = self.requires
        return name, args, kwargs

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        model = to_state.apps.get_model(app_label, self.name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        tables = schema_editor.connection.introspection.table_names()
        if self.old_table in tables and model._meta.db_table not in tables:
            self._check_old_shape(schema_editor)
            schema_editor.alter_db_table(model, self.old_table, model._meta.db_table)
        else:
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        # Back to the old app's table (never a DROP): the earlier release's code, whose
        # migrations are still recorded, reads these rows again.
        model = from_state.apps.get_model(app_label, self.name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.alter_db_table(model, model._meta.db_table, self.old_table)

    def _check_old_shape(self, schema_editor: BaseDatabaseSchemaEditor) -> None:
        app, name = self.requires
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM django_migrations WHERE app = %s AND name = %s", [app, name]
            )
            (applied,) = cursor.fetchone()
        if not applied:
            raise MovedModelError(
                f"table {self.old_table} is older than migration {app}.{name}: migrate this "
                "database with the 2026-11 release first, then with this one"
            )

    def describe(self) -> str:
        return f"Create model {self.name} (or adopt table {self.old_table})"


def content_types_moved(old_label: str, new_label: str, models: list[str]) -> migrations.RunPython:
    """Point the content types (permissions, admin log entries) of moved models at their new
    app, and back when the migration is reversed."""

    def relabel(apps: Any, source: str, target: str) -> None:
        content_type = apps.get_model("contenttypes", "ContentType")
        for model in models:
            if not content_type.objects.filter(app_label=target, model=model).exists():
                content_type.objects.filter(app_label=source, model=model).update(app_label=target)

    return migrations.RunPython(
        lambda apps, _schema: relabel(apps, old_label, new_label),
        lambda apps, _schema: relabel(apps, new_label, old_label),
    )


# --- Index builds that never block writes -------------------------------------------------
#
# A plain CREATE INDEX holds a SHARE lock on the table for the whole build: at 1M runs every
# insert of a new run waits (seconds to minutes) while a deploy migrates. On PostgreSQL these
# operations build and drop with CONCURRENTLY instead (only a SHARE UPDATE EXCLUSIVE lock,
# which inserts, updates and deletes do not wait for); elsewhere (SQLite) they are the plain
# operations. Their migration state is exactly ``AddIndex``/``RemoveIndex``'s, so a migration
# rewritten with them leaves an already-migrated database's state unchanged. CONCURRENTLY
# cannot run inside a transaction: a migration using them declares ``atomic = False``.


def postgres(schema_editor: BaseDatabaseSchemaEditor) -> bool:
    return schema_editor.connection.vendor == "postgresql"


def drop_invalid_index(schema_editor: BaseDatabaseSchemaEditor, name: str) -> None:
    """A CREATE INDEX CONCURRENTLY that failed (a deploy killed mid-build, a lock timeout)
    leaves an INVALID index behind under its name; running the migration again would stop at
    "already exists". Drop it first, so a retried deploy simply builds it again."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid"
            " WHERE pg_class.relname = %s AND NOT pg_index.indisvalid",
            [name],
        )
        invalid = cursor.fetchone() is not None
    if invalid:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {schema_editor.quote_name(name)}")


def partitions_of(schema_editor: BaseDatabaseSchemaEditor, table: str) -> list[str] | None:
    """The partitions of ``table`` when it is a partitioned table, else None."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [table])
        found = cursor.fetchone()
        if found is None or found[0] != "p":
            return None
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(%s) ORDER BY c.relname",
            [table],
        )
        return [name for (name,) in cursor.fetchall()]


def partitioned_index_create(
    schema_editor: BaseDatabaseSchemaEditor, model: Any, index: Any, partitions: list[str]
) -> None:
    """An index of a partitioned table without a long lock (a partitioned table has no
    CREATE INDEX CONCURRENTLY): the parent's index alone (``ON ONLY``, catalog only), then
    each partition's built concurrently and attached; the parent's is valid once all are.
    Run again after an interruption, it finishes what is left."""
    quote = schema_editor.quote_name
    table = model._meta.db_table
    create = str(index.create_sql(model, schema_editor))
    head = f"CREATE INDEX {quote(index.name)} ON {quote(table)}"
    if not create.startswith(head):
        raise ValueError(f"unexpected index statement: {create[:120]}")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {quote(index.name)} ON ONLY {quote(table)}"
        + create[len(head) :]
    )
    for partition in partitions:
        child = f"{index.name[:50]}_{partition[len(table) + 1 :]}"[:63]
        drop_invalid_index(schema_editor, child)
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {quote(child)} ON {quote(partition)}"
            + create[len(head) :]
        )
        schema_editor.execute(f"ALTER INDEX {quote(index.name)} ATTACH PARTITION {quote(child)}")


class AddIndexWithoutLock(AddIndexConcurrently):
    """``AddIndex``; on PostgreSQL ``CREATE INDEX CONCURRENTLY`` (writes go on meanwhile),
    partition by partition on a partitioned table (``manage.py partition_runs``)."""

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if not postgres(schema_editor):
            AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)
            return
        model = to_state.apps.get_model(app_label, self.model_name)
        partitions = partitions_of(schema_editor, model._meta.db_table)
        if partitions is not None:
            partitioned_index_create(schema_editor, model, self.index, partitions)
            return
        drop_invalid_index(schema_editor, self.index.name)
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if postgres(schema_editor):
            model = from_state.apps.get_model(app_label, self.model_name)
            if partitions_of(schema_editor, model._meta.db_table) is not None:
                _partitioned_index_drop(schema_editor, self.index.name)
                return
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


def _partitioned_index_drop(schema_editor: BaseDatabaseSchemaEditor, name: str) -> None:
    """No DROP INDEX CONCURRENTLY for a partitioned index: a plain drop (catalog and files,
    its partitions' indexes with it), a brief exclusive lock."""
    schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


class RemoveIndexWithoutLock(RemoveIndexConcurrently):
    """``RemoveIndex``; on PostgreSQL ``DROP INDEX CONCURRENTLY``."""

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if postgres(schema_editor):
            model = from_state.apps.get_model(app_label, self.model_name)
            if partitions_of(schema_editor, model._meta.db_table) is not None:
                _partitioned_index_drop(schema_editor, self.name)
                return
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            RemoveIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if postgres(schema_editor):
            model = to_state.apps.get_model(app_label, self.model_name)
            partitions = partitions_of(schema_editor, model._meta.db_table)
            if partitions is not None:
                index = to_state.models[app_label, self.model_name_lower].get_index_by_name(
                    self.name
                )
                partitioned_index_create(schema_editor, model, index, partitions)
                return
            drop_invalid_index(schema_editor, self.name)
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            RemoveIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


def postgres_statements(
    forward: Sequence[str], backward: Sequence[str] = ()
) -> migrations.RunPython:
    """Raw statements run on PostgreSQL only (one by one, so that a migration declared
    ``atomic = False`` can use CREATE/DROP INDEX CONCURRENTLY), nothing elsewhere.
    An index built with CONCURRENTLY IF NOT EXISTS is first dropped when left invalid."""

    def run(statements: Sequence[str], schema_editor: BaseDatabaseSchemaEditor) -> None:
        if not postgres(schema_editor):
            return
        for statement in statements:
            name = _concurrent_index_name(statement)
            if name is not None:
                drop_invalid_index(schema_editor, name)
            schema_editor.execute(statement)

    return migrations.RunPython(
        lambda _apps, schema_editor: run(forward, schema_editor),
        lambda _apps, schema_editor: run(backward, schema_editor),
    )


def _concurrent_index_name(statement: str) -> str | None:
    prefix = "CREATE INDEX CONCURRENTLY IF NOT EXISTS "
    if not statement.startswith(prefix):
        return None
    return statement[len(prefix) :].split(" ", 1)[0]
