"""Config versions: one per accepted change and source, none on rejection, conflicts on a
stale base (API and admin), byte-identical rollback, history/version/restore pages."""

from __future__ import annotations

import importlib
import json
import os
import threading
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from enrichment.config.changes import config_replace
from enrichment.config.store import config_document
from enrichment.models import ConfigVersion, Run, ScopeRule
from tests.enrichment.test_admin import add_inline_row, change_url, form_values

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def version_one(db) -> None:
    """Start from what the data migration leaves: the stored config as version 1.

    Transactional tests elsewhere in the session flush the tables the migration filled, so
    the migration's function is run here again over the current config.
    """
    from django.apps import apps

    from enrichment.config.store import active_config

    migration = importlib.import_module("enrichment.migrations.0006_config_versions")
    active_config()
    ConfigVersion.objects.all().delete()
    migration.current_config_is_version_one(apps, None)


def rules_config(*rules: dict[str, Any], **links: Any) -> dict[str, Any]:
    return {
        "tools": {
            "links": {
                "scope": {"default": "allow", "rules": list(rules)},
                "models": [{"type": "cli", "command": "sum", "args": ["--url", "{{LinkUrl}}"]}],
                **links,
            }
        }
    }


DENY_SLACK = {"action": "deny", "match": {"channel": "slack"}}
DENY_GROUPS = {"action": "deny", "match": {"chatType": "group"}}


def put(client: Any, document: dict[str, Any], **headers: str) -> Any:
    return client.put(
        "/api/config", json.dumps(document), content_type="application/json", headers=headers
    )


def versions() -> list[tuple[int, str]]:
    return list(ConfigVersion.objects.order_by("number").values_list("number", "source"))


def test_the_migration_made_the_stored_config_version_one():
    (version,) = ConfigVersion.objects.all()
    assert (version.number, version.source) == (1, "migration")
    assert json.loads(version.document) == config_document()


def test_put_creates_exactly_one_version_with_author_and_note(staff_client):
    response = staff_client.put(
        "/api/config?note=deny+slack",
        json.dumps(rules_config(DENY_SLACK)),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response["ETag"] == '"2"'
    assert versions() == [(1, "migration"), (2, "api")]
    version = ConfigVersion.objects.get(number=2)
    assert (version.author, version.note) == ("operator", "deny slack")
    assert json.loads(version.document) == response.json() == config_document()


@pytest.mark.parametrize(
    "document",
    [
        {
            "tools": {
                "links": {"scope": {"rules": [{"action": "deny", "match": {"chatType": "room"}}]}}
            }
        },
        {"tools": {"links": {"maxLinks": "three"}}},
        {"tools": {"unknown": True}},
    ],
    ids=["bad-chat-type", "bad-number", "unknown-key"],
)
def test_a_rejected_put_creates_no_version_and_changes_nothing(staff_client, document):
    before = config_document()
    response = put(staff_client, document)
    assert response.status_code == 422
    assert versions() == [(1, "migration")]
    assert config_document() == before


def test_a_non_staff_put_creates_no_version(user_client):
    assert put(user_client, rules_config(DENY_SLACK)).status_code == 403
    assert versions() == [(1, "migration")]


def test_saving_the_same_document_again_creates_no_version(staff_client):
    put(staff_client, rules_config(DENY_SLACK))
    assert put(staff_client, rules_config(DENY_SLACK)).status_code == 200
    assert versions() == [(1, "migration"), (2, "api")]


def test_a_put_based_on_an_old_version_is_a_conflict_naming_that_version(staff_client):
    assert put(staff_client, rules_config(DENY_SLACK), **{"If-Match": '"1"'}).status_code == 200
    response = put(staff_client, rules_config(DENY_GROUPS), **{"If-Match": '"1"'})
    assert response.status_code == 409
    assert "based on version 1" in response.json()["detail"]
    assert "now version 2" in response.json()["detail"]
    assert versions() == [(1, "migration"), (2, "api")]
    assert config_document()["tools"]["links"]["scope"]["rules"] == [DENY_SLACK]
    # The query parameter works the same way.
    stale = staff_client.put(
        "/api/config?baseVersion=1", json.dumps(rules_config()), content_type="application/json"
    )
    assert stale.status_code == 409


@pytest.mark.parametrize(
    "value", ['"abc"', "-1", '"0"', "1.5"], ids=["text", "negative", "zero", "float"]
)
def test_a_malformed_base_version_is_a_422(staff_client, value):
    response = put(staff_client, rules_config(), **{"If-Match": value})
    assert response.status_code == 422
    assert "base version" in response.json()["detail"]
    assert versions() == [(1, "migration")]


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="row locks need PostgreSQL (SQLite serialises the whole database)",
)
@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_on_the_same_base_cannot_both_win():
    from django.db import connection

    base = ConfigVersion.objects.order_by("-number").first().number
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def save(rule: dict[str, Any]) -> None:
        from common.errors import DomainError

        barrier.wait()
        try:
            config_replace(document=rules_config(rule), source="api", base_version=base)
            outcomes.append("saved")
        except DomainError as exc:
            outcomes.append(f"{exc.status}: {exc.detail}")
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(rule,)) for rule in (DENY_SLACK, DENY_GROUPS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcome[:5] for outcome in outcomes) == ["409: ", "saved"]
    assert any(f"based on version {base}" in outcome for outcome in outcomes)
    assert ConfigVersion.objects.filter(number__gt=base).count() == 1


def test_import_command_creates_exactly_one_version(tmp_path: Path):
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(rules_config(DENY_SLACK)))
    call_command("import_openclaw_config", str(path), stdout=StringIO())
    assert versions() == [(1, "migration"), (2, "import")]
    version = ConfigVersion.objects.get(number=2)
    assert version.author == "import_openclaw_config"
    assert str(path) in version.note


def test_a_rejected_import_creates_no_version(tmp_path: Path):
    from django.core.management.base import CommandError

    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps({"tools": {"links": {"maxLinks": -1}}}))
    with pytest.raises(CommandError):
        call_command("import_openclaw_config", str(path), stdout=StringIO())
    assert versions() == [(1, "migration")]


def admin_values(staff_client) -> dict[str, Any]:
    response = staff_client.get(change_url())
    assert response.status_code == 200
    return form_values(response.content.decode())


def test_an_admin_save_creates_exactly_one_version(staff_client):
    values = admin_values(staff_client)
    assert values["base_version"] == "1"
    add_inline_row(values, "scope_rules", {"position": "0", "action": "deny", "channel": "slack"})
    values["change_note"] = "no links from slack"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302
    assert versions() == [(1, "migration"), (2, "admin")]
    version = ConfigVersion.objects.get(number=2)
    assert (version.author, version.note) == ("operator", "no links from slack")
    assert json.loads(version.document)["tools"]["links"]["scope"]["rules"] == [DENY_SLACK]


def test_an_admin_save_that_changes_nothing_creates_no_version(staff_client):
    assert staff_client.post(change_url(), admin_values(staff_client)).status_code == 302
    assert versions() == [(1, "migration")]


def test_an_admin_save_on_a_stale_form_is_refused_naming_its_base(staff_client):
    values = admin_values(staff_client)  # opened at version 1
    put(staff_client, rules_config(DENY_GROUPS))  # someone else saves version 2
    add_inline_row(values, "scope_rules", {"position": "0", "action": "deny", "channel": "slack"})
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    errors = " ".join(response.context["adminform"].form.non_field_errors())
    assert "based on version 1" in errors and "now version 2" in errors
    assert versions() == [(1, "migration"), (2, "api")]
    assert list(ScopeRule.objects.values_list("chat_type", flat=True)) == ["group"]


def test_restore_gives_back_the_byte_identical_document(staff_client):
    put(staff_client, rules_config(DENY_SLACK, DENY_GROUPS, maxLinks=2))
    v2 = ConfigVersion.objects.get(number=2).document
    put(staff_client, rules_config(DENY_GROUPS))
    response = staff_client.post(
        "/api/config/versions/2/restore", {"note": "back"}, content_type="application/json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["version"]["number"] == 4
    assert body["version"]["restoredFrom"] == 2
    restored = ConfigVersion.objects.get(number=4)
    assert (restored.source, restored.note) == ("restore", "back")
    assert restored.document == v2
    assert json.dumps(staff_client.get("/api/config").json(), ensure_ascii=False) == v2


def test_restore_rules(staff_client):
    put(staff_client, rules_config(DENY_SLACK))
    missing = staff_client.post("/api/config/versions/9/restore", content_type="application/json")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "No config version 9."
    stale = staff_client.post(
        "/api/config/versions/1/restore", {"baseVersion": 1}, content_type="application/json"
    )
    assert stale.status_code == 409
    assert "based on version 1" in stale.json()["detail"]
    junk = staff_client.post(
        "/api/config/versions/1/restore", {"bogus": 1}, content_type="application/json"
    )
    assert junk.status_code == 422
    assert versions() == [(1, "migration"), (2, "api")]


def test_restore_needs_staff(client, django_user_model):
    user = django_user_model.objects.create_user(username="reader", password="x-pass-123456")
    client.force_login(user)
    assert client.post("/api/config/versions/1/restore").status_code == 403
    assert client.get("/api/config/versions/1").status_code == 200


def test_versions_are_listed_newest_first_with_keyset_paging(staff_client):
    for channel in ("a", "b", "c", "d"):
        put(staff_client, rules_config({"action": "deny", "match": {"channel": channel}}))
    first = staff_client.get("/api/config/versions?limit=2").json()
    assert [item["number"] for item in first["items"]] == [5, 4]
    assert first["items"][0]["summary"] == "links.scope.rules[0].match.channel changed"
    second = staff_client.get(f"/api/config/versions?limit=2&cursor={first['nextCursor']}").json()
    assert [item["number"] for item in second["items"]] == [3, 2]
    third = staff_client.get(f"/api/config/versions?limit=2&cursor={second['nextCursor']}").json()
    assert [item["number"] for item in third["items"]] == [1]
    assert third["nextCursor"] is None
    assert staff_client.get("/api/config/versions?cursor=nonsense").status_code == 422
    assert staff_client.get("/api/config/versions?limit=0").status_code == 422


def test_version_detail_and_diff_api(staff_client):
    put(staff_client, rules_config(DENY_SLACK))
    put(staff_client, rules_config(DENY_GROUPS, DENY_SLACK))
    detail = staff_client.get("/api/config/versions/3").json()
    assert detail["summary"] == "links.scope: +1 rule"
    assert detail["document"]["tools"]["links"]["scope"]["rules"] == [DENY_GROUPS, DENY_SLACK]
    diff = staff_client.get("/api/config/versions/2/diff/3").json()
    assert diff["from"] == 2 and diff["to"] == 3
    assert diff["changes"] == [
        {
            "path": "tools.links.scope.rules[0]",
            "kind": "added",
            "new": DENY_GROUPS,
            "label": "global rule 1",  # people read rule numbers from 1
        }
    ]
    assert staff_client.get("/api/config/versions/2/diff/77").status_code == 404


def test_a_run_records_its_version_and_its_page_says_how_many_changes_since(
    staff_client, monkeypatch
):
    from asgiref.sync import async_to_sync

    from enrichment.services import runs as services

    put(staff_client, rules_config(DENY_SLACK))
    result = async_to_sync(services.enrichment_run)(
        request=services.EnrichRequest(body="no links", channel="slack")
    )
    run = Run.objects.get(pk=result["runId"])
    assert run.config_version == 2
    put(staff_client, rules_config(DENY_GROUPS))
    put(staff_client, rules_config())
    page = staff_client.get(reverse("decision-detail", args=[run.pk])).content.decode()
    assert "ran under" in page and ">v2</a>" in page
    assert "2 changes since" in page
    assert reverse("config-version", args=[4]) + "?against=2" in page


def test_history_version_and_restore_pages(staff_client):
    put(staff_client, rules_config(DENY_SLACK))
    put(staff_client, rules_config(DENY_GROUPS))
    history = staff_client.get(reverse("config-history")).content.decode()
    assert ">v3</a>" in history
    assert "links.scope.rules[0].match.channel removed" in history
    page = staff_client.get(reverse("config-version", args=[3]) + "?against=1").content.decode()
    assert "tools.links.scope" in page
    assert "Restore this version" not in page  # v3 is current
    confirm = staff_client.get(reverse("config-restore", args=[2])).content.decode()
    assert "tools.links.scope.rules[0].match" in confirm
    assert "Restore v2" in confirm
    response = staff_client.post(reverse("config-restore", args=[2]), {"base_version": "3"})
    assert response.status_code == 302
    assert response["Location"] == reverse("config-version", args=[4])
    assert ConfigVersion.objects.get(number=4).restored_from == 2
    stale = staff_client.post(reverse("config-restore", args=[1]), {"base_version": "3"})
    assert stale.status_code == 302 and ConfigVersion.objects.count() == 4


def test_restore_pages_need_staff(user_client):
    response = user_client.get(reverse("config-restore", args=[1]))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert user_client.get(reverse("config-version", args=[1])).status_code == 200
    assert user_client.get(reverse("config-version", args=[99])).status_code == 404


def test_admin_preview_evaluates_the_unsaved_form_and_saves_nothing(staff_client):
    from enrichment.models import Run as RunModel

    RunModel.objects.create(outcome="no-links", channel="slack", original_body="hello")
    values = admin_values(staff_client)
    add_inline_row(values, "scope_rules", {"position": "0", "action": "deny", "channel": "slack"})
    values["_preview_runs"] = "100"
    response = staff_client.post(
        reverse("config-preview", args=[values_config_id(staff_client)]), values
    )
    assert response.status_code == 200
    frames = [json.loads(line) for line in streamed(response).splitlines()]
    assert frames[0]["type"] == "progress"
    result = frames[-1]
    assert result["type"] == "result"
    assert result["evaluated"] == 1
    assert result["counts"][0]["text"] == "1 run would become scope-deny"
    assert versions() == [(1, "migration")]
    assert not ScopeRule.objects.exists()


def test_admin_preview_of_an_invalid_form_is_a_422(staff_client):
    values = admin_values(staff_client)
    add_inline_row(values, "scope_rules", {"position": "0", "action": "deny", "chat_type": "room"})
    response = staff_client.post(
        reverse("config-preview", args=[values_config_id(staff_client)]), values
    )
    assert response.status_code == 422
    assert not ScopeRule.objects.exists()


def values_config_id(staff_client) -> int:
    from enrichment.config.store import active_config

    return active_config().pk


def streamed(response: Any) -> bytes:
    from asgiref.sync import async_to_sync

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return async_to_sync(collect)()
