from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enrichment.pipeline.config.scope import (
    ScopeConfig,
    ScopeDecision,
    evaluate_scope,
    parse_scope,
    scope_to_dict,
    validate_scope,
)
from enrichment.pipeline.templates import MessageContext


def scope(raw: dict[str, object]) -> ScopeConfig:
    parsed, issues = parse_scope(raw)
    assert issues == [], issues
    assert parsed is not None
    return parsed


DENY_GROUPS = {"default": "allow", "rules": [{"action": "deny", "match": {"chatType": "group"}}]}
ONLY_DIRECT = {"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "direct"}}]}
DISCORD_SLACK = {
    "default": "deny",
    "rules": [
        {"action": "allow", "match": {"channel": "discord"}},
        {"action": "allow", "match": {"channel": "slack"}},
    ],
}
KEY_PREFIX = {"rules": [{"action": "deny", "match": {"keyPrefix": "Agent:Main:Slack:"}}]}
FIRST_WINS = {
    "rules": [
        {"action": "deny", "match": {"chatType": "group"}},
        {"action": "allow", "match": {}},
        {"action": "deny", "match": {}},
    ],
    "default": "deny",
}

# (raw scope, channel, chat type, session key, expected decision, expected rule index)
CASES = [
    ({}, "slack", "group", "k", "allow", None),
    ({"default": "deny"}, "slack", "group", "k", "deny", None),
    ({"default": "DENY"}, "slack", "group", "k", "deny", None),
    (DENY_GROUPS, "slack", "group", "k", "deny", 0),
    (DENY_GROUPS, "slack", "GROUP ", "k", "deny", 0),
    (DENY_GROUPS, "slack", "direct", "k", "allow", None),
    (DENY_GROUPS, "slack", "supergroup", "k", "allow", None),
    (ONLY_DIRECT, "slack", "direct", "k", "allow", 0),
    (ONLY_DIRECT, "slack", "dm", "k", "allow", 0),
    (ONLY_DIRECT, "slack", " DM ", "k", "allow", 0),
    (ONLY_DIRECT, "slack", "group", "k", "deny", None),
    (ONLY_DIRECT, "slack", "private", "k", "deny", None),
    (ONLY_DIRECT, "slack", None, "k", "deny", None),
    (
        {"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "dm"}}]},
        "x",
        "direct",
        "k",
        "allow",
        0,
    ),
    (
        {"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "channel"}}]},
        "x",
        "channel",
        "k",
        "allow",
        0,
    ),
    (DISCORD_SLACK, "discord", None, None, "allow", 0),
    (DISCORD_SLACK, "SLACK", None, None, "allow", 1),
    (DISCORD_SLACK, " Slack ", None, None, "allow", 1),
    (DISCORD_SLACK, "telegram", None, None, "deny", None),
    (DISCORD_SLACK, None, None, None, "deny", None),
    (DISCORD_SLACK, "", None, None, "deny", None),
    (KEY_PREFIX, "slack", "group", "agent:main:slack:channel:C123", "deny", 0),
    (KEY_PREFIX, "slack", "group", "AGENT:MAIN:SLACK:CHANNEL:C123", "deny", 0),
    (KEY_PREFIX, "slack", "group", "agent:main:discord:channel:C123", "allow", None),
    (KEY_PREFIX, "slack", "group", None, "allow", None),
    (KEY_PREFIX, "slack", "group", "agent:main:slack", "allow", None),
    (FIRST_WINS, "slack", "group", "k", "deny", 0),
    (FIRST_WINS, "slack", "direct", "k", "allow", 1),
    (
        {"rules": [{"match": {"chatType": "group"}}], "default": "deny"},
        "a",
        "group",
        "",
        "allow",
        0,
    ),
    ({"rules": [{"action": "deny"}]}, None, None, None, "deny", 0),
    ({"rules": [{"action": "deny", "match": {"channel": "   "}}]}, "slack", None, None, "deny", 0),
    (
        {"rules": [{"action": "deny", "match": {"channel": "slack", "chatType": "group"}}]},
        "slack",
        "direct",
        None,
        "allow",
        None,
    ),
    (
        {"rules": [{"action": "deny", "match": {"channel": "slack", "chatType": "group"}}]},
        "slack",
        "group",
        None,
        "deny",
        0,
    ),
]
CASE_IDS = [
    "empty-scope-allows",
    "default-deny",
    "default-case-insensitive",
    "deny-groups-group",
    "deny-groups-group-untrimmed",
    "deny-groups-direct",
    "context-supergroup-is-no-group",
    "only-direct-direct",
    "only-direct-dm",
    "only-direct-dm-untrimmed",
    "only-direct-group",
    "context-private-never-matches",
    "context-no-chat-type",
    "rule-dm-normalised",
    "rule-channel-type",
    "allowlist-discord",
    "allowlist-slack-uppercase",
    "allowlist-slack-untrimmed",
    "allowlist-other-channel",
    "no-context-channel-fails-channel-rule",
    "blank-context-channel-fails-channel-rule",
    "key-prefix",
    "key-prefix-case-insensitive",
    "key-prefix-other",
    "key-prefix-no-session-key",
    "key-prefix-longer-than-key",
    "first-match-wins-deny",
    "first-match-wins-catch-all",
    "missing-action-allows",
    "missing-match-matches-all",
    "blank-match-field-no-constraint",
    "all-fields-must-match",
    "all-fields-match",
]


@pytest.mark.parametrize(
    ("raw", "channel", "chat_type", "key", "decision", "rule"), CASES, ids=CASE_IDS
)
def test_evaluate_scope(
    raw: dict[str, object],
    channel: str | None,
    chat_type: str | None,
    key: str | None,
    decision: str,
    rule: int | None,
) -> None:
    assert evaluate_scope(scope(raw), channel, chat_type, key) == ScopeDecision(decision, rule)  # type: ignore[arg-type]


def test_no_scope_allows_everything() -> None:
    assert evaluate_scope(None, None, None, None) == ScopeDecision("allow", None)


def test_surface_wins_over_provider_for_channel_rules() -> None:
    context = MessageContext(surface="slack", provider="discord", channel="webchat")
    rules = scope(
        {"default": "deny", "rules": [{"action": "allow", "match": {"channel": "slack"}}]}
    )
    assert context.scope_channel == "slack"
    assert evaluate_scope(rules, context.scope_channel, None, None) == ScopeDecision("allow", 0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"rules": [{}, {}, {"action": "deny", "match": {"chatType": "room"}}]},
            ['scope.rules[2].match.chatType: unknown chat type "room"'],
        ),
        (
            {"rules": [{"match": {"chatType": "private"}}]},
            ['scope.rules[0].match.chatType: unknown chat type "private"'],
        ),
        (
            {"rules": [{"match": {"chatType": "thread"}}]},
            ['scope.rules[0].match.chatType: unknown chat type "thread"'],
        ),
        (
            {"rules": [{"match": {"chatType": "supergroup"}}]},
            ['scope.rules[0].match.chatType: unknown chat type "supergroup"'],
        ),
        (
            {"rules": [{"action": "block"}]},
            ['scope.rules[0].action: unknown action "block" (expected "allow" or "deny")'],
        ),
        (
            {"default": "maybe"},
            ['scope.default: unknown action "maybe" (expected "allow" or "deny")'],
        ),
        ({"default": 1}, ["scope.default: must be a string"]),
        ({"defaults": "deny"}, ["scope.defaults: unknown key"]),
        ({"rules": [{"acton": "deny"}]}, ["scope.rules[0].acton: unknown key"]),
        (
            {"rules": [{"match": {"rawKeyPrefix": "a"}}]},
            ["scope.rules[0].match.rawKeyPrefix: unknown key"],
        ),
        ({"rules": "deny"}, ["scope.rules: must be a list"]),
        ({"rules": [None]}, ["scope.rules[0]: must be an object"]),
        ({"rules": [{"match": []}]}, ["scope.rules[0].match: must be an object"]),
        (
            {"rules": [{"match": {"channel": 5}}]},
            ["scope.rules[0].match.channel: must be a string"],
        ),
        (
            {"rules": [{"match": {"keyPrefix": ["a"]}}]},
            ["scope.rules[0].match.keyPrefix: must be a string"],
        ),
        ("deny", ["scope: must be an object"]),
        (
            {"default": "no", "rules": [{"action": "x", "match": {"chatType": "room"}}]},
            [
                'scope.default: unknown action "no" (expected "allow" or "deny")',
                'scope.rules[0].action: unknown action "x" (expected "allow" or "deny")',
                'scope.rules[0].match.chatType: unknown chat type "room"',
            ],
        ),
        ({"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "DM"}}]}, []),
    ],
    ids=[
        "chat-type-room",
        "chat-type-private",
        "chat-type-thread",
        "chat-type-supergroup",
        "unknown-action",
        "unknown-default",
        "default-wrong-type",
        "unknown-scope-key",
        "unknown-rule-key",
        "unknown-match-key",
        "rules-not-list",
        "rule-null",
        "match-not-object",
        "channel-not-string",
        "key-prefix-not-string",
        "scope-not-object",
        "all-issues-collected",
        "valid",
    ],
)
def test_validate_scope_messages(raw: object, expected: list[str]) -> None:
    assert [str(issue) for issue in validate_scope(raw)] == expected


def test_invalid_scope_parses_to_none() -> None:
    parsed, issues = parse_scope({"rules": [{"match": {"chatType": "room"}}]}, "tools.links.scope")
    assert parsed is None
    assert str(issues[0]) == 'tools.links.scope.rules[0].match.chatType: unknown chat type "room"'


def test_scope_round_trips_through_dict() -> None:
    raw = {
        "default": "deny",
        "rules": [
            {"action": "allow", "match": {"channel": "Slack", "chatType": "dm", "keyPrefix": "A:"}},
            {"match": {}},
        ],
    }
    parsed = scope(raw)
    written = scope_to_dict(parsed)
    assert written == {
        "default": "deny",
        "rules": [
            {
                "action": "allow",
                "match": {"channel": "slack", "chatType": "direct", "keyPrefix": "a:"},
            },
            {"action": "allow", "match": {}},
        ],
    }
    assert scope(written) == parsed


@given(st.text(), st.one_of(st.none(), st.text()), st.one_of(st.none(), st.text()))
def test_evaluate_scope_never_raises(channel: str, chat_type: str | None, key: str | None) -> None:
    decision = evaluate_scope(scope(KEY_PREFIX), channel, chat_type, key)
    assert decision.decision in ("allow", "deny")
