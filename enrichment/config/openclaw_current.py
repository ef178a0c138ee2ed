"""Reading what OpenClaw 2026.9 writes into the Control UI's (spec-shaped) document.

OpenClaw 2026.9 keeps agents in ``agents.entries`` keyed by id (with ``agents.ownership``
and ``agents.defaults`` beside them), one ``tools.media.models`` list whose entries name
their ``capabilities``, and a few keys the Control UI has no setting for. ``openclaw_io``
calls these helpers for both shapes, so a legacy file and a current one import alike::

    >>> notes = []
    >>> agents_from_entries({"research": {"name": "R", "tools": {"deny": ["exec"]}}}, notes)
    [{'id': 'research', 'tools': {'deny': ['exec']}}]
    >>> notes
    ['agents.entries.research.name: not a Control UI setting, ignored']

Every key that is dropped is named in a note that says why; a key we do not know at all is
kept, so validation reports it (a typo is not "ignored").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Note = str
Agent = Callable[[Any, str, list[Note]], Any]

# Keys OpenClaw 2026.9 accepts that have no Control UI setting, and why.
FETCH_NOT_MODELLED = {
    "enabled": "the Control UI's fetcher has no on/off switch: a link model decides whether "
    "it runs",
    "readability": "the Control UI always extracts the main content",
    "firecrawl": "the Control UI has no Firecrawl fallback",
    "provider": "the Control UI fetches with its own guarded fetcher, not a provider",
    "headers": "the Control UI's fetcher sends its own fixed request headers",
    "useTrustedEnvProxy": "the Control UI's fetcher dials the address it checked, never a proxy",
}
SSRF_NOT_MODELLED = {
    "blockedHostnames": "the Control UI's SSRF guard has no host block list of its own (its "
    "blocked names and ranges are built in)",
}
MEDIA_CAPABILITY_NOT_MODELLED = {
    "preferredModel": "the Control UI tries the models in list order",
    "providerOptions": "the Control UI's HTTP providers take no per-provider options",
    "request": "the Control UI's HTTP providers take their key from the environment and "
    "their headers from headers",
}
MEDIA_ENTRY_NOT_MODELLED = {
    **{key: MEDIA_CAPABILITY_NOT_MODELLED[key] for key in ("providerOptions", "request")},
    "profile": "auth profiles are the gateway's; the Control UI takes provider keys from the "
    "environment",
    "preferredProfile": "auth profiles are the gateway's; the Control UI takes provider keys "
    "from the environment",
}
SCOPE_MATCH_NOT_MODELLED = {
    "rawKeyPrefix": "the Control UI matches keyPrefix only (OpenClaw 2026.9's scope check "
    "does not read rawKeyPrefix either)",
}
AGENTS_NOT_MODELLED = {
    "ownership": "the Control UI has no roster ownership; an export to the current shape "
    'writes "explicit" again when there are several agents',
    "defaults": "agent model and runtime defaults are the gateway's",
}
AGENT_ENTRY_NOT_MODELLED = {
    "default": "the Control UI has no default agent",
    "id": "in agents.entries the key is the agent's id",
}
CAPABILITIES = ("image", "audio", "video")


def not_modelled(path: str, why: str | None = None) -> Note:
    return f"{path}: not a Control UI setting ({why}), ignored" if why else ignored(path)


def ignored(path: str) -> Note:
    return f"{path}: not a Control UI setting, ignored"


def _without(block: Any, drop: Mapping[str, str], path: str, notes: list[Note]) -> Any:
    """``block`` less the keys of ``drop``, each named in a note (non-objects unchanged)."""
    if not isinstance(block, Mapping):
        return block
    kept = {}
    for key, value in block.items():
        if key in drop:
            notes.append(not_modelled(f"{path}.{key}", drop[key]))
        else:
            kept[key] = value
    return kept


def scope_from_openclaw(scope: Any, path: str, notes: list[Note]) -> Any:
    if not isinstance(scope, Mapping) or not isinstance(scope.get("rules"), list):
        return scope
    rules = []
    for index, rule in enumerate(scope["rules"]):
        if isinstance(rule, Mapping) and "match" in rule:
            match = _without(rule["match"], SCOPE_MATCH_NOT_MODELLED,
                             f"{path}.rules[{index}].match", notes)  # fmt: skip
            rule = {**rule, "match": match}
        rules.append(rule)
    return {**scope, "rules": rules}


def links_from_openclaw(links: Any, path: str, notes: list[Note]) -> Any:
    if not isinstance(links, Mapping) or "scope" not in links:
        return links
    return {**links, "scope": scope_from_openclaw(links["scope"], f"{path}.scope", notes)}


def media_from_openclaw(media: Any, path: str, notes: list[Note]) -> Any:
    if not isinstance(media, Mapping):
        return media
    result = dict(media)
    if isinstance(media.get("models"), list):
        result["models"] = _media_entries(media["models"], f"{path}.models", notes)
    for capability in CAPABILITIES:
        block = media.get(capability)
        if not isinstance(block, Mapping):
            continue
        where = f"{path}.{capability}"
        block = _without(block, MEDIA_CAPABILITY_NOT_MODELLED, where, notes)
        if "scope" in block:
            block["scope"] = scope_from_openclaw(block["scope"], f"{where}.scope", notes)
        if isinstance(block.get("models"), list):  # the legacy per-capability list
            block["models"] = _media_entries(block["models"], f"{where}.models", notes)
        result[capability] = block
    return result


def _media_entries(entries: list[Any], path: str, notes: list[Note]) -> list[Any]:
    return [
        _without(entry, MEDIA_ENTRY_NOT_MODELLED, f"{path}[{index}]", notes)
        for index, entry in enumerate(entries)
    ]


def fetch_from_openclaw(fetch: Any, path: str, notes: list[Note]) -> Any:
    fetch = _without(fetch, FETCH_NOT_MODELLED, path, notes)
    if not isinstance(fetch, Mapping) or not isinstance(fetch.get("ssrfPolicy"), Mapping):
        return fetch
    where = f"{path}.ssrfPolicy"
    policy = _without(fetch["ssrfPolicy"], SSRF_NOT_MODELLED, where, notes)
    if "dangerouslyAllowPrivateNetwork" in policy:
        value = policy.pop("dangerouslyAllowPrivateNetwork")
        if "allowPrivateNetwork" in policy and policy["allowPrivateNetwork"] != value:
            notes.append(
                f"{where}.dangerouslyAllowPrivateNetwork: disagrees with allowPrivateNetwork, "
                "which is kept; ignored"
            )
        else:  # OpenClaw 2026.9's name for the Control UI's allowPrivateNetwork
            policy = {"allowPrivateNetwork": value, **policy}
    return {**fetch, "ssrfPolicy": policy}


def agents_from_entries(entries: Any, notes: list[Note], agent: Agent | None = None) -> Any:
    """``agents.entries`` (keyed by id) as the items of ``agents.list``. ``agent`` reduces
    one entry (``openclaw_io`` passes its own, shared with the legacy list)."""
    if not isinstance(entries, Mapping):
        return entries
    result = []
    for agent_id, entry in entries.items():
        path = f"agents.entries.{agent_id}"
        if not isinstance(entry, Mapping):
            result.append(entry)  # validation names it
            continue
        entry = _without(entry, AGENT_ENTRY_NOT_MODELLED, path, notes)
        reduced = (agent or _policy_only)(entry, path, notes)
        result.append({"id": agent_id, **reduced})
    return result


def _policy_only(entry: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "tools":
            kept["tools"] = value
        else:
            notes.append(ignored(f"{path}.{key}"))
    return kept
