"""Scope rules: may this message be enriched? (shared by link and media understanding)

A scope is ``{default: "allow"|"deny", rules: [{action, match: {channel, chatType, keyPrefix}}]}``.
Rules are tried in order and the first one whose every present field matches decides; when none
matches, ``default`` decides; no scope at all allows everything.

Worked example::

    scope = {"default": "deny", "rules": [{"action": "allow", "match": {"chatType": "dm"}}]}
    evaluate_scope(parse_scope(scope)[0], "slack", "DM", "agent:main:slack:dm:U1")
    # -> ScopeDecision(decision="allow", matched_rule=0)

One deliberate departure from the reference: an unknown ``chatType`` in a *rule* (``"room"``)
is a validation error here. The reference silently drops it, which turns the rule into a
wildcard that matches every message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from enrichment.pipeline.config.readers import ConfigIssue, unknown_key_issues

ScopeAction = Literal["allow", "deny"]
ChatType = Literal["direct", "group", "channel"]

SCOPE_KEYS = frozenset({"default", "rules"})
RULE_KEYS = frozenset({"action", "match"})
MATCH_KEYS = frozenset({"channel", "chatType", "keyPrefix"})
_CHAT_TYPE_ALIASES: Mapping[str, ChatType] = {
    "direct": "direct",
    "dm": "direct",
    "group": "group",
    "channel": "channel",
}


@dataclass(frozen=True)
class ScopeMatch:
    """Match fields, already normalised (lower-case); ``None`` puts no constraint."""

    channel: str | None = None
    chat_type: ChatType | None = None
    key_prefix: str | None = None


@dataclass(frozen=True)
class ScopeRule:
    action: ScopeAction = "allow"
    match: ScopeMatch = field(default_factory=ScopeMatch)


@dataclass(frozen=True)
class ScopeConfig:
    default: ScopeAction = "allow"
    rules: tuple[ScopeRule, ...] = ()


@dataclass(frozen=True)
class ScopeDecision:
    decision: ScopeAction
    matched_rule: int | None  # index into ``rules``; None when the default decided

    def to_dict(self) -> dict[str, object]:
        return {"decision": self.decision, "matchedRule": self.matched_rule}


def normalize_chat_type(value: str | None) -> ChatType | None:
    """``direct``/``dm`` -> direct, ``group``, ``channel``; anything else -> None."""
    if value is None:
        return None
    return _CHAT_TYPE_ALIASES.get(value.strip().lower())


def _normalize_text(value: str | None) -> str | None:
    cleaned = (value or "").strip().lower()
    return cleaned or None


def evaluate_scope(
    scope: ScopeConfig | None,
    channel: str | None,
    chat_type: str | None,
    session_key: str | None,
) -> ScopeDecision:
    """Decide allow/deny for one message context; the first matching rule wins."""
    if scope is None:
        return ScopeDecision("allow", None)
    context_channel = _normalize_text(channel)
    context_chat_type = normalize_chat_type(chat_type)
    context_key = (session_key or "").strip().lower()
    for index, rule in enumerate(scope.rules):
        if _rule_matches(rule.match, context_channel, context_chat_type, context_key):
            return ScopeDecision(rule.action, index)
    return ScopeDecision(scope.default, None)


def _rule_matches(
    match: ScopeMatch, channel: str | None, chat_type: ChatType | None, session_key: str
) -> bool:
    if match.channel is not None and match.channel != channel:
        return False
    if match.chat_type is not None and match.chat_type != chat_type:
        return False
    return match.key_prefix is None or session_key.startswith(match.key_prefix)


# --- parsing and validation -------------------------------------------------------------------


def validate_scope(obj: object, path: str = "scope") -> list[ConfigIssue]:
    """Every problem in a raw (JSON) scope object; empty when it is valid."""
    return parse_scope(obj, path)[1]


def parse_scope(obj: object, path: str = "scope") -> tuple[ScopeConfig | None, list[ConfigIssue]]:
    """Parse a raw scope object; the config is None whenever an issue was found."""
    issues: list[ConfigIssue] = []
    if not isinstance(obj, Mapping):
        return None, [ConfigIssue(path, "must be an object")]
    issues.extend(unknown_key_issues(obj, SCOPE_KEYS, path))
    default = _parse_action(obj.get("default"), f"{path}.default", issues)
    rules: list[ScopeRule] = []
    raw_rules = obj.get("rules", [])
    if isinstance(raw_rules, Sequence) and not isinstance(raw_rules, str):
        for index, raw_rule in enumerate(raw_rules):
            rule = _parse_rule(raw_rule, f"{path}.rules[{index}]", issues)
            if rule is not None:
                rules.append(rule)
    else:
        issues.append(ConfigIssue(f"{path}.rules", "must be a list"))
    if issues:
        return None, issues
    return ScopeConfig(default=default, rules=tuple(rules)), issues


def _parse_rule(obj: object, path: str, issues: list[ConfigIssue]) -> ScopeRule | None:
    if not isinstance(obj, Mapping):
        issues.append(ConfigIssue(path, "must be an object"))
        return None
    issues.extend(unknown_key_issues(obj, RULE_KEYS, path))
    action = _parse_action(obj.get("action"), f"{path}.action", issues)
    raw_match = obj.get("match", {})
    if not isinstance(raw_match, Mapping):
        issues.append(ConfigIssue(f"{path}.match", "must be an object"))
        return None
    issues.extend(unknown_key_issues(raw_match, MATCH_KEYS, f"{path}.match"))
    channel = _parse_text(raw_match.get("channel"), f"{path}.match.channel", issues)
    raw_chat_type = _parse_text(raw_match.get("chatType"), f"{path}.match.chatType", issues)
    chat_type = normalize_chat_type(raw_chat_type)
    if raw_chat_type is not None and chat_type is None:
        issues.append(ConfigIssue(f"{path}.match.chatType", f'unknown chat type "{raw_chat_type}"'))
    key_prefix = _parse_text(raw_match.get("keyPrefix"), f"{path}.match.keyPrefix", issues)
    return ScopeRule(action, ScopeMatch(channel, chat_type, key_prefix))


def _parse_action(value: object, path: str, issues: list[ConfigIssue]) -> ScopeAction:
    # A missing action or default means "allow", as in the reference.
    if value is None:
        return "allow"
    if not isinstance(value, str):
        issues.append(ConfigIssue(path, "must be a string"))
        return "allow"
    normalized = value.strip().lower()
    if normalized == "allow":
        return "allow"
    if normalized == "deny":
        return "deny"
    issues.append(ConfigIssue(path, f'unknown action "{value}" (expected "allow" or "deny")'))
    return "allow"


def _parse_text(value: object, path: str, issues: list[ConfigIssue]) -> str | None:
    """A match field: a string, lower-cased; blank means "no constraint"."""
    if value is None:
        return None
    if not isinstance(value, str):
        issues.append(ConfigIssue(path, "must be a string"))
        return None
    return _normalize_text(value)


def scope_to_dict(scope: ScopeConfig) -> dict[str, object]:
    """OpenClaw camelCase shape; only the match fields that are set are written."""
    return {
        "default": scope.default,
        "rules": [
            {"action": rule.action, "match": _match_to_dict(rule.match)} for rule in scope.rules
        ],
    }


def _match_to_dict(match: ScopeMatch) -> dict[str, str]:
    result: dict[str, str] = {}
    if match.channel is not None:
        result["channel"] = match.channel
    if match.chat_type is not None:
        result["chatType"] = match.chat_type
    if match.key_prefix is not None:
        result["keyPrefix"] = match.key_prefix
    return result
