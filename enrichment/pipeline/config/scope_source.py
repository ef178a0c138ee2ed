"""Where a scope decision came from, said the same way on every page.

A run's link scope is the global ``tools.links.scope`` unless the run's agent overrides
``scope`` (an override replaces the scope whole). A decision is then made by one rule of
that scope (the first that matches) or by its default. People read rule numbers from 1;
the stored index (``Run.matched_rule``, ``matchedRule`` in JSON) stays 0-based.

Worked example::

    config: tools.links.scope = {default: allow, rules: [deny telegram groups]}
            agents.list = [{id: support, tools.links.scope: {default: deny, rules: []}}]
    scope_source(config, "support", "deny", None).text
    # -> "agent support's override: its default (deny)"
    scope_source(config, "", "deny", 0).text
    # -> "global rule 1 (deny)"

The run page, ``/explain/``, the admin's Preview impact and the config diff all call this
module, so "rule 1" means the same rule everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from enrichment.pipeline.config.model import Config, effective_links_config
from enrichment.pipeline.config.scope import ScopeConfig, ScopeMatch, evaluate_scope

SourceKind = Literal["none", "global-rule", "global-default", "agent-rule", "agent-default"]


def rule_number(index: int) -> int:
    """The number a person reads for a 0-based rule index: the first rule is rule 1."""
    return index + 1


def scope_owner(config: Config, agent_id: str | None) -> str | None:
    """The agent whose override scope applies to its runs; None when the global one does."""
    for agent in config.agents:
        if agent.id == agent_id and agent.links is not None and agent.links.scope is not None:
            return agent.id
    return None


@dataclass(frozen=True)
class ScopeSource:
    """One scope decision and what made it."""

    decision: str  # "allow" | "deny"
    kind: SourceKind
    rule_index: int | None = None  # 0-based, as stored; None when a default decided
    agent_id: str | None = None  # the overriding agent for the agent-* kinds
    rule: ScopeMatch | None = None  # the matched rule's conditions, when known

    @property
    def rule_number(self) -> int | None:
        return None if self.rule_index is None else rule_number(self.rule_index)

    @property
    def origin(self) -> str:
        """``global rule 2``, ``the global default``, ``agent support's override: its rule 1``."""
        if self.kind == "none":
            return "no scope configured (every message allowed)"
        if self.kind == "global-rule":
            return f"global rule {self.rule_number}"
        if self.kind == "global-default":
            return "the global default"
        owner = f"agent {self.agent_id}'s override"
        if self.kind == "agent-rule":
            return f"{owner}: its rule {self.rule_number}"
        return f"{owner}: its default"

    @property
    def text(self) -> str:
        """The origin with the action it took: ``global rule 1 (deny)``."""
        if self.kind == "none":
            return self.origin
        return f"{self.origin} ({self.decision})"

    @property
    def conditions(self) -> dict[str, str]:
        """The matched rule's conditions as written in the config (empty: matches all)."""
        if self.rule is None:
            return {}
        fields = {
            "channel": self.rule.channel,
            "chatType": self.rule.chat_type,
            "keyPrefix": self.rule.key_prefix,
        }
        return {key: value for key, value in fields.items() if value is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "kind": self.kind,
            "matchedRule": self.rule_index,
            "ruleNumber": self.rule_number,
            "agentId": self.agent_id,
            "text": self.text,
        }


def scope_source(
    config: Config, agent_id: str | None, decision: str, matched_rule: int | None
) -> ScopeSource:
    """Name the source of a decision already made (a stored run) under ``config``."""
    owner = scope_owner(config, agent_id or None)
    scope = effective_links_config(config, agent_id or None).scope
    return _source(scope, owner, decision, matched_rule)


def explain_scope(
    config: Config,
    agent_id: str | None,
    channel: str | None,
    chat_type: str | None,
    session_key: str | None,
) -> ScopeSource:
    """Decide and name the source in one go (explain page, dry run)."""
    scope = effective_links_config(config, agent_id or None).scope
    decided = evaluate_scope(scope, channel, chat_type, session_key)
    return _source(
        scope, scope_owner(config, agent_id or None), decided.decision, decided.matched_rule
    )


def _source(
    scope: ScopeConfig | None, owner: str | None, decision: str, matched_rule: int | None
) -> ScopeSource:
    if scope is None:
        return ScopeSource(decision, "none")
    if matched_rule is None:
        return ScopeSource(decision, "agent-default" if owner else "global-default", None, owner)
    rule = scope.rules[matched_rule].match if 0 <= matched_rule < len(scope.rules) else None
    return ScopeSource(
        decision, "agent-rule" if owner else "global-rule", matched_rule, owner, rule
    )
