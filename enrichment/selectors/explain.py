"""The explain page's read: what a real run would decide for a message, without running a CLI."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from enrichment import resolver
from enrichment.config.cache import config_load
from enrichment.models import Run
from enrichment.pipeline.config.model import (
    Config,
    ConfigError,
    config_to_dict,
    effective_links_config,
)
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.config.scope import ScopeConfig, scope_to_dict
from enrichment.pipeline.config.scope_source import ScopeSource, explain_scope, scope_source
from enrichment.pipeline.links.detection import bare_tokens, trim_trailing_punctuation
from enrichment.pipeline.links.stage import LinkPlan, explain_links
from enrichment.pipeline.net.ssrf import SsrfPolicy, check_url
from enrichment.pipeline.templates import MessageContext

OUTCOME_TEXT = {
    "run": "CLI entries would run for the allowed links.",
    "disabled": "Link understanding is disabled for this agent; nothing would run.",
    "scope-deny": "The scope denies this message; nothing would run.",
    "no-links": "No links were detected; nothing would run.",
    "skipped": "Every link is blocked, or no CLI entry is configured; nothing would run.",
}


def outcome_text(plan: LinkPlan) -> str:
    """The page's one-line verdict; a skip says which of its two causes it is."""
    if plan.outcome == "skipped" and plan.urls:
        if all(url.verdict.blocked for url in plan.urls):
            return "Every link is blocked by the SSRF check (see each verdict); nothing would run."
        if not any(url.commands for url in plan.urls):
            return "No CLI entry is configured for this agent; nothing would run."
    return OUTCOME_TEXT.get(plan.outcome, plan.outcome)


@dataclass(frozen=True)
class ExplainQuery:
    message: str
    channel: str = ""
    chat_type: str = ""
    session_key: str = ""
    agent_id: str = ""
    resolve_dns: bool = True

    def context(self) -> MessageContext:
        return MessageContext(
            body=self.message,
            channel=self.channel or None,
            chat_type=self.chat_type or None,
            session_key=self.session_key or None,
            agent_id=self.agent_id or None,
        )


@dataclass(frozen=True)
class ScopeRuleRow:
    index: int
    action: str
    match: dict[str, object]
    matched: bool

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class Explanation:
    query: ExplainQuery
    plan: dict[str, Any]  # LinkPlan.to_dict()
    outcome_text: str
    scope_default: str | None  # None: no scope configured (every message allowed)
    scope_rules: list[ScopeRuleRow]
    scope_source: ScopeSource
    links_config: dict[str, Any]  # the effective tools.links block after agent overrides
    agent_known: bool
    # URLs in the message that detection drops because their host is blocked as written
    # (a private or special address): a real run never lists them, the page explains why.
    ignored_urls: list[dict[str, Any]]


def explain_message(query: ExplainQuery) -> Explanation:
    """Verdicts, scope decision and per-entry argv for ``query`` under the stored config.

    Synchronous on purpose: DNS (when asked for) happens in the calling thread, like the
    SSRF check of a real run, but no CLI is started and nothing is stored.
    """
    config, _document = config_load()
    links = effective_links_config(config, query.agent_id or None)
    plan: LinkPlan = explain_links(
        links,
        query.context(),
        policy=config.web_fetch.ssrf_policy,
        resolve=resolver.resolve_host if query.resolve_dns else None,
    )
    scope = scope_document(links.scope)
    rules = [
        ScopeRuleRow(
            index=index,
            action=str(rule["action"]),
            match=dict(rule["match"]),
            matched=index == plan.scope.matched_rule,
        )
        for index, rule in enumerate(scope["rules"] if scope else [])
    ]
    return Explanation(
        query=query,
        plan=plan.to_dict(),
        outcome_text=outcome_text(plan),
        scope_default=str(scope["default"]) if scope else None,
        scope_rules=rules,
        scope_source=explain_scope(
            config,
            query.agent_id or None,
            query.channel or None,
            query.chat_type or None,
            query.session_key or None,
        ),
        links_config=links_block(config, query.agent_id),
        agent_known=not query.agent_id or any(a.id == query.agent_id for a in config.agents),
        ignored_urls=ignored_urls(
            query.message, {url.url for url in plan.urls}, config.web_fetch.ssrf_policy
        ),
    )


MAX_IGNORED = 10


def ignored_urls(message: str, detected: set[str], policy: SsrfPolicy) -> list[dict[str, Any]]:
    """URL-looking tokens that link detection skipped, with the SSRF verdict that skipped them.

    Detection checks hosts as written (no DNS), so the same literal check is repeated here.
    """
    result: list[dict[str, Any]] = []
    seen = set(detected)
    for raw in bare_tokens(message):
        token = trim_trailing_punctuation(raw)
        if token in seen:
            continue
        seen.add(token)
        verdict = check_url(token, policy)
        if verdict.blocked:
            result.append(
                {
                    "url": token,
                    "blocked": True,
                    "reason": verdict.reason,
                    "host": verdict.host,
                    "addresses": list(verdict.addresses),
                }
            )
        if len(result) >= MAX_IGNORED:
            break
    return result


def scope_document(scope: ScopeConfig | None) -> dict[str, Any] | None:
    """The scope in its OpenClaw shape (``{"default", "rules": [{"action", "match"}]}``)."""
    return dict(scope_to_dict(scope)) if scope is not None else None


def links_block(config: Config, agent_id: str | None) -> dict[str, Any]:
    """The effective ``tools.links`` block in its OpenClaw shape."""
    effective = dataclasses.replace(Config(), links=effective_links_config(config, agent_id))
    block: dict[str, Any] = config_to_dict(effective)["tools"]["links"]
    return block


def run_scope_source(run: Run) -> ScopeSource | None:
    """What decided a stored run's scope, read from the config snapshot it ran with.

    ``run.matched_rule`` indexes the *effective* rules (after the agent's override), so the
    snapshot is parsed and the source named by the core (``scope_source``). None when the
    run made no scope decision (disabled, unfinished) or the snapshot no longer parses.
    """
    if run.outcome not in SCOPED_OUTCOMES:
        return None
    try:
        config = parse_config(run.config_snapshot or {})
    except ConfigError:
        return None
    decision = "deny" if run.outcome == "scope-deny" else "allow"
    return scope_source(config, run.agent_id or None, decision, run.matched_rule)


# The outcomes a scope decision was made and stored for.
SCOPED_OUTCOMES = frozenset({"success", "skipped", "scope-deny", "no-links"})
