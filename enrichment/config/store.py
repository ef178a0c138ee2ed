"""The stored config as an OpenClaw-shaped document, and back.

Rows hold only what the document says ("not set" is NULL/blank), so export writes back
what was imported; validation and defaults live in the pure core (``pipeline.config``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction

from enrichment.config.fields import FETCH_FIELDS, LINK_FIELDS, POLICY_KEYS, SSRF_FLAGS
from enrichment.config.versions import version_record
from enrichment.models import Agent, EnrichmentConfig, LinkModel, ScopeRule
from enrichment.pipeline.config.model import config_to_dict, default_config


def active_config() -> EnrichmentConfig:
    """The active config row; a fresh install gets the default one (``link-understand``)."""
    config = EnrichmentConfig.objects.filter(is_active=True).first()
    if config is None:
        with transaction.atomic():
            config, created = EnrichmentConfig.objects.get_or_create(
                is_active=True, defaults={"name": "default"}
            )
            if created:
                config = config_write(document=default_document())
                version_record(document=config_document(config), source="install", author="install")
    return config


def default_document() -> dict[str, Any]:
    """What a fresh install stores: just the built-in link model; every other key stays
    unset so it follows the defaults of the core."""
    models = config_to_dict(default_config())["tools"]["links"]["models"]
    return {"tools": {"links": {"models": models}}}


def _json_number(value: Any) -> Any:
    """A float column gives back ``30.0`` for the ``30`` a document said: write it as ``30``
    (the same JSON number); ``1.9`` stays ``1.9``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _set_fields(target: dict[str, Any], source: object, pairs: Iterable[tuple[str, str]]) -> None:
    for key, field in pairs:
        value = getattr(source, field)
        if value is not None and value != "":
            target[key] = _json_number(value)


def _scope_document(default: str, rules: Iterable[ScopeRule]) -> dict[str, Any] | None:
    rule_docs = []
    for rule in rules:
        match = {
            key: value
            for key, value in (
                ("channel", rule.channel),
                ("chatType", rule.chat_type),
                ("keyPrefix", rule.key_prefix),
            )
            if value
        }
        rule_docs.append({"action": rule.action, "match": match})
    if not default and not rule_docs:
        return None
    scope: dict[str, Any] = {}
    if default:
        scope["default"] = default
    scope["rules"] = rule_docs
    return scope


def _model_documents(models: Iterable[LinkModel]) -> list[dict[str, Any]]:
    documents = []
    for model in models:
        document: dict[str, Any] = {
            "type": model.type,
            "command": model.command,
            "args": list(model.args or []),
        }
        if model.timeout_seconds is not None:
            document["timeoutSeconds"] = _json_number(model.timeout_seconds)
        documents.append(document)
    return documents


def config_document(config: EnrichmentConfig | None = None) -> dict[str, Any]:
    """The config in OpenClaw's shape (``{tools: {...}, agents: {list: [...]}}``)."""
    config = config or active_config()
    rules = list(config.scope_rules.order_by("position", "id"))
    models = list(config.link_models.order_by("position", "id"))
    agents = list(config.agents.order_by("position", "id"))

    links: dict[str, Any] = {}
    _set_fields(links, config, LINK_FIELDS)
    scope = _scope_document(config.links_scope_default, [r for r in rules if r.agent_id is None])
    if scope is not None:
        links["scope"] = scope
    links["models"] = _model_documents(m for m in models if m.agent_id is None)

    fetch: dict[str, Any] = {}
    _set_fields(fetch, config, FETCH_FIELDS)
    ssrf: dict[str, Any] = {}
    if config.ssrf_allowed_hostnames:
        ssrf["allowedHostnames"] = list(config.ssrf_allowed_hostnames)
    _set_fields(ssrf, config, SSRF_FLAGS)
    if ssrf:
        fetch["ssrfPolicy"] = ssrf

    tools: dict[str, Any] = {"links": links}
    if config.media is not None:
        tools["media"] = config.media
    if fetch:
        tools["web"] = {"fetch": fetch}
    tools.update(
        {key: config.tool_policy[key] for key in POLICY_KEYS if key in (config.tool_policy or {})}
    )

    document: dict[str, Any] = {"tools": tools}
    if agents:
        document["agents"] = {"list": [_agent_document(agent, rules, models) for agent in agents]}
    return document


def _agent_document(
    agent: Agent, rules: list[ScopeRule], models: list[LinkModel]
) -> dict[str, Any]:
    links: dict[str, Any] = {}
    _set_fields(links, agent, LINK_FIELDS)
    if agent.override_scope:
        links["scope"] = _scope_document(
            agent.links_scope_default, [r for r in rules if r.agent_id == agent.pk]
        ) or {"rules": []}
    if agent.override_models:
        links["models"] = _model_documents(m for m in models if m.agent_id == agent.pk)
    tools: dict[str, Any] = {}
    if links:
        tools["links"] = links
    if agent.media is not None:
        tools["media"] = agent.media
    tools.update(
        {key: agent.tool_policy[key] for key in POLICY_KEYS if key in (agent.tool_policy or {})}
    )
    document: dict[str, Any] = {"id": agent.agent_id}
    if tools:
        document["tools"] = tools
    return document


def _scope_rows(
    config: EnrichmentConfig, agent: Agent | None, scope: Mapping[str, Any]
) -> list[ScopeRule]:
    rows = []
    for position, rule in enumerate(scope.get("rules") or []):
        match = rule.get("match") or {}
        rows.append(
            ScopeRule(
                config=config,
                agent=agent,
                position=position,
                action=rule.get("action") or "allow",
                channel=match.get("channel") or "",
                chat_type=match.get("chatType") or "",
                key_prefix=match.get("keyPrefix") or "",
            )
        )
    return rows


def _model_rows(
    config: EnrichmentConfig, agent: Agent | None, models: list[Mapping[str, Any]]
) -> list[LinkModel]:
    return [
        LinkModel(
            config=config,
            agent=agent,
            position=position,
            command=model.get("command", ""),
            args=list(model.get("args") or []),
            timeout_seconds=model.get("timeoutSeconds"),
        )
        for position, model in enumerate(models)
    ]


def _apply_scalars(
    target: object, source: Mapping[str, Any], pairs: Iterable[tuple[str, str]], blank: Any
) -> None:
    for key, field in pairs:
        setattr(target, field, source.get(key, blank(field)))


@transaction.atomic
def config_write(*, document: Mapping[str, Any]) -> EnrichmentConfig:
    """Replace the active config with an already validated document, atomically."""
    config = (
        EnrichmentConfig.objects.select_for_update().filter(is_active=True).first()
        or active_config()
    )
    tools: Mapping[str, Any] = document.get("tools") or {}
    links: Mapping[str, Any] = tools.get("links") or {}
    fetch: Mapping[str, Any] = (tools.get("web") or {}).get("fetch") or {}
    ssrf: Mapping[str, Any] = fetch.get("ssrfPolicy") or {}

    _apply_scalars(config, links, LINK_FIELDS, lambda field: None)
    _apply_scalars(
        config, fetch, FETCH_FIELDS, lambda field: "" if field == "fetch_user_agent" else None
    )
    _apply_scalars(config, ssrf, SSRF_FLAGS, lambda field: None)
    config.ssrf_allowed_hostnames = list(ssrf.get("allowedHostnames") or [])
    scope = links.get("scope") or {}
    config.links_scope_default = scope.get("default") or ""
    config.media = tools.get("media")
    config.tool_policy = {key: tools[key] for key in POLICY_KEYS if key in tools}
    config.save()

    config.scope_rules.all().delete()
    config.link_models.all().delete()
    config.agents.all().delete()
    rules = _scope_rows(config, None, scope)
    models = _model_rows(config, None, list(links.get("models") or []))
    for position, agent_doc in enumerate((document.get("agents") or {}).get("list") or []):
        agent_tools: Mapping[str, Any] = agent_doc.get("tools") or {}
        agent_links: Mapping[str, Any] = agent_tools.get("links") or {}
        agent = Agent(config=config, position=position, agent_id=agent_doc["id"])
        _apply_scalars(agent, agent_links, LINK_FIELDS, lambda field: None)
        agent.override_scope = "scope" in agent_links
        agent.links_scope_default = (agent_links.get("scope") or {}).get("default") or ""
        agent.override_models = "models" in agent_links
        agent.media = agent_tools.get("media")
        agent.tool_policy = {key: agent_tools[key] for key in POLICY_KEYS if key in agent_tools}
        agent.save()
        rules += _scope_rows(config, agent, agent_links.get("scope") or {})
        models += _model_rows(config, agent, list(agent_links.get("models") or []))
    ScopeRule.objects.bulk_create(rules)
    LinkModel.objects.bulk_create(models)
    return config
