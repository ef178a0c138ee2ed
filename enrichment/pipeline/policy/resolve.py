"""Tool policy: which agent tools survive `tools.profile/allow/alsoAllow/deny/byProvider`.

Pure re-implementation of `reference/web-fetch-and-tool-policy.md` part B (baseline era).
Names, groups, profiles, the inventory and the matcher live in `policy_inventory`; this
module holds the config values, their validation and the stage pipeline.

Pipeline (B8), each stage filtering the previous stage's output:

1. `tools.profile (<name>)`            profile (agent replaces global) + profile-stage alsoAllow
2. `tools.byProvider.profile (<name>)` provider profile + its alsoAllow
3. `tools.allow`                       global allow/deny
4. `tools.byProvider.allow`            global byProvider allow/deny
5. `agents.<id>.tools.allow`           agent allow/deny
6. `agents.<id>.tools.byProvider.allow` agent byProvider allow/deny
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from enrichment.pipeline.policy.inventory import (
    PROFILE_NAMES,
    TOOL_PROFILES,
    ToolInventory,
    ToolMatcher,
    allowlist_warning,
    check_allowlist,
    js_trim,
    normalize_agent_id,
    unique,
)

NameList = tuple[str, ...]
_T = TypeVar("_T")
ConfigError = tuple[str, str]

POLICY_KEYS: NameList = ("profile", "allow", "alsoAllow", "deny", "byProvider")
PROVIDER_POLICY_KEYS: NameList = ("profile", "allow", "alsoAllow", "deny")

_BOTH_ALLOW_LISTS = (
    "cannot set both allow and alsoAllow in the same scope "
    "(merge alsoAllow into allow, or remove allow and use profile + alsoAllow)"
)


@dataclass(frozen=True)
class ProviderToolPolicy:
    """One `byProvider` entry. `None` means the key is absent, `()` an explicit empty list."""

    profile: str | None = None
    allow: NameList | None = None
    also_allow: NameList | None = None
    deny: NameList | None = None


@dataclass(frozen=True)
class ToolPolicyConfig:
    """A `tools` block (global, or one agent's `agents.list[].tools`)."""

    profile: str | None = None
    allow: NameList | None = None
    also_allow: NameList | None = None
    deny: NameList | None = None
    by_provider: Mapping[str, ProviderToolPolicy] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Read-only view so a frozen config cannot be changed through its mapping.
        object.__setattr__(self, "by_provider", MappingProxyType(dict(self.by_provider)))


AnyToolPolicy = ToolPolicyConfig | ProviderToolPolicy


# --- validation and (de)serialisation ------------------------------------------------


def parse_tool_policy(
    obj: Mapping[str, object],
    path: str = "tools",
    *,
    other_keys: Sequence[str] = (),
    agent: bool | None = None,
) -> tuple[ToolPolicyConfig, list[ConfigError]]:
    """Validate a `tools` object; return the config and `(path, message)` errors.

    `other_keys` are sibling keys owned by other validators (`links`, `media`, `web`) and
    are skipped instead of reported as unknown. `agent` picks the "agent tools cannot…"
    wording; by default it is inferred from a path starting with `agents`. With errors,
    the returned config holds only the valid parts and must not be stored.

    >>> parse_tool_policy({"byProvider": {"openai/gpt-4": {"profile": "x"}}})[1]
    [('tools.byProvider["openai/gpt-4"].profile', 'unknown profile "x"')]
    """
    if not isinstance(obj, Mapping):
        return ToolPolicyConfig(), [(path, "must be an object")]
    errors: list[ConfigError] = []
    is_agent = path.startswith("agents") if agent is None else agent
    fields = _parse_policy_fields(
        obj,
        path,
        (*POLICY_KEYS, *other_keys),
        "agent tools" if is_agent else "tools",
        errors,
    )
    by_provider: dict[str, ProviderToolPolicy] = {}
    if "byProvider" in obj:
        by_provider = _parse_by_provider(obj["byProvider"], f"{path}.byProvider", errors)
    config = ToolPolicyConfig(
        fields.profile, fields.allow, fields.also_allow, fields.deny, by_provider
    )
    return config, errors


def parse_agent_tool_policies(
    agent_tools: Mapping[str, object], *, other_keys: Sequence[str] = ()
) -> tuple[dict[str, ToolPolicyConfig], list[ConfigError]]:
    """Validate agent id → `tools` object; the n-th entry is reported as `agents.list[n].tools`."""
    configs: dict[str, ToolPolicyConfig] = {}
    errors: list[ConfigError] = []
    for index, (agent_id, obj) in enumerate(agent_tools.items()):
        path = f"agents.list[{index}].tools"
        if not isinstance(obj, Mapping):
            errors.append((path, "must be an object"))
            continue
        config, agent_errors = parse_tool_policy(obj, path, other_keys=other_keys, agent=True)
        configs[agent_id] = config
        errors.extend(agent_errors)
    return configs, errors


def tool_policy_to_dict(policy: AnyToolPolicy) -> dict[str, object]:
    """Serialise to the camelCase config shape, leaving out absent keys."""
    out: dict[str, object] = {}
    if policy.profile is not None:
        out["profile"] = policy.profile
    for key, names in (("allow", policy.allow), ("alsoAllow", policy.also_allow)):
        if names is not None:
            out[key] = list(names)
    if policy.deny is not None:
        out["deny"] = list(policy.deny)
    if isinstance(policy, ToolPolicyConfig) and policy.by_provider:
        out["byProvider"] = {
            key: tool_policy_to_dict(entry) for key, entry in policy.by_provider.items()
        }
    return out


def _quote(value: object) -> str:
    return json.dumps(str(value), ensure_ascii=False)


# Resolving a policy costs (entries x tools): stored policies are bounded like requests.
MAX_POLICY_NAMES = 1000  # per allow / alsoAllow / deny list
MAX_PROVIDER_POLICIES = 200  # byProvider entries per tools object


def _parse_policy_fields(
    obj: Mapping[str, object],
    path: str,
    known_keys: Sequence[str],
    subject: str,
    errors: list[ConfigError],
) -> ProviderToolPolicy:
    errors.extend((f"{path}.{key}", "unknown key") for key in obj if key not in known_keys)
    policy = ProviderToolPolicy(
        profile=_parse_profile(obj, path, errors),
        allow=_parse_names(obj, "allow", path, errors),
        also_allow=_parse_names(obj, "alsoAllow", path, errors),
        deny=_parse_names(obj, "deny", path, errors),
    )
    if policy.allow and policy.also_allow:
        errors.append((path, f"{subject} {_BOTH_ALLOW_LISTS}"))
    return policy


def _parse_profile(obj: Mapping[str, object], path: str, errors: list[ConfigError]) -> str | None:
    if "profile" not in obj:
        return None
    value = obj["profile"]
    if not isinstance(value, str):
        errors.append((f"{path}.profile", "must be a string"))
        return None
    if value not in PROFILE_NAMES:
        errors.append((f"{path}.profile", f"unknown profile {_quote(value)}"))
        return None
    return value


def _parse_names(
    obj: Mapping[str, object], key: str, path: str, errors: list[ConfigError]
) -> NameList | None:
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, list | tuple):
        errors.append((f"{path}.{key}", "must be a list of strings"))
        return None
    if len(value) > MAX_POLICY_NAMES:
        errors.append((f"{path}.{key}", f"at most {MAX_POLICY_NAMES} entries (got {len(value)})"))
        return None
    names: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            names.append(item)
        else:
            errors.append((f"{path}.{key}[{index}]", "must be a string"))
    return tuple(names)


def _parse_by_provider(
    value: object, path: str, errors: list[ConfigError]
) -> dict[str, ProviderToolPolicy]:
    if not isinstance(value, Mapping):
        errors.append((path, "must be an object"))
        return {}
    if len(value) > MAX_PROVIDER_POLICIES:
        errors.append((path, f"at most {MAX_PROVIDER_POLICIES} entries (got {len(value)})"))
        return {}
    entries: dict[str, ProviderToolPolicy] = {}
    for key, entry in value.items():
        entry_path = f"{path}[{_quote(key)}]"
        if not isinstance(key, str):
            errors.append((path, "object keys must be strings"))
        elif not isinstance(entry, Mapping):
            errors.append((entry_path, "must be an object"))
        else:
            entries[key] = _parse_policy_fields(
                entry, entry_path, PROVIDER_POLICY_KEYS, "tools.byProvider policy", errors
            )
    return entries


# --- stages (B5-B8) ---------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyStage:
    """One pipeline step: the label used in warnings/removals and its raw allow/deny."""

    label: str
    allow: NameList | None = None
    deny: NameList | None = None


def lookup_provider_policy(
    by_provider: Mapping[str, ProviderToolPolicy], provider: str | None, model: str | None
) -> ProviderToolPolicy | None:
    """Find the byProvider entry: `provider/model` first, then `provider` (B7).

    A model id that already contains `/` is used as-is, so provider `openrouter` with
    model `anthropic/claude-x` looks up `anthropic/claude-x`, then `openrouter`. Entries
    are never merged. Keys differing only by case or whitespace: the last one wins.
    """
    provider_key = js_trim(provider or "").lower()
    if not provider_key or not by_provider:
        return None
    lookup = {js_trim(key).lower(): entry for key, entry in by_provider.items()}
    lookup.pop("", None)
    model_key = js_trim(model or "").lower()
    if model_key and "/" not in model_key:
        model_key = f"{provider_key}/{model_key}"
    for candidate in (model_key, provider_key):
        if candidate and candidate in lookup:
            return lookup[candidate]
    return None


def _combined_allow(allow: NameList | None, also_allow: NameList | None) -> NameList | None:
    """B5: allow ∪ alsoAllow; alsoAllow alone means `["*", …alsoAllow]`."""
    extra = also_allow or ()
    if not extra:
        return allow
    if not allow:
        return tuple(unique(("*", *extra)))
    return tuple(unique((*allow, *extra)))


def _allow_deny_stage(label: str, policy: AnyToolPolicy | None) -> PolicyStage | None:
    if policy is None:
        return None
    allow = _combined_allow(policy.allow, policy.also_allow)
    if allow is None and policy.deny is None:
        return None
    return PolicyStage(label, allow, policy.deny)


def _profile_stage(
    label: str, profile: str | None, also_allow: NameList | None
) -> PolicyStage | None:
    # Unknown profiles are ignored at runtime; `full` has no allowlist to apply.
    base = TOOL_PROFILES.get(profile) if profile else None
    if base is None:
        return None
    allow = tuple(unique((*base, *also_allow))) if also_allow else base
    return PolicyStage(f"{label} ({profile})", allow)


def _find_agent(agents: Mapping[str, ToolPolicyConfig], agent_key: str) -> ToolPolicyConfig | None:
    for raw_id, config in agents.items():
        if normalize_agent_id(raw_id) == agent_key:
            return config
    return None


def _override(agent_value: _T | None, global_value: _T | None) -> _T | None:
    """The agent's value replaces the global one when present (even an empty list)."""
    return global_value if agent_value is None else agent_value


def policy_stages(
    global_policy: ToolPolicyConfig,
    agents: Mapping[str, ToolPolicyConfig],
    *,
    agent_id: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> tuple[PolicyStage, ...]:
    """Build the stages that apply; absent policies produce no stage.

    `agent_id=None` means no agent scope at all (not the `main` agent). Profile and
    alsoAllow of the agent *replace* the global ones; allow/deny stages all apply.
    """
    agent_key = None if agent_id is None else normalize_agent_id(agent_id)
    agent = None if agent_key is None else _find_agent(agents, agent_key)
    provider_policy = lookup_provider_policy(global_policy.by_provider, provider, model)
    agent_provider = (
        None if agent is None else lookup_provider_policy(agent.by_provider, provider, model)
    )
    local = agent or ToolPolicyConfig()
    local_provider = agent_provider or ProviderToolPolicy()
    global_provider = provider_policy or ProviderToolPolicy()
    stages = (
        _profile_stage(
            "tools.profile",
            _override(local.profile, global_policy.profile),
            _override(local.also_allow, global_policy.also_allow),
        ),
        _profile_stage(
            "tools.byProvider.profile",
            _override(local_provider.profile, global_provider.profile),
            _override(local_provider.also_allow, global_provider.also_allow),
        ),
        _allow_deny_stage("tools.allow", global_policy),
        _allow_deny_stage("tools.byProvider.allow", provider_policy),
        _allow_deny_stage(f"agents.{agent_key}.tools.allow", agent),
        _allow_deny_stage(f"agents.{agent_key}.tools.byProvider.allow", agent_provider),
    )
    return tuple(stage for stage in stages if stage is not None)


# --- resolution -------------------------------------------------------------------------


@dataclass(frozen=True)
class Removal:
    """A tool taken out by a stage, with why (`denied` or `not in allowlist`)."""

    tool: str
    stage: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"tool": self.tool, "stage": self.stage, "reason": self.reason}


@dataclass(frozen=True)
class ToolResolution:
    allowed: NameList
    warnings: NameList
    removed: tuple[Removal, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "allowed": list(self.allowed),
            "warnings": list(self.warnings),
            "removed": [removal.to_dict() for removal in self.removed],
        }


def apply_policy_stages(inventory: ToolInventory, stages: Sequence[PolicyStage]) -> ToolResolution:
    """Run the stages over the inventory, recording warnings and which stage removed what."""
    remaining = list(inventory.tools)
    warnings: list[str] = []
    removed: list[Removal] = []
    for stage in stages:
        check = check_allowlist(stage.allow, inventory)
        if check.unknown:
            warnings.append(allowlist_warning(stage.label, check))
        matcher = ToolMatcher.compile(
            inventory.expand_plugin_entries(None if check.dropped else stage.allow),
            inventory.expand_plugin_entries(stage.deny),
        )
        kept = []
        for tool in remaining:
            reason = matcher.rejection(tool.key)
            if reason is None:
                kept.append(tool)
            else:
                removed.append(Removal(tool.name, stage.label, reason))
        remaining = kept
    return ToolResolution(tuple(tool.name for tool in remaining), tuple(warnings), tuple(removed))


def resolve_tools(
    global_policy: ToolPolicyConfig,
    agents: Mapping[str, ToolPolicyConfig],
    *,
    agent_id: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    available: Sequence[str] | None = None,
    plugin_tools: Mapping[str, Sequence[str]] | None = None,
) -> ToolResolution:
    """Resolve the tools an agent run may use.

    `available` = core tools present (default: the built-in inventory); `plugin_tools` =
    loaded plugin tools by plugin id. `allowed` keeps input order, core tools first.

    Worked example: global `profile: "messaging", allow: ["slack"]` with a `slack` plugin
    tool loaded. The allowlist names only a plugin tool, so it is dropped silently (B9),
    and the profile stage has already removed `slack`: global allow never adds to a
    profile. `alsoAllow: ["slack"]` is the way to add it.
    """
    stages = policy_stages(global_policy, agents, agent_id=agent_id, provider=provider, model=model)
    return apply_policy_stages(ToolInventory.build(available, plugin_tools), stages)
