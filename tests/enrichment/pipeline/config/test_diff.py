"""The structural config diff: paths, kinds and the one-line summary."""

from __future__ import annotations

from typing import Any

import pytest

from enrichment.pipeline.config.diff import diff_documents, summarize

R0 = {"action": "deny", "match": {"channel": "slack"}}
R1 = {"action": "deny", "match": {"chatType": "group"}}
R2 = {"action": "allow", "match": {"keyPrefix": "ops:"}}
MODEL = {"type": "cli", "command": "link-understand", "args": ["--url", "{{LinkUrl}}"]}


def links(**block: Any) -> dict[str, Any]:
    return {"tools": {"links": block}}


def scope(*rules: dict[str, Any]) -> dict[str, Any]:
    return links(scope={"default": "allow", "rules": list(rules)})


def agents(*items: dict[str, Any]) -> dict[str, Any]:
    return {"tools": {}, "agents": {"list": list(items)}}


CASES = [
    (
        scope(R0, R1),
        scope(R0, R2, R1),
        ['tools.links.scope.rules[1]: added {"action": "allow", "match": {"keyPrefix": "ops:"}}'],
        "links.scope: +1 rule",
    ),
    (
        scope(R0, R1, R2),
        scope(R0, R2),
        ['tools.links.scope.rules[1]: removed {"action": "deny", "match": {"chatType": "group"}}'],
        "links.scope: −1 rule",
    ),
    (
        scope(R0, R1, R2),
        scope(R2, R0, R1),
        ["tools.links.scope.rules[0]: moved from tools.links.scope.rules[2]"],
        "links.scope: 1 rule moved",
    ),
    (
        scope(R0, R1),
        scope({"action": "deny", "match": {"channel": "discord"}}, R1),
        ['tools.links.scope.rules[0].match.channel: "slack" → "discord"'],
        "links.scope.rules[0].match.channel changed",
    ),
    (
        links(models=[MODEL]),
        links(models=[{**MODEL, "args": ["--url", "{{LinkUrl}}", "--format", "text"]}]),
        [
            'tools.links.models[0].args[2]: added "--format"',
            'tools.links.models[0].args[3]: added "text"',
        ],
        "links.models[0].args[2] added; links.models[0].args[3] added",
    ),
    (
        links(models=[MODEL]),
        links(models=[{**MODEL, "args": ["--link", "{{LinkUrl}}"]}]),
        ['tools.links.models[0].args[0]: "--url" → "--link"'],
        "links.models[0].args[0] changed",
    ),
    (
        links(maxLinks=3),
        links(maxLinks=3.0),
        ["tools.links.maxLinks: 3 → 3.0"],
        "links.maxLinks changed",
    ),
    (
        agents({"id": "a"}, {"id": "b", "tools": {"links": {"enabled": False}}}),
        agents({"id": "b", "tools": {"links": {"enabled": True}}}, {"id": "a"}, {"id": "c"}),
        [
            "agents.list[0]: moved from agents.list[1]",
            "agents.list[0].tools.links.enabled: false → true",
            "agents.list[1]: moved from agents.list[0]",
            'agents.list[2]: added {"id": "c"}',
        ],
        "agents: 2 agents moved, +1 agent; agents.list[0].tools.links.enabled changed",
    ),
    (
        agents({"id": "a", "tools": {"links": {"scope": {"rules": [R0]}}}}),
        agents({"id": "a"}),
        [
            'agents.list[0].tools: removed {"links": {"scope": {"rules": ['
            + ('{"action": "deny", "match": {"channel": "slack"}}]}}}')
        ],
        "agents.list[0].tools removed",
    ),
    (
        {"tools": {"byProvider": {"openai/gpt-4.1": {"deny": ["exec"]}}}},
        {"tools": {"byProvider": {"openai/gpt-4.1": {"deny": []}}}},
        ['tools.byProvider["openai/gpt-4.1"].deny[0]: removed "exec"'],
        'byProvider["openai/gpt-4.1"].deny[0] removed',
    ),
    (scope(R0), scope(R0), [], "no changes"),
]


@pytest.mark.parametrize(
    ("old", "new", "expected", "summary"),
    CASES,
    ids=[
        "rule-added",
        "rule-removed",
        "rules-reordered",
        "rule-field-changed",
        "args-appended",
        "arg-changed",
        "int-vs-float-kept-apart",
        "agents-matched-by-id",
        "agent-override-dropped",
        "odd-key-quoted",
        "identical",
    ],
)
def test_diff_and_summary(old, new, expected, summary):
    changes = diff_documents(old, new)
    assert [str(change) for change in changes] == expected
    assert summarize(changes) == summary


def test_change_dicts_carry_only_what_applies():
    (change,) = diff_documents(scope(R0), scope(R0, R1))
    assert change.to_dict() == {
        "path": "tools.links.scope.rules[1]",
        "kind": "added",
        "new": R1,
        "label": "global rule 2",
    }
    (change,) = diff_documents({"tools": {"a": 1}}, {"tools": {"a": 2}})
    assert change.to_dict() == {"path": "tools.a", "kind": "changed", "old": 1, "new": 2}


def test_long_summaries_are_cut():
    old = {"tools": {f"k{i}": i for i in range(10)}}
    new = {"tools": {f"k{i}": i + 1 for i in range(10)}}
    assert summarize(diff_documents(old, new)).endswith("; … 4 more")


def test_a_hostile_document_diffs_without_error():
    old = {"a": [[1, [2]], {"id": 1}, {"id": 1}], 'b\n"c': None}
    new = {"a": [[1, [3]], {"id": 1}], 'b\n"c': "x"}
    paths = [change.path for change in diff_documents(old, new)]
    assert 'b\\n\\"c' in "".join(paths)
    assert "a[0][1][0]" in paths
