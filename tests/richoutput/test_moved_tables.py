"""The models that moved out of the ``controlui`` app keep every row, forward and back.

A database created by the 2026-11 release has the tables ``controlui_apitoken``,
``controlui_assistantmessage``, ``controlui_canvasblock`` and ``controlui_canvasdocument``,
recorded as migrations ``controlui.0001``–``0003``. Migrating it adopts (renames) those
tables; migrating the new apps back to zero gives the old release its tables again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from common.migrations import MovedModelError

pytestmark = pytest.mark.django_db(transaction=True)

OLD_TABLES = {
    "controlui_apitoken",
    "controlui_assistantmessage",
    "controlui_canvasblock",
    "controlui_canvasdocument",
}
NEW_TABLES = {
    "accounts_apitoken",
    "richoutput_assistantmessage",
    "richoutput_canvasblock",
    "richoutput_canvasdocument",
}
OLD_MIGRATIONS = (
    "0001_initial",
    "0002_canvas_messages_documents",
    "0003_h17c_canvas_document_owner",
)


def latest(app: str) -> tuple[str, str]:
    """The app's newest migration: the schema its models describe."""
    return MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes(app)[0]


def migrate(*targets: tuple[str, str | None]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(list(targets))


def tables() -> set[str]:
    return set(connection.introspection.table_names())


def record_old_release(names: tuple[str, ...] = OLD_MIGRATIONS) -> None:
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(
                "INSERT INTO django_migrations (app, name, applied) VALUES (%s, %s, %s)",
                ["controlui", name, "2026-11-24 09:28:00+00:00"],
            )


@pytest.fixture
def old_release_database(django_user_model) -> Iterator[int]:
    """This database as the 2026-11 release left it: the old tables holding a token, a
    message with two canvas blocks and an owned document; returns the owner's id."""
    owner = django_user_model.objects.create_user(username="ada", password="ada-pass-123")
    migrate(("accounts", None), ("richoutput", None))
    assert tables() >= OLD_TABLES and not (NEW_TABLES & tables())
    record_old_release()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO controlui_apitoken (name, digest, hint, created_at, user_id)"
            " VALUES ('ci', %s, 'abcd1234', '2026-11-23 10:00:00+00:00', %s)",
            ["d" * 64, owner.pk],
        )
        cursor.execute(
            "INSERT INTO controlui_assistantmessage (session_key, current_message_id,"
            " created_at, raw_text, text, reply_to_id, reply_to_current, audio_as_voice,"
            " media_urls) VALUES ('agent:main:main', '', '2026-11-23 10:00:00+00:00',"
            " 'hello [embed url=\"/x\"]', 'hello', '', %s, %s, '[]')",
            [False, False],
        )
        cursor.execute("SELECT id FROM controlui_assistantmessage")
        (message_id,) = cursor.fetchone()
        for position in (0, 1):
            cursor.execute(
                "INSERT INTO controlui_canvasblock (message_id, position, block)"
                " VALUES (%s, %s, %s)",
                [message_id, position, json.dumps({"type": "canvas", "position": position})],
            )
        cursor.execute(
            "INSERT INTO controlui_canvasdocument (view_id, title, html, created_at,"
            " updated_at, owner_id) VALUES ('cv_old', 'Old', '<h1>kept</h1>',"
            " '2026-11-23 10:00:00+00:00', '2026-11-23 10:00:00+00:00', %s)",
            [owner.pk],
        )
    ContentType.objects.filter(app_label__in=("accounts", "richoutput")).update(
        app_label="controlui"
    )
    yield owner.pk
    # Back to this suite's schema, whatever the test left: the new tables, no old records.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = 'controlui'")
    record_old_release()
    migrate(latest("accounts"), latest("richoutput"))
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = 'controlui'")


def test_migrating_adopts_the_old_tables_with_every_row(old_release_database: int) -> None:
    from accounts.models import ApiToken
    from richoutput.models import AssistantMessage, CanvasDocument

    migrate(latest("accounts"), latest("richoutput"))

    assert tables() >= NEW_TABLES and not (OLD_TABLES & tables())
    token = ApiToken.objects.get()
    assert (token.name, token.hint, token.user_id) == ("ci", "abcd1234", old_release_database)
    message = AssistantMessage.objects.get()
    assert message.session_key == "agent:main:main"
    assert [block.block["position"] for block in message.blocks.all()] == [0, 1]
    document = CanvasDocument.objects.get()
    assert (document.view_id, document.html, document.owner_id) == (
        "cv_old",
        "<h1>kept</h1>",
        old_release_database,
    )
    # Permissions and admin log entries follow the models to their new apps.
    labels = dict(
        ContentType.objects.filter(
            model__in=("apitoken", "assistantmessage", "canvasblock", "canvasdocument")
        ).values_list("model", "app_label")
    )
    assert labels == {
        "apitoken": "accounts",
        "assistantmessage": "richoutput",
        "canvasblock": "richoutput",
        "canvasdocument": "richoutput",
    }
    # The adopted tables take new rows (ids continue after the old ones).
    AssistantMessage.objects.create(raw_text="new", text="new")
    assert AssistantMessage.objects.count() == 2


def test_migrating_back_gives_the_old_release_its_tables_and_rows(
    old_release_database: int,
) -> None:
    migrate(("accounts", "0001_initial"), ("richoutput", "0001_initial"))
    migrate(("accounts", None), ("richoutput", None))

    assert tables() >= OLD_TABLES and not (NEW_TABLES & tables())
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM controlui_canvasblock")
        assert cursor.fetchone() == (2,)
        cursor.execute("SELECT html FROM controlui_canvasdocument")
        assert cursor.fetchone() == ("<h1>kept</h1>",)
        cursor.execute("SELECT hint FROM controlui_apitoken")
        assert cursor.fetchone() == ("abcd1234",)
    assert set(
        ContentType.objects.filter(model__in=("apitoken", "canvasdocument")).values_list(
            "app_label", flat=True
        )
    ) == {"controlui"}


def test_a_table_from_before_the_last_old_migration_is_refused_with_a_reason(
    old_release_database: int,
) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'controlui' AND name = %s",
            [OLD_MIGRATIONS[-1]],
        )
    with pytest.raises(MovedModelError, match="migrate this database with the 2026-11 release"):
        migrate(("richoutput", "0001_initial"))
    assert "controlui_canvasdocument" in tables()  # nothing renamed


def test_a_fresh_database_gets_the_new_tables() -> None:
    assert tables() >= NEW_TABLES and not (OLD_TABLES & tables())
