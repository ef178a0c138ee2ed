"""One explanation of a scope decision on every surface (issue 33, items 1 and 2).

The situation a new operator met: the global scope allows by default and its rule 1 denies
telegram groups; agent ``support`` overrides the scope with ``default: deny`` and one rule of
its own. A telegram group message for ``support`` is denied by the *agent's default*, and
every page must say so, with rule numbers read from 1.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.urls import reverse

from enrichment.config import dryrun as config_dryrun
from enrichment.config.changes import config_replace
from enrichment.config.store import config_document
from enrichment.config.versions import latest_number
from enrichment.models import Run
from enrichment.pipeline.config.diff import diff_documents
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.config.scope_source import explain_scope, rule_number, scope_source

GLOBAL_RULES = [
    {"action": "deny", "match": {"channel": "telegram", "chatType": "group"}},
    {"action": "allow", "match": {"channel": "slack"}},
]
SUPPORT_RULES = [{"action": "allow", "match": {"keyPrefix": "agent:support:vip:"}}]


def document() -> dict[str, Any]:
    return {
        "tools": {
            "links": {
                "scope": {"default": "allow", "rules": GLOBAL_RULES},
                "models": [{"type": "cli", "command": "summarize", "args": ["{{LinkUrl}}"]}],
            }
        },
        "agents": {
            "list": [
                {
                    "id": "support",
                    "tools": {"links": {"scope": {"default": "deny", "rules": SUPPORT_RULES}}},
                },
                {"id": "main", "tools": {"links": {"maxLinks": 2}}},
            ]
        },
    }


def plain_text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html.removeprefix(">"))).split())


# --- the core ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "channel", "chat_type", "key", "expected"),
    [
        ("", "telegram", "group", "", "global rule 1 (deny)"),
        ("main", "slack", "direct", "", "global rule 2 (allow)"),
        ("", "discord", "direct", "", "the global default (allow)"),
        ("support", "telegram", "group", "", "agent support's override: its default (deny)"),
        (
            "support",
            "telegram",
            "group",
            "agent:support:vip:1",
            "agent support's override: its rule 1 (allow)",
        ),
        ("unknown-agent", "telegram", "group", "", "global rule 1 (deny)"),
    ],
    ids=[
        "global-rule",
        "agent-without-scope",
        "global-default",
        "agent-default",
        "agent-rule",
        "unknown-agent",
    ],
)
def test_every_decision_names_its_source(agent, channel, chat_type, key, expected) -> None:
    config = parse_config(document())
    decided = explain_scope(config, agent, channel, chat_type, key)
    assert decided.text == expected
    # The same source is named for the stored decision (index and decision only).
    stored = scope_source(config, agent, decided.decision, decided.rule_index)
    assert stored.text == expected


def test_no_scope_at_all_says_so_and_numbers_start_at_one() -> None:
    config = parse_config({"tools": {"links": {}}})
    assert explain_scope(config, None, "x", None, None).text.startswith("no scope configured")
    assert rule_number(0) == 1
    decided = explain_scope(parse_config(document()), None, "telegram", "group", None)
    assert decided.to_dict() == {
        "decision": "deny",
        "kind": "global-rule",
        "matchedRule": 0,
        "ruleNumber": 1,
        "agentId": None,
        "text": "global rule 1 (deny)",
    }


# --- the run page --------------------------------------------------------------------------


def stored_run(**fields: Any) -> Run:
    values: dict[str, Any] = {
        "channel": "telegram",
        "chat_type": "group",
        "agent_id": "support",
        "outcome": "scope-deny",
        "matched_rule": None,
        "config_snapshot": document(),
        "duration_ms": 3,
        **fields,
    }
    return Run.objects.create(**values)


def run_scope(client: Any, run: Run) -> str:
    html = client.get(f"/decisions/{run.pk}/").content.decode()
    return plain_text(html.split('id="matched-rule"', 1)[1].split("</dd>", 1)[0])


@pytest.mark.django_db
def test_run_page_names_the_agent_override_default(user_client) -> None:
    """Run #299 of the issue: denied by agent support's default, not "the default"."""
    assert run_scope(user_client, stored_run()).startswith(
        "deny by agent support's override: its default"
    )


@pytest.mark.django_db
def test_run_page_names_a_global_rule_from_one(user_client) -> None:
    run = stored_run(agent_id="", matched_rule=0)
    text = run_scope(user_client, run)
    assert text.startswith("deny by global rule 1") and "channel=telegram" in text
    assert "chatType=group" in text and "rule #" not in text


# --- /explain/ -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_explain_page_says_what_the_run_page_says(user_client) -> None:
    config_replace(document=document())
    params = {"message": "see https://news.example/a", "channel": "telegram", "chatType": "group"}
    html = user_client.get("/explain/", {**params, "agentId": "support", "dns": "off"})
    text = html.content.decode()
    scope = plain_text(text.split('id="explain-scope"', 1)[1].split("</dd>", 1)[0])
    assert scope == "deny by agent support's override: its default"
    assert "the scope denies this message (agent support's override: its default)" in unescape(text)
    assert "Agent <code>support</code>'s override" in unescape(text)
    # The global rule list is numbered from 1 on the same page for a global decision.
    html = user_client.get("/explain/", {**params, "dns": "off"}).content.decode()
    scope = plain_text(html.split('id="explain-scope"', 1)[1].split("</dd>", 1)[0])
    assert scope == "deny by global rule 1"
    assert re.search(r'<li value="1" class="matched"[^>]*><span class="rule-number">rule 1<', html)
    assert '<li value="2"><span class="rule-number">rule 2<' in html


# --- Preview impact (dry run) --------------------------------------------------------------


@pytest.mark.django_db
def test_preview_impact_names_the_source_before_and_after() -> None:
    config_replace(document=document())
    version = latest_number()
    stored_run(config_version=version, original_body="see https://news.example/a")
    proposed = document()
    del proposed["agents"]["list"][0]["tools"]["links"]["scope"]  # support follows the global
    result = config_dryrun.config_dry_run(document=proposed, window={"lastRuns": 10})
    assert result["affectedRuns"] == 1
    affected = result["affected"][0]
    assert affected["before"]["scopeSource"] == "agent support's override: its default (deny)"
    assert affected["after"]["scopeSource"] == "global rule 1 (deny)"
    assert affected["after"]["ruleNumber"] == 1 and affected["after"]["matchedRule"] == 0


# --- the config diff -----------------------------------------------------------------------


def test_diff_labels_rules_from_one_and_keeps_json_paths() -> None:
    old, new = document(), document()
    new["tools"]["links"]["scope"]["rules"] = [GLOBAL_RULES[1], GLOBAL_RULES[0]]
    new["agents"]["list"][0]["tools"]["links"]["scope"]["rules"] = [
        {"action": "allow", "match": {"keyPrefix": "agent:support:gold:"}}
    ]
    texts = [change.text for change in diff_documents(old, new)]
    assert "global rule 1: moved from global rule 2" in texts
    assert "agent support's rule 1: changed" in texts
    paths = {change.path for change in diff_documents(old, new)}
    assert "tools.links.scope.rules[0]" in paths  # JSON paths stay 0-based


@pytest.mark.django_db
def test_version_page_shows_the_rule_labels(staff_client) -> None:
    config_replace(document=document())
    moved = document()
    moved["tools"]["links"]["scope"]["rules"] = [GLOBAL_RULES[1], GLOBAL_RULES[0]]
    config_replace(document=moved)
    html = staff_client.get(reverse("config-version", args=[latest_number()])).content.decode()
    assert '<strong class="change-label">global rule 1</strong>' in html
    assert 'moved from <strong class="change-label">global rule 2</strong>' in html


# --- the admin -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_admin_scope_rule_rows_are_numbered_from_one(staff_client) -> None:
    config_replace(document=document())
    html = staff_client.get("/admin/enrichment/enrichmentconfig/").content.decode()
    change = re.search(r'href="(/admin/enrichment/enrichmentconfig/\d+/change/)"', html)
    assert change is not None
    page = staff_client.get(change.group(1)).content.decode()
    group = page.split('id="scope_rules-group"', 1)[1].split("</fieldset>", 1)[0]
    assert re.findall(r'<span class="rule-number">(\w+)</span>', group) == ["1", "2", "new"]
    assert config_document()["tools"]["links"]["scope"]["rules"] == GLOBAL_RULES


@pytest.mark.django_db
def test_admin_run_page_names_the_source(staff_client) -> None:
    run = stored_run()
    page = staff_client.get(f"/admin/enrichment/run/{run.pk}/change/").content.decode()
    assert "agent support&#x27;s override: its default (deny)" in page
