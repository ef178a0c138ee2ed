"""Tool policy (reference notes part B, baseline era): groups, profiles, globs, deny wins,
apply_patch on exec, alsoAllow, byProvider, agents, unknown/plugin-only allowlists, validation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enrichment.pipeline.policy.inventory import (
    BUILTIN_TOOL_NAMES,
    BUILTIN_TOOLS,
    TOOL_GROUPS,
    ToolInventory,
    is_tool_allowed,
    normalize_agent_id,
    normalize_tool_name,
    tool_groups,
)
from enrichment.pipeline.policy.resolve import (
    Removal,
    ToolPolicyConfig,
    parse_agent_tool_policies,
    parse_tool_policy,
    policy_stages,
    resolve_tools,
    tool_policy_to_dict,
)

# Core tools in the reference's creation order (deliberately not the built-in order).
CORE = (
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "browser",
    "canvas",
    "nodes",
    "cron",
    "message",
    "gateway",
    "agents_list",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "memory_search",
    "memory_get",
    "web_search",
    "web_fetch",
    "image",
)
PLUGINS = {"lobster": ["lobster", "workflow_tool"]}
PLUGIN_NAMES = ("lobster", "workflow_tool")
CODING = (
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "memory_search",
    "memory_get",
    "image",
)
MESSAGING = ("message", "sessions_list", "sessions_history", "sessions_send", "session_status")
OPENCLAW = (
    "browser",
    "canvas",
    "nodes",
    "cron",
    "message",
    "gateway",
    "agents_list",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "memory_search",
    "memory_get",
    "web_search",
    "web_fetch",
    "image",
)

DROPPED = (
    "Ignoring allowlist so core tools remain available. "
    "Use tools.alsoAllow for additive plugin tool enablement."
)
KEPT = "These entries won't match any tool unless the plugin is enabled."


def dropped(label: str, entries: str) -> str:
    return f"tools: {label} allowlist contains unknown entries ({entries}). {DROPPED}"


def kept(label: str, entries: str) -> str:
    return f"tools: {label} allowlist contains unknown entries ({entries}). {KEPT}"


def ordered(*names: str, universe: Sequence[str] = CORE + PLUGIN_NAMES) -> list[str]:
    """Expected output in inventory order (so tests also pin the order)."""
    missing = set(names) - set(universe)
    assert not missing, missing
    return [name for name in universe if name in names]


def without(*names: str) -> list[str]:
    return [name for name in CORE if name not in names]


def policy(obj: Mapping[str, Any]) -> ToolPolicyConfig:
    config, errors = parse_tool_policy(obj)
    assert errors == []
    return config


def agents_of(obj: Mapping[str, Any]) -> dict[str, ToolPolicyConfig]:
    configs, errors = parse_agent_tool_policies(obj)
    assert errors == []
    return configs


def run(
    tools: Mapping[str, Any] | None = None,
    agents: Mapping[str, Any] | None = None,
    *,
    available: Sequence[str] | None = CORE,
    plugins: Mapping[str, Sequence[str]] | None = None,
    **kwargs: Any,
) -> tuple[list[str], list[str]]:
    result = resolve_tools(
        policy(tools or {}),
        agents_of(agents or {}),
        available=available,
        plugin_tools=plugins,
        **kwargs,
    )
    return list(result.allowed), list(result.warnings)


# --- B1 names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" Bash ", "exec"),
        ("BASH", "exec"),
        ("apply-patch", "apply_patch"),
        ("Apply-Patch", "apply_patch"),
        ("Read", "read"),
        ("\ufeff\u3000read\t", "read"),
        ("   ", ""),
        ("bash2", "bash2"),
        ("group:FS", "group:fs"),
    ],
    ids=lambda value: repr(value),
)
def test_tool_names_are_trimmed_lowercased_and_aliased(raw: str, expected: str) -> None:
    assert normalize_tool_name(raw) == expected


# --- B2 groups and the inventory ----------------------------------------------------------


def test_tool_groups_are_exactly_the_notes_groups() -> None:
    assert tool_groups() == {
        "group:memory": ["memory_search", "memory_get"],
        "group:web": ["web_search", "web_fetch"],
        "group:fs": ["read", "write", "edit", "apply_patch"],
        "group:runtime": ["exec", "process"],
        "group:sessions": [
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "session_status",
        ],
        "group:ui": ["browser", "canvas"],
        "group:automation": ["cron", "gateway"],
        "group:messaging": ["message"],
        "group:nodes": ["nodes"],
        "group:openclaw": list(OPENCLAW),
    }


def test_tool_groups_returns_a_copy() -> None:
    tool_groups()["group:fs"].append("exec")
    assert TOOL_GROUPS["group:fs"] == ("read", "write", "edit", "apply_patch")


def test_builtin_inventory_covers_every_grouped_tool_once() -> None:
    assert sorted(BUILTIN_TOOL_NAMES) == sorted(CORE)
    assert len(set(BUILTIN_TOOL_NAMES)) == len(BUILTIN_TOOL_NAMES)
    for tool in BUILTIN_TOOLS:
        assert tool.name in TOOL_GROUPS[tool.group]


def test_group_openclaw_excludes_fs_runtime_and_plugins() -> None:
    assert set(CORE) - set(OPENCLAW) == {"read", "write", "edit", "apply_patch", "exec", "process"}


GROUP_CASES = [
    ("memory", ["group:memory"], ordered("memory_search", "memory_get")),
    ("web", ["group:web"], ordered("web_search", "web_fetch")),
    ("fs", ["group:fs"], ordered("read", "write", "edit", "apply_patch")),
    ("runtime-carries-apply-patch", ["group:runtime"], ordered("exec", "process", "apply_patch")),
    ("sessions", ["group:sessions"], ordered(*CODING[6:11])),
    ("ui", ["group:ui"], ordered("browser", "canvas")),
    ("automation", ["group:automation"], ordered("cron", "gateway")),
    ("messaging", ["group:messaging"], ["message"]),
    ("nodes", ["group:nodes"], ["nodes"]),
    ("openclaw", ["group:openclaw"], ordered(*OPENCLAW)),
    ("case-insensitive", [" GROUP:Web "], ordered("web_search", "web_fetch")),
    (
        "groups-combine",
        ["group:fs", "browser"],
        ordered("read", "write", "edit", "apply_patch", "browser"),
    ),
    ("plugins-group", ["read", "group:plugins"], ordered("read", *PLUGIN_NAMES)),
    ("plugin-id", ["read", "LOBSTER"], ordered("read", *PLUGIN_NAMES)),
    ("plugin-tool-name", ["read", "workflow_tool"], ordered("read", "workflow_tool")),
]


@pytest.mark.parametrize(
    ("allow", "expected"),
    [case[1:] for case in GROUP_CASES],
    ids=[case[0] for case in GROUP_CASES],
)
def test_group_entries_expand(allow: list[str], expected: list[str]) -> None:
    assert run({"allow": allow}, plugins=PLUGINS) == (expected, [])


@pytest.mark.parametrize(
    ("entry", "label"),
    [("group:nope", "unknown group"), ("group:*", "groups are not globs")],
    ids=lambda value: str(value),
)
def test_unknown_group_and_group_glob_match_nothing(entry: str, label: str) -> None:
    assert run({"allow": ["read", entry]}) == (["read"], [kept("tools.allow", entry)])


# --- B3 profiles ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("minimal", ["session_status"]),
        ("coding", ordered(*CODING)),
        ("messaging", ordered(*MESSAGING)),
        ("full", list(CORE)),
        (None, list(CORE)),
    ],
    ids=["minimal", "coding", "messaging", "full", "unset"],
)
def test_profiles(profile: str | None, expected: list[str]) -> None:
    tools = {} if profile is None else {"profile": profile}
    assert run(tools) == (expected, [])


def test_coding_profile_has_no_web_browser_message_or_cron() -> None:
    allowed, _ = run({"profile": "coding"})
    assert not {"web_search", "web_fetch", "browser", "message", "cron"} & set(allowed)


def test_profile_removes_plugin_tools_unless_also_allowed() -> None:
    assert run({"profile": "coding"}, plugins=PLUGINS)[0] == ordered(*CODING)
    assert run({"profile": "coding", "alsoAllow": ["lobster"]}, plugins=PLUGINS) == (
        ordered(*CODING, *PLUGIN_NAMES),
        [],
    )


def test_unknown_profile_is_ignored_at_runtime() -> None:
    stages = policy_stages(ToolPolicyConfig(profile="Coding"), {})
    assert stages == ()
    assert resolve_tools(ToolPolicyConfig(profile="nope"), {}).allowed == BUILTIN_TOOL_NAMES


# --- B4 matching --------------------------------------------------------------------------


# A glob is never a core entry (B9), so a kept allowlist with a glob also warns about it.
MATCH_CASES: list[tuple[str, dict[str, Any], list[str], str | None]] = [
    ("glob-suffix", {"allow": ["read", "web_*"]}, ordered("read", *OPENCLAW[14:16]), "web_*"),
    (
        "glob-prefix",
        {"allow": ["read", "*_list"]},
        ordered("read", "agents_list", "sessions_list"),
        "*_list",
    ),
    ("glob-sess", {"allow": ["read", "sess*"]}, ordered("read", *CODING[6:11]), "sess*"),
    (
        "glob-two-stars",
        {"allow": ["read", "m*e*"]},
        ordered("read", "message", *CODING[11:13]),
        "m*e*",
    ),
    (
        "glob-case-insensitive",
        {"allow": ["READ", "WEB_*"]},
        ordered("read", *OPENCLAW[14:16]),
        "web_*",
    ),
    (
        "glob-on-exec-allows-apply-patch",
        {"allow": ["ex*", "read"]},
        ordered("read", "apply_patch", "exec"),
        "ex*",
    ),
    ("star-allows-all", {"allow": ["*"]}, list(CORE), None),
    ("deny-glob", {"deny": ["web_*"]}, without("web_search", "web_fetch"), None),
    ("deny-star", {"deny": ["*"]}, [], None),
    ("deny-wins-over-star", {"allow": ["*"], "deny": ["*"]}, [], None),
    ("deny-wins-exact", {"allow": ["read", "write"], "deny": ["write"]}, ["read"], None),
    (
        "deny-group",
        {"allow": ["group:fs"], "deny": ["write"]},
        ordered("read", "edit", "apply_patch"),
        None,
    ),
    ("deny-alias", {"deny": ["BASH"]}, without("exec"), None),
    ("deny-case", {"deny": [" Browser "]}, without("browser"), None),
    ("empty-allow-restricts-nothing", {"allow": []}, list(CORE), None),
    ("blank-entries-ignored", {"allow": ["", "  "], "deny": [""]}, list(CORE), None),
    ("exec-allows-apply-patch", {"allow": ["exec"]}, ordered("apply_patch", "exec"), None),
    ("bash-allows-apply-patch", {"allow": ["bash"]}, ordered("apply_patch", "exec"), None),
    ("apply-patch-deny-wins", {"allow": ["exec"], "deny": ["apply_patch"]}, ["exec"], None),
    ("apply-patch-alias", {"allow": ["apply-patch"]}, ["apply_patch"], None),
    # Quirk kept from the reference: apply_patch rides on exec *matching allow*, even when
    # exec itself is denied in the same policy.
    (
        "exec-denied-apply-patch-stays",
        {"allow": ["exec", "read"], "deny": ["exec"]},
        ordered("read", "apply_patch"),
        None,
    ),
]


@pytest.mark.parametrize(
    ("tools", "expected", "unknown"),
    [case[1:] for case in MATCH_CASES],
    ids=[case[0] for case in MATCH_CASES],
)
def test_matching(tools: dict[str, Any], expected: list[str], unknown: str | None) -> None:
    warnings = [] if unknown is None else [kept("tools.allow", unknown)]
    assert run(tools) == (expected, warnings)


@pytest.mark.parametrize(
    "entry",
    ["web?fetch", "web.fetch", "(*", "[a-z]*", "web_+", "^read$", "read|write", "\\d*"],
    ids=lambda value: repr(value),
)
def test_only_star_is_special_in_globs(entry: str) -> None:
    assert run({"allow": ["read", entry]}) == (["read"], [kept("tools.allow", entry.lower())])


@pytest.mark.parametrize(
    ("name", "allow", "deny", "expected"),
    [
        ("web_fetch", ["web_*"], None, True),
        ("web_search", None, ["web_*"], False),
        ("apply_patch", ["exec"], None, True),
        ("apply_patch", ["group:runtime"], None, True),
        ("apply_patch", ["exec"], ["apply_patch"], False),
        ("Bash", ["exec"], None, True),
        ("exec", ["*"], ["*"], False),
        ("read", None, None, True),
        ("read", [], [], True),
        ("web.fetch", ["web?fetch"], None, False),
        ("web\nfetch", ["web*fetch"], None, True),
        ("aba", ["ab*ba"], None, False),
        ("abba", ["ab*ba"], None, True),
        ("abxba", ["ab*ba"], None, True),
    ],
    ids=lambda value: repr(value),
)
def test_is_tool_allowed_single_policy(
    name: str, allow: list[str] | None, deny: list[str] | None, expected: bool
) -> None:
    assert is_tool_allowed(name, allow=allow, deny=deny) is expected


# --- B5 alsoAllow ---------------------------------------------------------------------------


ALSO_ALLOW_CASES = [
    (
        "profile-plus-also-allow",
        {"profile": "coding", "alsoAllow": ["web_fetch"]},
        None,
        ordered(*CODING, "web_fetch"),
        [],
    ),
    (
        "also-allow-alone-restricts-nothing",
        {"alsoAllow": ["lobster"]},
        PLUGINS,
        list(CORE + PLUGIN_NAMES),
        [],
    ),
    (
        "empty-allow-plus-also-allow-restricts-nothing",
        {"allow": [], "alsoAllow": ["read"]},
        None,
        list(CORE),
        [],
    ),
    (
        "unloaded-also-allow-warns-at-profile-and-global-stage",
        {"profile": "coding", "alsoAllow": ["lobster"]},
        None,
        ordered(*CODING),
        [kept("tools.profile (coding)", "lobster"), kept("tools.allow", "lobster")],
    ),
    (
        "docs-messaging-plus-slack-discord-allow-is-dropped",
        {"profile": "messaging", "allow": ["slack", "discord"]},
        None,
        ordered(*MESSAGING),
        [dropped("tools.allow", "slack, discord")],
    ),
    (
        "global-allow-cannot-add-to-profile",
        {"profile": "messaging", "allow": ["slack"]},
        {"slack": ["slack"]},
        ordered(*MESSAGING),
        [],
    ),
    (
        "also-allow-adds-plugin-to-profile",
        {"profile": "messaging", "alsoAllow": ["slack"]},
        {"slack": ["slack"]},
        ordered(*MESSAGING, "slack", universe=CORE + ("slack",)),
        [],
    ),
    (
        "docs-coding-deny-runtime",
        {"profile": "coding", "deny": ["group:runtime"]},
        None,
        ordered(*[name for name in CODING if name not in ("exec", "process")]),
        [],
    ),
]


@pytest.mark.parametrize(
    ("tools", "plugins", "expected", "warnings"),
    [case[1:] for case in ALSO_ALLOW_CASES],
    ids=[case[0] for case in ALSO_ALLOW_CASES],
)
def test_also_allow(
    tools: dict[str, Any],
    plugins: dict[str, list[str]] | None,
    expected: list[str],
    warnings: list[str],
) -> None:
    assert run(tools, plugins=plugins) == (expected, warnings)


def test_also_allow_warning_full_text() -> None:
    _, warnings = run({"profile": "messaging", "allow": ["slack", "discord"]})
    assert warnings == [
        "tools: tools.allow allowlist contains unknown entries (slack, discord). Ignoring "
        "allowlist so core tools remain available. Use tools.alsoAllow for additive plugin "
        "tool enablement."
    ]


# --- B7 byProvider ------------------------------------------------------------------------


ANTIGRAVITY = {"profile": "coding", "byProvider": {"google-antigravity": {"profile": "minimal"}}}
FLAKY = {
    "allow": ["group:fs", "group:runtime", "sessions_list"],
    "byProvider": {"openai/gpt-5.2": {"allow": ["group:fs", "sessions_list"]}},
}
LAYERED = {"byProvider": {"openai": {"deny": ["read"]}, "openai/gpt-5.2": {"deny": ["write"]}}}
ROUTER = {
    "byProvider": {
        "anthropic/claude-3": {"deny": ["exec"]},
        "openrouter/anthropic/claude-3": {"deny": ["read"]},
        "openrouter": {"deny": ["write"]},
    }
}
FS = ("read", "write", "edit", "apply_patch")

PROVIDER_CASES = [
    ("docs-antigravity-minimal", ANTIGRAVITY, "google-antigravity", None, ["session_status"]),
    ("docs-antigravity-other-provider", ANTIGRAVITY, "anthropic", None, ordered(*CODING)),
    ("no-provider-no-lookup", ANTIGRAVITY, None, None, ordered(*CODING)),
    ("blank-provider-no-lookup", ANTIGRAVITY, "   ", None, ordered(*CODING)),
    ("docs-flaky-model", FLAKY, "openai", "gpt-5.2", ordered(*FS, "sessions_list")),
    (
        "docs-flaky-other-model",
        FLAKY,
        "openai",
        "gpt-4",
        ordered(*FS, "exec", "process", "sessions_list"),
    ),
    ("keys-case-insensitive", FLAKY, " OpenAI ", "GPT-5.2", ordered(*FS, "sessions_list")),
    ("model-key-wins-not-merged", LAYERED, "openai", "gpt-5.2", without("write")),
    ("provider-key-fallback", LAYERED, "openai", "gpt-4", without("read")),
    ("provider-key-without-model", LAYERED, "openai", None, without("read")),
    ("slash-model-not-prefixed", ROUTER, "openrouter", "anthropic/claude-3", without("exec")),
    (
        "slash-model-falls-back-to-provider",
        ROUTER,
        "openrouter",
        "anthropic/claude-9",
        without("write"),
    ),
    ("model-without-provider-ignored", LAYERED, None, "gpt-5.2", list(CORE)),
    (
        "provider-profile-intersects-global-profile",
        {"profile": "coding", "byProvider": {"openai": {"profile": "messaging"}}},
        "openai",
        None,
        ordered(*MESSAGING[1:]),
    ),
    (
        "provider-profile-with-also-allow",
        {"byProvider": {"openai": {"profile": "minimal", "alsoAllow": ["web_fetch"]}}},
        "openai",
        None,
        ordered("session_status", "web_fetch"),
    ),
    (
        "provider-keys-differing-in-case-last-wins",
        {"byProvider": {"openai": {"deny": ["read"]}, "OpenAI": {"deny": ["write"]}}},
        "openai",
        None,
        without("write"),
    ),
]


@pytest.mark.parametrize(
    ("tools", "provider", "model", "expected"),
    [case[1:] for case in PROVIDER_CASES],
    ids=[case[0] for case in PROVIDER_CASES],
)
def test_by_provider(
    tools: dict[str, Any], provider: str | None, model: str | None, expected: list[str]
) -> None:
    assert run(tools, provider=provider, model=model) == (expected, [])


def test_by_provider_warning_labels() -> None:
    tools = {"byProvider": {"openai": {"profile": "minimal", "allow": ["read", "nope"]}}}
    allowed, warnings = run(tools, provider="openai", available=("read", "exec"))
    assert allowed == ["read"]
    assert warnings == [
        dropped("tools.byProvider.profile (minimal)", "session_status"),
        kept("tools.byProvider.allow", "nope"),
    ]


# --- B6 agents ----------------------------------------------------------------------------


SUPPORT = {"support": {"profile": "messaging", "allow": ["slack"]}}
SUPPORT_PROVIDER = {
    "support": {"byProvider": {"google-antigravity": {"allow": ["message", "sessions_list"]}}}
}

AGENT_CASES: list[
    tuple[str, dict[str, Any], dict[str, Any], str | None, str | None, list[str], list[str]]
] = [
    (
        "docs-support-messaging",
        {"profile": "coding"},
        SUPPORT,
        "support",
        None,
        ordered(*MESSAGING),
        [dropped("agents.support.tools.allow", "slack")],
    ),
    (
        "no-agent-id-no-agent-scope",
        {"profile": "coding"},
        SUPPORT,
        None,
        None,
        ordered(*CODING),
        [],
    ),
    ("unconfigured-agent", {"profile": "coding"}, SUPPORT, "other", None, ordered(*CODING), []),
    (
        "agent-id-normalised",
        {"profile": "coding"},
        SUPPORT,
        "  SUPPORT ",
        None,
        ordered(*MESSAGING),
        [dropped("agents.support.tools.allow", "slack")],
    ),
    (
        "config-id-normalised",
        {},
        {"Support Team": {"deny": ["read"]}},
        "support-team",
        None,
        without("read"),
        [],
    ),
    (
        "docs-agent-by-provider",
        {},
        SUPPORT_PROVIDER,
        "support",
        "google-antigravity",
        ordered("message", "sessions_list"),
        [],
    ),
    ("agent-by-provider-other-provider", {}, SUPPORT_PROVIDER, "support", "openai", list(CORE), []),
    (
        "agent-allow-cannot-reenable-global-deny",
        {"deny": ["browser"]},
        {"a": {"allow": ["browser", "read"]}},
        "a",
        None,
        ["read"],
        [],
    ),
    (
        "allow-stages-intersect",
        {"allow": ["read", "exec"]},
        {"a": {"allow": ["read", "browser"]}},
        "a",
        None,
        ["read"],
        [],
    ),
    (
        "agent-also-allow-replaces-global",
        {"profile": "minimal", "alsoAllow": ["web_fetch"]},
        {"a": {"alsoAllow": ["browser"]}},
        "a",
        None,
        ordered("browser", "session_status"),
        [],
    ),
    (
        "agent-empty-also-allow-replaces-global",
        {"profile": "minimal", "alsoAllow": ["web_fetch"]},
        {"a": {"alsoAllow": []}},
        "a",
        None,
        ["session_status"],
        [],
    ),
    (
        "agent-full-profile-replaces-minimal",
        {"profile": "minimal"},
        {"a": {"profile": "full"}},
        "a",
        None,
        list(CORE),
        [],
    ),
    (
        "agent-provider-profile-replaces-global-provider-profile",
        {"byProvider": {"openai": {"profile": "minimal", "deny": ["message"]}}},
        {"a": {"byProvider": {"openai": {"profile": "messaging"}}}},
        "a",
        "openai",
        ordered(*MESSAGING[1:]),
        [],
    ),
    (
        "agent-label-uses-normalised-id",
        {},
        {"My Agent!": {"allow": ["read", "nope"]}},
        "My Agent!",
        None,
        ["read"],
        [kept("agents.my-agent.tools.allow", "nope")],
    ),
    (
        "agent-by-provider-label",
        {},
        {"support": {"byProvider": {"openai": {"allow": ["read", "nope"]}}}},
        "support",
        "openai",
        ["read"],
        [kept("agents.support.tools.byProvider.allow", "nope")],
    ),
]


@pytest.mark.parametrize(
    ("tools", "agents", "agent_id", "provider", "expected", "warnings"),
    [case[1:] for case in AGENT_CASES],
    ids=[case[0] for case in AGENT_CASES],
)
def test_agents(
    tools: dict[str, Any],
    agents: dict[str, Any],
    agent_id: str | None,
    provider: str | None,
    expected: list[str],
    warnings: list[str],
) -> None:
    assert run(tools, agents, agent_id=agent_id, provider=provider) == (expected, warnings)


def test_first_matching_agent_entry_wins() -> None:
    agents = {"Ops": ToolPolicyConfig(deny=("read",)), "ops": ToolPolicyConfig(deny=("write",))}
    result = resolve_tools(ToolPolicyConfig(), agents, agent_id="ops", available=CORE)
    assert list(result.allowed) == without("read")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" Support ", "support"),
        ("", "main"),
        ("   ", "main"),
        (None, "main"),
        ("My Agent!", "my-agent"),
        ("a  b", "a-b"),
        ("!!!", "main"),
        ("--x--", "x"),
        ("_x", "_x"),
        ("ärger", "rger"),
        ("x\n", "x"),
        ("a" * 64, "a" * 64),
        ("A" * 70, "a" * 64),
        ("x" * 63 + "!y", "x" * 63 + "-"),
    ],
    ids=lambda value: repr(value)[:20],
)
def test_agent_id_normalisation(raw: str | None, expected: str) -> None:
    assert normalize_agent_id(raw) == expected


# --- B9 unknown and plugin-only allowlists --------------------------------------------------


VOICE = {"voice": ["voice_call"]}
NO_STATUS = tuple(name for name in CORE if name != "session_status")

B9_CASES: list[tuple[str, dict[str, Any], Sequence[str], Any, list[str], list[str]]] = [
    (
        "plugin-only-dropped-silently",
        {"allow": ["lobster"]},
        CORE,
        PLUGINS,
        list(CORE + PLUGIN_NAMES),
        [],
    ),
    (
        "plugins-group-dropped-silently",
        {"allow": ["group:plugins"]},
        CORE,
        PLUGINS,
        list(CORE + PLUGIN_NAMES),
        [],
    ),
    ("plugins-group-without-plugins", {"allow": ["group:plugins"]}, CORE, None, list(CORE), []),
    (
        "unloaded-plugin-dropped-with-warning",
        {"allow": ["lobster"]},
        CORE,
        None,
        list(CORE),
        [dropped("tools.allow", "lobster")],
    ),
    (
        "glob-alone-is-never-core",
        {"allow": ["web_*"]},
        CORE,
        None,
        list(CORE),
        [dropped("tools.allow", "web_*")],
    ),
    (
        "minimal-without-session-status",
        {"profile": "minimal"},
        NO_STATUS,
        None,
        list(NO_STATUS),
        [dropped("tools.profile (minimal)", "session_status")],
    ),
    (
        "core-plus-unknown-kept",
        {"allow": ["read", "lobster"]},
        CORE,
        None,
        ["read"],
        [kept("tools.allow", "lobster")],
    ),
    (
        "core-plus-plugin-kept",
        {"allow": ["lobster", "read"]},
        CORE,
        PLUGINS,
        ordered("read", *PLUGIN_NAMES),
        [],
    ),
    (
        "star-plus-unknown",
        {"allow": ["*", "lobster"]},
        CORE,
        None,
        list(CORE),
        [kept("tools.allow", "lobster")],
    ),
    (
        "unknown-entries-normalised-and-deduplicated",
        {"allow": [" Lobster", "lobster ", "LOBSTER", "read"]},
        CORE,
        None,
        ["read"],
        [kept("tools.allow", "lobster")],
    ),
    (
        "unknown-entries-keep-order",
        {"allow": ["zeta", "read", "alpha"]},
        CORE,
        None,
        ["read"],
        [kept("tools.allow", "zeta, alpha")],
    ),
    (
        "alias-reported-normalised",
        {"allow": ["Bash"]},
        ("read", "process"),
        None,
        ["read", "process"],
        [dropped("tools.allow", "exec")],
    ),
    (
        "group-with-no-available-member",
        {"allow": ["read", "group:web"]},
        ("read", "exec"),
        None,
        ["read"],
        [kept("tools.allow", "group:web")],
    ),
    (
        "unavailable-exec-still-carries-apply-patch",
        {"allow": ["read", "exec"]},
        ("read", "apply_patch", "write"),
        None,
        ["read", "apply_patch"],
        [kept("tools.allow", "exec")],
    ),
    (
        "dropped-allowlist-keeps-deny",
        {"allow": ["nope"], "deny": ["read"]},
        CORE,
        None,
        without("read"),
        [dropped("tools.allow", "nope")],
    ),
    (
        "plugin-id-only-dropped-silently",
        {"allow": ["voice"]},
        CORE,
        VOICE,
        [*CORE, "voice_call"],
        [],
    ),
    ("plugin-id-with-core", {"allow": ["read", "Voice"]}, CORE, VOICE, ["read", "voice_call"], []),
    ("deny-plugin-id", {"deny": ["lobster"]}, CORE, PLUGINS, list(CORE), []),
    ("deny-plugins-group", {"deny": ["group:plugins"]}, CORE, PLUGINS, list(CORE), []),
    (
        "deny-one-plugin-tool",
        {"deny": ["workflow_tool"]},
        CORE,
        PLUGINS,
        list(CORE) + ["lobster"],
        [],
    ),
]


@pytest.mark.parametrize(
    ("tools", "available", "plugins", "expected", "warnings"),
    [case[1:] for case in B9_CASES],
    ids=[case[0] for case in B9_CASES],
)
def test_unknown_and_plugin_only_allowlists(
    tools: dict[str, Any],
    available: Sequence[str],
    plugins: dict[str, list[str]] | None,
    expected: list[str],
    warnings: list[str],
) -> None:
    assert run(tools, available=available, plugins=plugins) == (expected, warnings)


def test_kept_warning_full_text() -> None:
    _, warnings = run({"allow": ["read", "lobster"]})
    assert warnings == [
        "tools: tools.allow allowlist contains unknown entries (lobster). "
        "These entries won't match any tool unless the plugin is enabled."
    ]


# --- inventory, ordering, removals ----------------------------------------------------------


def test_allowed_keeps_input_order_core_then_plugins() -> None:
    result = resolve_tools(
        ToolPolicyConfig(),
        {},
        available=["web_fetch", "read", "exec"],
        plugin_tools={"zeta": ["z_tool"], "alpha": ["a_tool"]},
    )
    assert result.allowed == ("web_fetch", "read", "exec", "z_tool", "a_tool")


def test_default_inventory_is_the_builtin_tools() -> None:
    assert resolve_tools(ToolPolicyConfig(), {}).allowed == BUILTIN_TOOL_NAMES


def test_inventory_skips_blank_and_duplicate_names() -> None:
    inventory = ToolInventory.build(["read", " ", "read", "Bash"], {" Lob ": ["read", "lobster"]})
    assert [(tool.name, tool.key, tool.plugin_id) for tool in inventory.tools] == [
        ("read", "read", None),
        ("Bash", "exec", None),
        ("lobster", "lobster", "lob"),
    ]


def test_removed_names_the_stage_and_reason() -> None:
    tools = policy({"profile": "coding", "deny": ["exec"]})
    agents = agents_of({"a": {"allow": ["read"]}})
    result = resolve_tools(
        tools, agents, agent_id="a", available=("read", "exec", "browser", "write")
    )
    assert result.allowed == ("read",)
    assert result.removed == (
        Removal("browser", "tools.profile (coding)", "not in allowlist"),
        Removal("exec", "tools.allow", "denied"),
        Removal("write", "agents.a.tools.allow", "not in allowlist"),
    )
    # Baseline quirk: profile entries with nothing available are reported as unknown.
    profile_warning = kept("tools.profile (coding)", "group:sessions, group:memory, image")
    assert result.warnings == (profile_warning,)
    assert result.to_dict() == {
        "allowed": ["read"],
        "warnings": [profile_warning],
        "removed": [
            {"tool": "browser", "stage": "tools.profile (coding)", "reason": "not in allowlist"},
            {"tool": "exec", "stage": "tools.allow", "reason": "denied"},
            {"tool": "write", "stage": "agents.a.tools.allow", "reason": "not in allowlist"},
        ],
    }


def test_stage_order_and_labels() -> None:
    tools = policy(
        {
            "profile": "coding",
            "allow": ["read"],
            "byProvider": {"openai": {"profile": "minimal", "deny": ["x"]}},
        }
    )
    agents = agents_of({"a": {"deny": ["y"], "byProvider": {"openai": {"deny": ["z"]}}}})
    stages = policy_stages(tools, agents, agent_id="a", provider="openai")
    assert [stage.label for stage in stages] == [
        "tools.profile (coding)",
        "tools.byProvider.profile (minimal)",
        "tools.allow",
        "tools.byProvider.allow",
        "agents.a.tools.allow",
        "agents.a.tools.byProvider.allow",
    ]


def test_output_names_are_the_input_names() -> None:
    result = resolve_tools(policy({"allow": ["exec"]}), {}, available=["Bash", "read"])
    assert result.allowed == ("Bash",)


# --- validation ---------------------------------------------------------------------------


BOTH = (
    "cannot set both allow and alsoAllow in the same scope "
    "(merge alsoAllow into allow, or remove allow and use profile + alsoAllow)"
)

VALIDATION_CASES: list[tuple[str, Any, list[tuple[str, str]]]] = [
    ("unknown-profile", {"profile": "x"}, [("tools.profile", 'unknown profile "x"')]),
    (
        "profile-is-case-sensitive",
        {"profile": "Coding"},
        [("tools.profile", 'unknown profile "Coding"')],
    ),
    ("profile-not-string", {"profile": 5}, [("tools.profile", "must be a string")]),
    ("profile-null", {"profile": None}, [("tools.profile", "must be a string")]),
    (
        "provider-unknown-profile",
        {"byProvider": {"openai/gpt-4": {"profile": "x"}}},
        [('tools.byProvider["openai/gpt-4"].profile', 'unknown profile "x"')],
    ),
    (
        "allow-and-also-allow",
        {"allow": ["read"], "alsoAllow": ["exec"]},
        [("tools", f"tools {BOTH}")],
    ),
    (
        "provider-allow-and-also-allow",
        {"byProvider": {"openai": {"allow": ["read"], "alsoAllow": ["exec"]}}},
        [('tools.byProvider["openai"]', f"tools.byProvider policy {BOTH}")],
    ),
    ("empty-allow-with-also-allow-is-fine", {"allow": [], "alsoAllow": ["exec"]}, []),
    ("allow-with-empty-also-allow-is-fine", {"allow": ["read"], "alsoAllow": []}, []),
    ("unknown-key", {"allwo": ["read"]}, [("tools.allwo", "unknown key")]),
    (
        "provider-key-not-string",
        {"byProvider": {1: {}}},
        [("tools.byProvider", "object keys must be strings")],
    ),
    (
        "nested-by-provider-rejected",
        {"byProvider": {"openai": {"byProvider": {}}}},
        [('tools.byProvider["openai"].byProvider', "unknown key")],
    ),
    ("allow-not-list", {"allow": "read"}, [("tools.allow", "must be a list of strings")]),
    ("deny-null", {"deny": None}, [("tools.deny", "must be a list of strings")]),
    (
        "allow-items-not-strings",
        {"allow": [1, "read", None]},
        [("tools.allow[0]", "must be a string"), ("tools.allow[2]", "must be a string")],
    ),
    (
        "by-provider-not-object",
        {"byProvider": ["openai"]},
        [("tools.byProvider", "must be an object")],
    ),
    (
        "provider-entry-not-object",
        {"byProvider": {"openai": "minimal"}},
        [('tools.byProvider["openai"]', "must be an object")],
    ),
    (
        "provider-key-escaped",
        {"byProvider": {'we"ird': {"profile": "x"}}},
        [('tools.byProvider["we\\"ird"].profile', 'unknown profile "x"')],
    ),
    ("not-an-object", ["read"], [("tools", "must be an object")]),
    (
        "valid-config",
        {
            "profile": "coding",
            "alsoAllow": ["web_fetch"],
            "deny": ["exec"],
            "byProvider": {"openai/gpt-5.2": {"profile": "minimal", "allow": ["read"]}},
        },
        [],
    ),
]


@pytest.mark.parametrize(
    ("obj", "errors"),
    [case[1:] for case in VALIDATION_CASES],
    ids=[case[0] for case in VALIDATION_CASES],
)
def test_validation(obj: Any, errors: list[tuple[str, str]]) -> None:
    assert parse_tool_policy(obj)[1] == errors


def test_error_renders_as_path_colon_message() -> None:
    _, errors = parse_tool_policy({"byProvider": {"openai/gpt-4": {"profile": "x"}}})
    assert [f"{path}: {message}" for path, message in errors] == [
        'tools.byProvider["openai/gpt-4"].profile: unknown profile "x"'
    ]


def test_agent_validation_paths_and_wording() -> None:
    _, errors = parse_agent_tool_policies(
        {
            "main": {"profile": "minimal"},
            "support": {
                "profile": "Coding",
                "allow": ["read"],
                "alsoAllow": ["exec"],
                "byProvider": {"openai": {"allow": ["a"], "alsoAllow": ["b"]}},
            },
            "broken": "nope",
        }
    )
    assert errors == [
        ("agents.list[1].tools.profile", 'unknown profile "Coding"'),
        ("agents.list[1].tools", f"agent tools {BOTH}"),
        ('agents.list[1].tools.byProvider["openai"]', f"tools.byProvider policy {BOTH}"),
        ("agents.list[2].tools", "must be an object"),
    ]


def test_sibling_keys_can_be_delegated() -> None:
    obj = {"profile": "coding", "links": {"enabled": True}, "media": {}}
    assert parse_tool_policy(obj)[1] == [
        ("tools.links", "unknown key"),
        ("tools.media", "unknown key"),
    ]
    config, errors = parse_tool_policy(obj, other_keys=("links", "media", "web"))
    assert errors == []
    assert config == ToolPolicyConfig(profile="coding")


def test_invalid_parts_are_left_out_of_the_returned_config() -> None:
    config, errors = parse_tool_policy({"profile": "x", "allow": [1, "read"], "deny": "exec"})
    assert len(errors) == 3
    assert config == ToolPolicyConfig(allow=("read",))


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"allow": []},
        {"profile": "full", "alsoAllow": ["lobster"], "deny": []},
        {"allow": ["Bash", " read "], "byProvider": {"OpenAI/GPT-5.2": {"alsoAllow": ["x"]}}},
        {"byProvider": {"openai": {}}},
    ],
    ids=["empty", "empty-allow", "profile-also-deny", "raw-names-kept", "empty-provider-entry"],
)
def test_round_trip(obj: dict[str, Any]) -> None:
    config = policy(obj)
    assert tool_policy_to_dict(config) == obj
    assert policy(tool_policy_to_dict(config)) == config


def test_config_is_frozen() -> None:
    config = policy({"byProvider": {"openai": {"deny": ["read"]}}})
    with pytest.raises(TypeError):
        config.by_provider["x"] = config.by_provider["openai"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        config.profile = "coding"  # type: ignore[misc]


# --- hostile inputs and properties ----------------------------------------------------------


def test_hostile_names_do_not_break_matching() -> None:
    weird = ["\x00", "a" * 10_000, "🙂*", "group:", "(?P<x>)", "\\"]
    allowed, warnings = run({"allow": ["read", *weird], "deny": weird})
    assert allowed == ["read"]
    assert warnings == [kept("tools.allow", ", ".join(name.lower() for name in weird))]
    # A glob of only stars matches every name, like `*` itself.
    assert run({"deny": ["*" * 500]}) == ([], [])


def test_many_stars_glob_is_not_catastrophic() -> None:
    assert is_tool_allowed("a" * 5_000 + "b", allow=["*a*a*a*a*a*a*a*a*a*a*c"]) is False


NAME_POOL = [
    *CORE,
    *PLUGIN_NAMES,
    *TOOL_GROUPS,
    "group:plugins",
    "lobster",
    "*",
    "web_*",
    "*s*",
    "nope",
    "Bash",
]
entry_lists = st.lists(st.sampled_from(NAME_POOL), max_size=5)
policies = st.fixed_dictionaries({}, optional={"allow": entry_lists, "deny": entry_lists})
inventories = st.lists(st.sampled_from(CORE), unique=True)


@given(policies, policies, inventories)
def test_every_tool_is_either_allowed_or_removed_once(
    tools: dict[str, Any], agent: dict[str, Any], available: list[str]
) -> None:
    result = resolve_tools(
        policy(tools),
        agents_of({"a": agent}),
        agent_id="a",
        available=available,
        plugin_tools=PLUGINS,
    )
    inventory = [*available, *PLUGIN_NAMES]
    removed = [removal.tool for removal in result.removed]
    assert sorted([*result.allowed, *removed]) == sorted(inventory)
    assert list(result.allowed) == [name for name in inventory if name in result.allowed]


@given(policies, st.sampled_from(NAME_POOL), inventories)
def test_adding_a_deny_entry_never_adds_tools(
    tools: dict[str, Any], extra: str, available: list[str]
) -> None:
    before = resolve_tools(policy(tools), {}, available=available, plugin_tools=PLUGINS)
    stricter = {**tools, "deny": [*tools.get("deny", []), extra]}
    after = resolve_tools(policy(stricter), {}, available=available, plugin_tools=PLUGINS)
    assert set(after.allowed) <= set(before.allowed)


@given(policies, inventories)
def test_agent_deny_star_removes_everything(tools: dict[str, Any], available: list[str]) -> None:
    result = resolve_tools(
        policy(tools), agents_of({"a": {"deny": ["*"]}}), agent_id="a", available=available
    )
    assert result.allowed == ()


def test_docstring_examples_hold() -> None:
    import doctest

    from enrichment.pipeline.policy import inventory as inventory_module
    from enrichment.pipeline.policy import resolve as policy_module

    for module in (policy_module, inventory_module):
        assert doctest.testmod(module).failed == 0
