"""Admin ordering by drag and drop (django-admin-sortable2): the order a save posts is the
order stored and exported (first matching scope rule wins, CLI entries are tried in order),
each reorder is one config version, and the position numbers are no longer typed."""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

import pytest
from django.urls import reverse

from enrichment.config.changes import config_replace
from enrichment.config.store import active_config, config_document
from enrichment.models import Agent, ConfigVersion, ScopeRule
from tests.enrichment.test_admin import add_inline_row, change_url, form_errors, form_values

pytestmark = pytest.mark.django_db

RULES = [
    {"action": "allow", "match": {"channel": "a"}},
    {"action": "deny", "match": {"channel": "b"}},
    {"action": "allow", "match": {"channel": "c"}},
]
MODELS = [
    {"type": "cli", "command": "first", "args": ["{{LinkUrl}}"]},
    {"type": "cli", "command": "second", "args": ["{{LinkUrl}}"]},
    {"type": "cli", "command": "third", "args": ["{{LinkUrl}}"]},
]


@pytest.fixture(autouse=True)
def stored(db) -> None:
    """A config with three rules, three CLI entries and two agents, as version 1."""
    migration = importlib.import_module("enrichment.migrations.0006_config_versions")
    from django.apps import apps

    document = config_document()
    document["tools"]["links"]["scope"] = {"default": "deny", "rules": RULES}
    document["tools"]["links"]["models"] = MODELS
    document["agents"] = {"list": [{"id": "main"}, {"id": "support"}]}
    config_replace(document=document)
    ConfigVersion.objects.all().delete()
    migration.current_config_is_version_one(apps, None)


def opened(client: Any) -> dict[str, Any]:
    response = client.get(change_url())
    assert response.status_code == 200
    return form_values(response.content.decode())


def dragged(values: dict[str, Any], prefix: str, key: str, order: list[str]) -> None:
    """What the browser posts after a drag: the hidden positions 1, 2, 3 … in the new order."""
    rows = {values[f"{prefix}-{i}-{key}"]: i for i in range(int(values[f"{prefix}-TOTAL_FORMS"]))}
    for place, name in enumerate(order, start=1):
        values[f"{prefix}-{rows[name]}-position"] = str(place)


def versions() -> list[tuple[int, str]]:
    return list(ConfigVersion.objects.order_by("number").values_list("number", "source"))


def test_positions_are_hidden_drag_inputs_not_numbers_to_type(staff_client) -> None:
    html = staff_client.get(change_url()).content.decode()
    for prefix in ("scope_rules", "link_models", "agents"):
        inputs = re.findall(rf'<input[^>]*name="{prefix}-\d+-position"[^>]*>', html)
        assert len(inputs) >= 2, prefix
        assert all('type="hidden"' in tag and "_reorder_" in tag for tag in inputs), inputs
        assert f'id="{prefix}-group"' in html
    assert html.count('<fieldset class="module sortable"') == 3
    assert "adminsortable2/js/adminsortable2" in html
    assert "js/admin_sortable_keys.js" in html  # the keyboard buttons
    assert 'aria-label="Move to first position"' in html


def test_a_dragged_scope_rule_order_is_stored_and_is_one_version(staff_client) -> None:
    values = opened(staff_client)
    dragged(values, "scope_rules", "channel", ["c", "a", "b"])
    values["change_note"] = "c first"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)

    rules = ScopeRule.objects.filter(agent__isnull=True).order_by("position")
    assert [(rule.position, rule.channel) for rule in rules] == [(0, "c"), (1, "a"), (2, "b")]
    stored = config_document()["tools"]["links"]["scope"]["rules"]
    assert [rule["match"]["channel"] for rule in stored] == ["c", "a", "b"]
    assert versions() == [(1, "migration"), (2, "admin")]
    version = ConfigVersion.objects.get(number=2)
    assert version.note == "c first"
    rules_in_version = json.loads(version.document)["tools"]["links"]["scope"]["rules"]
    assert [rule["match"]["channel"] for rule in rules_in_version] == ["c", "a", "b"]


def explained_scope(client: Any) -> str:
    params = {"message": "see https://example.com/", "channel": "slack", "chatType": "group"}
    html = client.get(reverse("explain"), params).content.decode()
    found = re.search(r'<dd id="explain-scope">(.*?)</dd>', html, re.S)
    assert found, html[:2000]
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_the_first_matching_rule_wins_in_the_new_order(staff_client) -> None:
    """Explain (the scope core over the stored config) follows the dragged order."""
    document = config_document()
    document["tools"]["links"]["scope"] = {
        "default": "allow",
        "rules": [
            {"action": "allow", "match": {"channel": "slack"}},
            {"action": "deny", "match": {"chatType": "group"}},
        ],
    }
    config_replace(document=document)
    assert explained_scope(staff_client) == "allow by global rule 1"
    values = opened(staff_client)
    rows = {values[f"scope_rules-{i}-action"]: i for i in range(2)}
    values[f"scope_rules-{rows['deny']}-position"] = "1"
    values[f"scope_rules-{rows['allow']}-position"] = "2"
    assert staff_client.post(change_url(), values).status_code == 302
    stored = config_document()["tools"]["links"]["scope"]["rules"]
    assert [rule["action"] for rule in stored] == ["deny", "allow"]
    assert explained_scope(staff_client) == "deny by global rule 1"


def test_a_dragged_cli_entry_order_is_the_order_they_are_tried(staff_client) -> None:
    values = opened(staff_client)
    dragged(values, "link_models", "command", ["third", "first", "second"])
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)
    models = config_document()["tools"]["links"]["models"]
    assert [model["command"] for model in models] == ["third", "first", "second"]
    assert versions() == [(1, "migration"), (2, "admin")]


def test_agents_are_reordered_by_dragging_too(staff_client) -> None:
    values = opened(staff_client)
    dragged(values, "agents", "agent_id", ["support", "main"])
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)
    assert [agent["id"] for agent in config_document()["agents"]["list"]] == ["support", "main"]
    assert list(Agent.objects.order_by("position").values_list("position", "agent_id")) == [
        (0, "support"),
        (1, "main"),
    ]


def test_a_new_row_goes_last_and_can_be_dragged_after_its_save(staff_client) -> None:
    values = opened(staff_client)
    # A new row's hidden position keeps its initial 0: the library puts it last.
    add_inline_row(values, "scope_rules", {"position": "0", "action": "deny", "channel": "new"})
    assert staff_client.post(change_url(), values).status_code == 302
    stored = config_document()["tools"]["links"]["scope"]["rules"]
    assert [rule["match"]["channel"] for rule in stored] == ["a", "b", "c", "new"]

    values = opened(staff_client)
    dragged(values, "scope_rules", "channel", ["new", "a", "b", "c"])
    assert staff_client.post(change_url(), values).status_code == 302
    stored = config_document()["tools"]["links"]["scope"]["rules"]
    assert [rule["match"]["channel"] for rule in stored] == ["new", "a", "b", "c"]
    assert versions() == [(1, "migration"), (2, "admin"), (3, "admin")]


def test_an_untouched_order_is_no_new_version(staff_client) -> None:
    assert staff_client.post(change_url(), opened(staff_client)).status_code == 302
    assert versions() == [(1, "migration")]


@pytest.mark.parametrize("position", ["-1", "abc", "99999999999", "1\x00", "1.5"])
def test_a_tampered_position_is_refused_on_the_row_and_changes_nothing(
    staff_client, position
) -> None:
    before = config_document()
    values = opened(staff_client)
    values["scope_rules-0-position"] = position
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    html = response.content.decode()
    # Shown above the row (the position input itself is hidden), naming the field.
    assert re.search(r'class="row-form-errors".*?position:', html, re.S), html[:3000]
    assert config_document() == before
    assert versions() == [(1, "migration")]


def test_the_agent_page_shows_its_position_read_only_and_adds_new_agents_last(
    staff_client,
) -> None:
    agent = Agent.objects.get(agent_id="main")
    page = staff_client.get(reverse("admin:enrichment_agent_change", args=[agent.pk]))
    html = page.content.decode()
    assert 'name="position"' not in html
    assert "field-position" in html  # shown, read-only
    add = reverse("admin:enrichment_agent_add")
    values = form_values(staff_client.get(add).content.decode())
    values.update({"config": str(active_config().pk), "agent_id": "late"})
    response = staff_client.post(add, values)
    assert response.status_code == 302, form_errors(response)
    ids = [agent["id"] for agent in config_document()["agents"]["list"]]
    assert ids == ["main", "support", "late"]


def test_the_config_is_a_singleton_with_readable_names(staff_client) -> None:
    changelist = staff_client.get(reverse("admin:enrichment_enrichmentconfig_changelist"))
    html = changelist.content.decode()
    assert reverse("admin:enrichment_enrichmentconfig_add") not in html
    assert "enrichment configs" in html.lower()
    page = staff_client.get(change_url()).content.decode()
    assert "Save and add another" not in page and "deletelink" not in page
    assert "CLI entries (link models, tried in order)" in page
    assert "Add another Scope rule" in page and "Add another CLI entry" in page
