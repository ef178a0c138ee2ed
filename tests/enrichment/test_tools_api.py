"""``POST /api/tools/resolve`` (SPEC §7, §9) and the policy keys of ``GET/PUT /api/config``."""

from __future__ import annotations

from typing import Any

import pytest

from enrichment.config.changes import config_replace
from enrichment.models import EnrichmentConfig
from enrichment.pipeline.policy.inventory import BUILTIN_TOOL_NAMES

pytestmark = pytest.mark.django_db

URL = "/api/tools/resolve"

DROPPED = (
    "Ignoring allowlist so core tools remain available. "
    "Use tools.alsoAllow for additive plugin tool enablement."
)
KEPT = "These entries won't match any tool unless the plugin is enabled."

CODING = [
    "exec",
    "process",
    "read",
    "write",
    "edit",
    "apply_patch",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "memory_search",
    "memory_get",
    "image",
]


def resolve(client, payload: dict[str, Any] | None = None):
    return client.post(URL, payload or {}, content_type="application/json")


def without(names: list[str], *removed: str) -> list[str]:
    return [name for name in names if name not in removed]


# --- contract and defaults ------------------------------------------------------------------


def test_fresh_install_allows_every_built_in_tool_without_warnings(user_client) -> None:
    response = resolve(user_client)
    assert response.status_code == 200
    assert response.json() == {"allowed": list(BUILTIN_TOOL_NAMES), "warnings": []}


def test_stored_config_is_the_default(user_client) -> None:
    config_replace(document={"tools": {"profile": "messaging", "deny": ["sessions_send"]}})
    response = resolve(user_client)
    assert response.json() == {
        "allowed": ["sessions_list", "sessions_history", "session_status", "message"],
        "warnings": [],
    }


def test_given_config_replaces_the_stored_one_and_stores_nothing(user_client) -> None:
    config_replace(document={"tools": {"deny": ["exec"]}})
    response = resolve(user_client, {"config": {"tools": {"profile": "minimal"}}})
    assert response.json() == {"allowed": ["session_status"], "warnings": []}
    # The stored config still decides when no config is given.
    assert "exec" not in resolve(user_client).json()["allowed"]
    assert EnrichmentConfig.objects.get(is_active=True).tool_policy == {"deny": ["exec"]}


def test_null_config_means_the_stored_one(user_client) -> None:
    config_replace(document={"tools": {"profile": "minimal"}})
    assert resolve(user_client, {"config": None}).json()["allowed"] == ["session_status"]


def test_allowed_keeps_the_input_order_of_available(user_client) -> None:
    response = resolve(user_client, {"available": ["web_fetch", "Read", "bash", "read"]})
    assert response.json() == {"allowed": ["web_fetch", "Read", "bash", "read"], "warnings": []}


def test_empty_available_leaves_only_plugin_tools(user_client) -> None:
    response = resolve(user_client, {"available": [], "pluginTools": {"lobster": ["lobster"]}})
    assert response.json() == {"allowed": ["lobster"], "warnings": []}


# --- agent / provider / model precedence ----------------------------------------------------

PRECEDENCE_CONFIG = {
    "tools": {
        "profile": "coding",
        "deny": ["process"],
        "byProvider": {
            "openai": {"profile": "minimal"},
            "openai/gpt-5": {"deny": ["write"]},
        },
    },
    "agents": {
        "list": [
            {
                "id": "Support",
                "tools": {
                    "profile": "messaging",
                    "deny": ["sessions_send"],
                    "byProvider": {"anthropic": {"deny": ["message"]}},
                },
            },
            {"id": "coder", "tools": {"allow": ["read", "exec"]}},
        ]
    },
}


@pytest.mark.parametrize(
    ("choice", "allowed"),
    [
        ({}, without(CODING, "process")),
        ({"provider": "openai"}, ["session_status"]),
        ({"provider": " OpenAI ", "model": "GPT-5"}, without(CODING, "process", "write")),
        ({"provider": "openai", "model": "gpt-4.1"}, ["session_status"]),
        ({"provider": "mistral"}, without(CODING, "process")),
        ({"model": "gpt-5"}, without(CODING, "process")),
        (
            {"agentId": "support"},
            ["sessions_list", "sessions_history", "session_status", "message"],
        ),
        (
            {"agentId": "SUPPORT", "provider": "anthropic"},
            ["sessions_list", "sessions_history", "session_status"],
        ),
        ({"agentId": "support", "provider": "openai"}, ["session_status"]),
        ({"agentId": "coder"}, ["exec", "read", "apply_patch"]),
        ({"agentId": "ghost"}, without(CODING, "process")),
    ],
    ids=[
        "global-profile-and-deny",
        "provider-profile-intersects",
        "provider-model-entry-wins-over-provider",
        "unknown-model-falls-back-to-provider",
        "unknown-provider-no-entry",
        "model-without-provider-ignored",
        "agent-profile-replaces-global",
        "agent-by-provider-deny",
        "global-by-provider-applies-to-agent",
        "agent-allow-apply-patch-rides-on-exec",
        "unconfigured-agent-global-only",
    ],
)
def test_agent_provider_model_precedence(user_client, choice, allowed) -> None:
    for payload in ({"config": PRECEDENCE_CONFIG, **choice}, choice):
        if "config" not in payload:
            config_replace(document=PRECEDENCE_CONFIG)  # the same through the stored config
        response = resolve(user_client, payload)
        assert response.status_code == 200, response.content
        assert response.json() == {"allowed": allowed, "warnings": []}


# --- plugin tools -----------------------------------------------------------------------------

PLUGINS = {"Lobster": ["lobster", "workflow_tool"], "voice": ["voice_call"]}


@pytest.mark.parametrize(
    ("tools", "allowed"),
    [
        ({}, ["read", "exec", "session_status", "lobster", "workflow_tool", "voice_call"]),
        ({"allow": ["read", "lobster"]}, ["read", "lobster", "workflow_tool"]),
        ({"allow": ["read", "voice_call"]}, ["read", "voice_call"]),
        ({"allow": ["exec", "group:plugins"]}, ["exec", "lobster", "workflow_tool", "voice_call"]),
        # An allowlist naming only loaded plugin tools is dropped silently (B9).
        (
            {"allow": ["lobster"]},
            ["read", "exec", "session_status", "lobster", "workflow_tool", "voice_call"],
        ),
        (
            {"profile": "minimal", "alsoAllow": ["voice"]},
            ["session_status", "voice_call"],
        ),
        # Global allow never adds to a profile; alsoAllow (above) is the way.
        ({"profile": "minimal", "allow": ["session_status", "lobster"]}, ["session_status"]),
        ({"deny": ["lobster"]}, ["read", "exec", "session_status", "voice_call"]),
    ],
    ids=[
        "no-policy-core-then-plugins",
        "plugin-id-expands",
        "plugin-tool-name",
        "group-plugins",
        "plugin-only-allowlist-dropped",
        "profile-also-allow-plugin",
        "allow-cannot-add-to-profile",
        "deny-plugin-id",
    ],
)
def test_plugin_tools(user_client, tools, allowed) -> None:
    payload = {
        "config": {"tools": tools},
        "available": ["read", "exec", "session_status"],
        "pluginTools": PLUGINS,
    }
    response = resolve(user_client, payload)
    assert response.status_code == 200, response.content
    assert response.json() == {"allowed": allowed, "warnings": []}


# --- warnings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "choice", "warnings"),
    [
        (
            {"tools": {"allow": ["web_*"]}},
            {},
            [f"tools: tools.allow allowlist contains unknown entries (web_*). {DROPPED}"],
        ),
        (
            {"tools": {"allow": ["read", " Nope ", "nope", "group:bogus"]}},
            {},
            [f"tools: tools.allow allowlist contains unknown entries (nope, group:bogus). {KEPT}"],
        ),
        (
            {"tools": {"byProvider": {"openai/gpt-5": {"allow": ["read", "ghost_tool"]}}}},
            {"provider": "openai", "model": "gpt-5"},
            [
                "tools: tools.byProvider.allow allowlist contains unknown entries (ghost_tool). "
                + KEPT
            ],
        ),
        (
            {"agents": {"list": [{"id": "Help Desk", "tools": {"allow": ["mystery"]}}]}},
            {"agentId": "help desk"},
            [
                "tools: agents.help-desk.tools.allow allowlist contains unknown entries "
                f"(mystery). {DROPPED}"
            ],
        ),
        (
            {"tools": {"profile": "minimal"}},
            {"available": ["read"]},
            [
                "tools: tools.profile (minimal) allowlist contains unknown entries "
                f"(session_status). {DROPPED}"
            ],
        ),
    ],
    ids=[
        "glob-only-allowlist-dropped",
        "unknown-entries-kept",
        "by-provider-label",
        "agent-label-normalised-id",
        "profile-tool-unavailable",
    ],
)
def test_warnings_have_the_reference_wording(user_client, config, choice, warnings) -> None:
    response = resolve(user_client, {"config": config, **choice})
    assert response.status_code == 200, response.content
    assert response.json()["warnings"] == warnings


def test_unknown_glob_allowlist_keeps_every_tool(user_client) -> None:
    response = resolve(user_client, {"config": {"tools": {"allow": ["web_*"]}}})
    assert response.json()["allowed"] == list(BUILTIN_TOOL_NAMES)


# --- auth and errors --------------------------------------------------------------------------


def test_anonymous_gets_401(client) -> None:
    response = resolve(client)
    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]


def test_bearer_token_is_accepted(client, user) -> None:
    from accounts.models import ApiToken

    _token, secret = ApiToken.issue(user=user, name="gateway")
    response = client.post(
        URL, {}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    assert response.status_code == 200
    assert response.json()["allowed"] == list(BUILTIN_TOOL_NAMES)


@pytest.mark.parametrize(
    ("config", "errors"),
    [
        ({"tools": {"profile": "admin"}}, ['tools.profile: unknown profile "admin"']),
        (
            {"tools": {"allow": ["read"], "alsoAllow": ["exec"]}},
            [
                "tools: tools cannot set both allow and alsoAllow in the same scope "
                "(merge alsoAllow into allow, or remove allow and use profile + alsoAllow)"
            ],
        ),
        (
            {"agents": {"list": [{"id": "a", "tools": {"allow": ["x"], "alsoAllow": ["y"]}}]}},
            [
                "agents.list[0].tools: agent tools cannot set both allow and alsoAllow in the "
                "same scope (merge alsoAllow into allow, or remove allow and use profile + "
                "alsoAllow)"
            ],
        ),
        (
            {"tools": {"byProvider": {"openai": {"profile": "x", "deny": "exec"}}}},
            [
                'tools.byProvider["openai"].profile: unknown profile "x"',
                'tools.byProvider["openai"].deny: must be a list of strings',
            ],
        ),
        ({"tools": {"allow": ["read", 3]}}, ["tools.allow[1]: must be a string"]),
        ({"tools": {"policy": {}}}, ["tools.policy: unknown key"]),
        ({"toolz": {}}, ["config.toolz: unknown key"]),
    ],
    ids=[
        "unknown-profile",
        "allow-and-also-allow",
        "agent-allow-and-also-allow",
        "by-provider-errors",
        "non-string-entry",
        "unknown-tools-key",
        "unknown-root-key",
    ],
)
def test_invalid_given_config_is_422_naming_each_path(user_client, config, errors) -> None:
    response = resolve(user_client, {"config": config})
    assert response.status_code == 422
    body = response.json()
    assert body["detail"] == "Invalid configuration."
    assert body["errors"] == errors


def test_invalid_stored_config_is_422(user_client) -> None:
    config_replace(document={"tools": {}})
    # Rows edited around the validators (e.g. a raw SQL fix-up gone wrong).
    EnrichmentConfig.objects.filter(is_active=True).update(tool_policy={"profile": "root"})
    response = resolve(user_client)
    assert response.status_code == 422
    assert response.json()["errors"] == ['tools.profile: unknown profile "root"']


def _loc_and_msg(response) -> list[tuple[list[object], str]]:
    return [(error["loc"], error["msg"]) for error in response.json()["detail"]]


@pytest.mark.parametrize(
    ("payload", "where", "message_part"),
    [
        ({"available": ["read"] * 1001}, "available", "at most 1000 items"),
        ({"available": ["x" * 201]}, "available", "at most 200 characters"),
        ({"available": [1, None]}, "available", "valid string"),
        ({"available": "read"}, "available", "valid list"),
        ({"pluginTools": {"p": ["t"] * 1001}}, "pluginTools", "at most 1000 plugin tool names"),
        (
            {"pluginTools": {f"p{i}": ["t"] for i in range(600)} | {"q": ["t"] * 401}},
            "pluginTools",
            "in all (got 1001)",
        ),
        ({"pluginTools": {f"p{i}": [] for i in range(1001)}}, "pluginTools", "at most 1000"),
        ({"pluginTools": {"p" * 201: ["t"]}}, "pluginTools", "at most 200 characters"),
        ({"pluginTools": {"p": ["t" * 201]}}, "pluginTools", "at most 200 characters"),
        ({"pluginTools": ["lobster"]}, "pluginTools", "valid dictionary"),
        ({"agentId": "a" * 201}, "agentId", "at most 200 characters"),
        ({"provider": "p" * 201}, "provider", "at most 200 characters"),
        ({"model": "m" * 201}, "model", "at most 200 characters"),
        ({"provider": 5}, "provider", "valid string"),
        ({"config": ["tools"]}, "config", "valid dictionary"),
    ],
    ids=[
        "too-many-available",
        "available-name-too-long",
        "available-not-strings",
        "available-not-a-list",
        "one-plugin-too-many-tools",
        "plugin-tools-too-many-in-all",
        "too-many-plugins",
        "plugin-id-too-long",
        "plugin-tool-name-too-long",
        "plugin-tools-not-an-object",
        "agent-id-too-long",
        "provider-too-long",
        "model-too-long",
        "provider-not-a-string",
        "config-not-an-object",
    ],
)
def test_bad_input_is_a_clear_422(user_client, payload, where, message_part) -> None:
    response = resolve(user_client, payload)
    assert response.status_code == 422
    errors = _loc_and_msg(response)
    assert any(where in loc and message_part in msg for loc, msg in errors), errors


def test_limits_themselves_are_accepted(user_client) -> None:
    payload = {
        "available": [f"tool_{i}" for i in range(1000)],
        "pluginTools": {"big": [f"plugin_{i}" for i in range(1000)]},
        "agentId": "a" * 200,
    }
    response = resolve(user_client, payload)
    assert response.status_code == 200
    assert len(response.json()["allowed"]) == 2000


def test_oversized_tool_policy_is_refused_before_resolving(user_client) -> None:
    # 1001 globs that match nothing: the cost a hostile document could multiply.
    config = {"tools": {"allow": ["read"], "deny": [f"zz{i}*q*x" for i in range(1000)]}}
    response = resolve(user_client, {"config": config})
    assert response.status_code == 422
    assert response.json()["errors"] == [
        "tools: the allow, alsoAllow and deny lists hold 1001 entries in all "
        "(global, byProvider and agents); the limit is 1000"
    ]


def test_policy_size_counts_by_provider_and_agents(user_client) -> None:
    names = [f"t{i}" for i in range(400)]
    config = {
        "tools": {"byProvider": {"openai": {"deny": names}}, "deny": names},
        "agents": {"list": [{"id": "a", "tools": {"deny": names[:201]}}]},
    }
    response = resolve(user_client, {"config": config})
    assert response.status_code == 422
    assert "1001 entries" in response.json()["errors"][0]
    config["agents"]["list"][0]["tools"]["deny"] = names[:200]
    assert resolve(user_client, {"config": config}).status_code == 200


# --- import / export: policy keys survive PUT -> GET ------------------------------------------

POLICY_DOCUMENT = {
    "tools": {
        "links": {"models": []},
        "profile": "coding",
        "alsoAllow": ["web_fetch"],
        "deny": ["process", "group:ui"],
        "byProvider": {
            "openai/gpt-5": {"profile": "minimal", "alsoAllow": ["read"]},
            "anthropic": {"allow": ["read", "exec"], "deny": []},
        },
    },
    "agents": {
        "list": [
            {
                "id": "support",
                "tools": {
                    "profile": "messaging",
                    "allow": [],
                    "byProvider": {"openai": {"deny": ["message"]}},
                },
            },
            {"id": "quiet"},
        ]
    },
}


def test_policy_keys_survive_put_then_get(staff_client) -> None:
    put = staff_client.put("/api/config", POLICY_DOCUMENT, content_type="application/json")
    assert put.status_code == 200, put.content
    got = staff_client.get("/api/config").json()
    tools = got["tools"]
    for key in ("profile", "alsoAllow", "deny", "byProvider"):
        assert tools[key] == POLICY_DOCUMENT["tools"][key], key
    agents = {agent["id"]: agent.get("tools", {}) for agent in got["agents"]["list"]}
    assert agents["support"] == POLICY_DOCUMENT["agents"]["list"][0]["tools"]
    assert agents["quiet"] == {}
    # And the stored policy is what the resolver uses: the agent's profile replaces the
    # global one, the global alsoAllow still rides on it, the agent's openai entry denies.
    resolved = resolve(staff_client, {"agentId": "support", "provider": "openai"}).json()
    assert resolved == {
        "allowed": [
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
            "web_fetch",
        ],
        "warnings": [],
    }


def test_put_leaving_policy_keys_out_clears_them(staff_client) -> None:
    staff_client.put("/api/config", POLICY_DOCUMENT, content_type="application/json")
    staff_client.put(
        "/api/config", {"tools": {"links": {"models": []}}}, content_type="application/json"
    )
    tools = staff_client.get("/api/config").json()["tools"]
    assert not {"profile", "allow", "alsoAllow", "deny", "byProvider"} & set(tools)
    assert resolve(staff_client).json()["allowed"] == list(BUILTIN_TOOL_NAMES)
