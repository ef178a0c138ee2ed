from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enrichment.pipeline.config.model import (
    DEFAULT_USER_AGENT,
    AgentConfig,
    Config,
    ConfigError,
    LinkModel,
    LinksConfig,
    LinksOverride,
    WebFetchConfig,
    config_to_dict,
    default_config,
    effective_links_config,
    effective_media_config,
)
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.config.scope import ScopeConfig, ScopeMatch, ScopeRule
from enrichment.pipeline.net.ssrf import SsrfPolicy

LINK_MODEL = {"command": "link-understand", "args": ["--url", "{{LinkUrl}}"]}

# Examples from the link-understanding seed document.
SEED_FULL = {
    "tools": {
        "links": {
            "enabled": True,
            "maxLinks": 3,
            "timeoutSeconds": 30,
            "scope": {
                "default": "allow",
                "rules": [{"action": "deny", "match": {"chatType": "group"}}],
            },
            "models": [
                {
                    "command": "link-understand",
                    "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
                    "timeoutSeconds": 20,
                }
            ],
        }
    }
}
SEED_ONLY_DIRECT = {
    "tools": {
        "links": {
            "scope": {
                "default": "deny",
                "rules": [{"action": "allow", "match": {"chatType": "direct"}}],
            },
            "models": [LINK_MODEL],
        }
    }
}
SEED_AGENT = {
    "agents": {
        "list": [
            {
                "id": "support",
                "tools": {"links": {"enabled": True, "maxLinks": 2, "models": [LINK_MODEL]}},
            }
        ]
    }
}
SEED_FALLBACK = {
    "tools": {
        "links": {
            "models": [LINK_MODEL, {"command": "link-backup", "args": ["{{LinkUrl}}"]}],
        }
    }
}
FULL_DOC: dict[str, Any] = {
    "tools": {
        "links": {
            "enabled": True,
            "maxLinks": 2,
            "timeoutSeconds": 12.5,
            "concurrency": 1,
            "scope": {
                "default": "deny",
                "rules": [{"action": "allow", "match": {"channel": "slack"}}],
            },
            "models": [
                {"type": "cli", "command": "a", "args": ["{{ LinkUrl }}"], "timeoutSeconds": 5}
            ],
        },
        "media": {"concurrency": 2, "image": {"enabled": False}},
        "web": {
            "fetch": {
                "maxChars": 1000,
                "maxCharsCap": 2000,
                "maxResponseBytes": 100000,
                "timeoutSeconds": 9,
                "cacheTtlMinutes": 0,
                "maxRedirects": 0,
                "userAgent": "TestAgent/1",
                "ssrfPolicy": {"allowPrivateNetwork": True, "allowedHostnames": ["*.corp.example"]},
            }
        },
        "profile": "coding",
        "allow": ["web_fetch"],
        "deny": ["exec"],
        "byProvider": {"openai/gpt-5": {"profile": "minimal"}},
    },
    "agents": {
        "list": [
            {
                "id": "support",
                "tools": {
                    "links": {"maxLinks": 1, "models": [{"command": "b"}]},
                    "media": {"audio": {"enabled": True}},
                    "alsoAllow": ["browser"],
                },
            },
            {"id": "quiet", "tools": {"links": {"enabled": False}}},
            {"id": "plain"},
        ]
    },
}


def test_default_config_ships_the_builtin_cli() -> None:
    config = default_config()
    assert config.links.models == (
        LinkModel("link-understand", ("--url", "{{LinkUrl}}", "--format", "markdown")),
    )
    assert config.links.is_enabled
    assert config_to_dict(config)["tools"]["links"] == {
        "maxLinks": 3,
        "timeoutSeconds": 30,
        "models": [
            {
                "type": "cli",
                "command": "link-understand",
                "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
            }
        ],
    }


def test_empty_document_gives_defaults() -> None:
    config = parse_config({})
    assert config == Config()
    assert (
        config.links.max_links,
        config.links.timeout_seconds,
        config.links.effective_concurrency,
    ) == (3, 30, 3)
    assert not config.links.is_enabled  # no models configured
    assert config.web_fetch == WebFetchConfig()
    assert (config.web_fetch.max_chars, config.web_fetch.max_response_bytes) == (50_000, 2_000_000)
    assert (config.web_fetch.cache_ttl_minutes, config.web_fetch.max_redirects) == (15, 3)
    assert config.web_fetch.user_agent == DEFAULT_USER_AGENT
    assert config.web_fetch.ssrf_policy == SsrfPolicy()


def test_seed_full_example() -> None:
    links = parse_config(SEED_FULL).links
    assert links == LinksConfig(
        enabled=True,
        max_links=3,
        timeout_seconds=30,
        scope=ScopeConfig("allow", (ScopeRule("deny", ScopeMatch(chat_type="group")),)),
        models=(
            LinkModel("link-understand", ("--url", "{{LinkUrl}}", "--format", "markdown"), 20),
        ),
    )


@pytest.mark.parametrize(
    ("links", "enabled"),
    [
        ({}, False),
        ({"models": [LINK_MODEL]}, True),
        ({"enabled": True}, True),
        ({"enabled": False, "models": [LINK_MODEL]}, False),
        ({"models": []}, False),
    ],
    ids=["nothing", "models-enable", "explicit-true", "explicit-false-wins", "empty-models"],
)
def test_enabled_defaults_to_having_models(links: dict[str, Any], enabled: bool) -> None:
    assert parse_config({"tools": {"links": links}}).links.is_enabled is enabled


def test_concurrency_defaults_to_max_links() -> None:
    assert parse_config({"tools": {"links": {"maxLinks": 2}}}).links.effective_concurrency == 2
    assert (
        parse_config(
            {"tools": {"links": {"maxLinks": 2, "concurrency": 1}}}
        ).links.effective_concurrency
        == 1
    )


INVALID_DOCS: list[tuple[dict[str, Any], list[str]]] = [
    ({"tool": {}}, ["config.tool: unknown key"]),
    ({"tools": {"linkz": {}}}, ["tools.linkz: unknown key"]),
    ({"tools": []}, ["tools: must be an object"]),
    ({"tools": {"links": {"maxLink": 3}}}, ["tools.links.maxLink: unknown key"]),
    ({"tools": {"links": {"maxLinks": 0}}}, ["tools.links.maxLinks: must be at least 1"]),
    ({"tools": {"links": {"maxLinks": "3"}}}, ["tools.links.maxLinks: must be an integer"]),
    ({"tools": {"links": {"maxLinks": True}}}, ["tools.links.maxLinks: must be an integer"]),
    ({"tools": {"links": {"maxLinks": 2.5}}}, ["tools.links.maxLinks: must be an integer"]),
    (
        {"tools": {"links": {"timeoutSeconds": 0.5}}},
        ["tools.links.timeoutSeconds: must be at least 1"],
    ),
    (
        {"tools": {"links": {"timeoutSeconds": math.inf}}},
        ["tools.links.timeoutSeconds: must be a number"],
    ),
    (
        {"tools": {"links": {"timeoutSeconds": None}}},
        ["tools.links.timeoutSeconds: must be a number"],
    ),
    ({"tools": {"links": {"concurrency": 0}}}, ["tools.links.concurrency: must be at least 1"]),
    ({"tools": {"links": {"enabled": "yes"}}}, ["tools.links.enabled: must be true or false"]),
    (
        {
            "tools": {
                "links": {
                    "scope": {
                        "rules": [
                            {"action": "allow", "match": {"channel": "slack"}},
                            {"action": "deny"},
                            {"action": "deny", "match": {"chatType": "room"}},
                        ]
                    }
                }
            }
        },
        ['tools.links.scope.rules[2].match.chatType: unknown chat type "room"'],
    ),
    (
        {"tools": {"links": {"scope": {"rules": [{"action": "block"}]}}}},
        ['tools.links.scope.rules[0].action: unknown action "block" (expected "allow" or "deny")'],
    ),
    ({"tools": {"links": {"models": {}}}}, ["tools.links.models: must be a list"]),
    ({"tools": {"links": {"models": ["cli"]}}}, ["tools.links.models[0]: must be an object"]),
    (
        {"tools": {"links": {"models": [{"command": ""}]}}},
        ["tools.links.models[0].command: must be a non-empty string"],
    ),
    (
        {"tools": {"links": {"models": [{"command": "   "}]}}},
        ["tools.links.models[0].command: must be a non-empty string"],
    ),
    (
        {"tools": {"links": {"models": [{"args": []}]}}},
        ["tools.links.models[0].command: must be a non-empty string"],
    ),
    (
        {"tools": {"links": {"models": [{"type": "http", "command": "x"}]}}},
        ["tools.links.models[0].type: unsupported model type 'http'"],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "args": "--url"}]}}},
        ["tools.links.models[0].args: must be a list of strings"],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "args": [1]}]}}},
        ["tools.links.models[0].args[0]: must be a string"],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "args": ["--url", "{{LinkUrl"]}]}}},
        ['tools.links.models[0].args[1]: malformed template: unclosed "{{" at position 0'],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "args": ["{{Link-Url}}"]}]}}},
        ['tools.links.models[0].args[0]: malformed template: invalid placeholder "{{Link-Url}}"'],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "args": ["{{}}"]}]}}},
        ['tools.links.models[0].args[0]: malformed template: empty placeholder "{{}}"'],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "timeoutSeconds": 0}]}}},
        ["tools.links.models[0].timeoutSeconds: must be at least 1"],
    ),
    (
        {"tools": {"links": {"models": [{"command": "x", "model": "y"}]}}},
        ["tools.links.models[0].model: unknown key"],
    ),
    ({"tools": {"web": {"search": {}}}}, ["tools.web.search: unknown key"]),
    (
        {"tools": {"web": {"fetch": {"readability": True}}}},
        ["tools.web.fetch.readability: unknown key"],
    ),
    (
        {"tools": {"web": {"fetch": {"maxChars": 0}}}},
        ["tools.web.fetch.maxChars: must be at least 1"],
    ),
    (
        {"tools": {"web": {"fetch": {"maxRedirects": -1}}}},
        ["tools.web.fetch.maxRedirects: must be at least 0"],
    ),
    (
        {"tools": {"web": {"fetch": {"cacheTtlMinutes": -1}}}},
        ["tools.web.fetch.cacheTtlMinutes: must be at least 0"],
    ),
    (
        {"tools": {"web": {"fetch": {"userAgent": ""}}}},
        ["tools.web.fetch.userAgent: must be a non-empty string"],
    ),
    (
        {"tools": {"web": {"fetch": {"ssrfPolicy": []}}}},
        ["tools.web.fetch.ssrfPolicy: must be an object"],
    ),
    ({"tools": {"media": "all"}}, ["tools.media: must be an object"]),
    ({"tools": {"media": {"x": math.nan}}}, ["tools.media.x: must be a finite number"]),
    ({"tools": {"allow": [{1, 2}]}}, ["tools.allow[0]: not a JSON value (set)"]),
    ({"agents": []}, ["agents: must be an object"]),
    ({"agents": {"lst": []}}, ["agents.lst: unknown key"]),
    ({"agents": {"list": {}}}, ["agents.list: must be a list"]),
    ({"agents": {"list": [{"tools": {}}]}}, ["agents.list[0].id: must be a non-empty string"]),
    (
        {"agents": {"list": [{"id": "a"}, {"id": "a"}]}},
        ['agents.list[1].id: duplicate agent id "a"'],
    ),
    ({"agents": {"list": [{"id": "a", "name": "A"}]}}, ["agents.list[0].name: unknown key"]),
    (
        {"agents": {"list": [{"id": "a", "tools": {"web": {}}}]}},
        ["agents.list[0].tools.web: unknown key"],
    ),
    (
        {"agents": {"list": [{"id": "a", "tools": {"links": {"maxLinks": 0}}}]}},
        ["agents.list[0].tools.links.maxLinks: must be at least 1"],
    ),
    (
        {
            "agents": {
                "list": [
                    {
                        "id": "a",
                        "tools": {"links": {"scope": {"rules": [{"match": {"chatType": "room"}}]}}},
                    }
                ]
            }
        },
        ['agents.list[0].tools.links.scope.rules[0].match.chatType: unknown chat type "room"'],
    ),
]


@pytest.mark.parametrize(
    ("doc", "expected"), INVALID_DOCS, ids=[expected[0] for _doc, expected in INVALID_DOCS]
)
def test_validation_messages_name_the_path(doc: dict[str, Any], expected: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(doc)
    assert [str(issue) for issue in raised.value.errors] == expected


def test_ssrf_policy_error_is_reported_at_its_path() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"tools": {"web": {"fetch": {"ssrfPolicy": {"allowEverything": True}}}}})
    (issue,) = raised.value.errors
    assert issue.path == "tools.web.fetch.ssrfPolicy"
    assert "allowEverything" in issue.message


def test_all_issues_are_collected_over_the_document() -> None:
    doc = {
        "tools": {"links": {"maxLinks": 0, "models": [{"command": ""}]}, "bogus": 1},
        "agents": {"list": [{"id": ""}]},
    }
    with pytest.raises(ConfigError) as raised:
        parse_config(doc)
    assert [str(issue) for issue in raised.value.errors] == [
        "tools.bogus: unknown key",
        "tools.links.maxLinks: must be at least 1",
        "tools.links.models[0].command: must be a non-empty string",
        "agents.list[0].id: must be a non-empty string",
    ]
    assert "tools.bogus: unknown key; tools.links.maxLinks" in str(raised.value)


def test_non_object_document() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config([])  # type: ignore[arg-type]
    assert [str(issue) for issue in raised.value.errors] == ["config: must be an object"]


@pytest.mark.parametrize(
    "doc",
    [
        {},
        SEED_FULL,
        SEED_ONLY_DIRECT,
        SEED_AGENT,
        SEED_FALLBACK,
        FULL_DOC,
        config_to_dict(default_config()),
    ],
    ids=[
        "empty",
        "seed-full",
        "seed-only-direct",
        "seed-agent",
        "seed-fallback",
        "everything",
        "default",
    ],
)
def test_round_trip_is_identical(doc: dict[str, Any]) -> None:
    config = parse_config(doc)
    written = config_to_dict(config)
    assert parse_config(written) == config
    assert config_to_dict(parse_config(written)) == written


def test_full_document_values() -> None:
    config = parse_config(FULL_DOC)
    assert config.web_fetch.ssrf_policy == SsrfPolicy(
        allowed_hostnames=("*.corp.example",), allow_private_network=True
    )
    assert config.media == {"concurrency": 2, "image": {"enabled": False}}
    assert config.tool_policy == {
        "profile": "coding",
        "allow": ["web_fetch"],
        "deny": ["exec"],
        "byProvider": {"openai/gpt-5": {"profile": "minimal"}},
    }
    assert config.agents[0] == AgentConfig(
        id="support",
        links=LinksOverride(max_links=1, models=(LinkModel("b"),)),
        media={"audio": {"enabled": True}},
        tool_policy={"alsoAllow": ["browser"]},
    )
    assert config_to_dict(config)["agents"]["list"][2] == {"id": "plain", "tools": {}}


def test_parsing_copies_opaque_values() -> None:
    doc = copy.deepcopy(FULL_DOC)
    config = parse_config(doc)
    doc["tools"]["media"]["image"]["enabled"] = True
    doc["tools"]["allow"].append("exec")
    assert config.media == {"concurrency": 2, "image": {"enabled": False}}
    assert config.tool_policy["allow"] == ["web_fetch"]


def test_agent_override_merges_key_by_key() -> None:
    config = parse_config(FULL_DOC)
    merged = effective_links_config(config, "support")
    assert merged.max_links == 1
    assert merged.models == (LinkModel("b"),)  # replaced whole
    # inherited from the global block:
    assert (merged.enabled, merged.timeout_seconds, merged.concurrency) == (True, 12.5, 1)
    assert merged.scope == config.links.scope


def test_agent_scope_replaces_global_scope_whole() -> None:
    doc = {
        "tools": {
            "links": {
                "scope": {
                    "default": "deny",
                    "rules": [{"action": "allow", "match": {"channel": "slack"}}],
                },
                "models": [LINK_MODEL],
            }
        },
        "agents": {
            "list": [{"id": "a", "tools": {"links": {"scope": {"rules": [{"action": "deny"}]}}}}]
        },
    }
    merged = effective_links_config(parse_config(doc), "a")
    assert merged.scope == ScopeConfig("allow", (ScopeRule("deny", ScopeMatch()),))
    assert merged.models == (LinkModel("link-understand", ("--url", "{{LinkUrl}}")),)


def test_seed_agent_example_enables_support_only() -> None:
    config = parse_config(SEED_AGENT)
    assert not config.links.is_enabled
    support = effective_links_config(config, "support")
    assert support.is_enabled and support.max_links == 2 and support.effective_concurrency == 2


@pytest.mark.parametrize(
    "agent_id", [None, "unknown", "plain"], ids=["no-agent", "unknown-agent", "no-override"]
)
def test_without_an_override_the_global_block_applies(agent_id: str | None) -> None:
    config = parse_config(FULL_DOC)
    assert effective_links_config(config, agent_id) == config.links


def test_agent_can_disable_links() -> None:
    assert not effective_links_config(parse_config(FULL_DOC), "quiet").is_enabled


def test_effective_media_config_merges_key_by_key() -> None:
    config = parse_config(FULL_DOC)
    assert effective_media_config(config, "support") == {
        "concurrency": 2,
        "image": {"enabled": False},
        "audio": {"enabled": True},
    }
    assert effective_media_config(config, "plain") == config.media
    assert effective_media_config(parse_config({}), None) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["tools", "links", "models", "scope", "rules", "agents", "list", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(["tools", "agents", "x"]), JSON, max_size=3))
def test_arbitrary_documents_parse_or_raise_config_error(doc: dict[str, Any]) -> None:
    try:
        config = parse_config(doc)
    except ConfigError as error:
        assert error.errors and all(str(issue) for issue in error.errors)
    else:
        assert parse_config(config_to_dict(config)) == config


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"tools": {"profile": "superuser"}}, 'tools.profile: unknown profile "superuser"'),
        ({"tools": {"allow": ["read"], "alsoAllow": ["exec"]}}, "tools"),
        (
            {"agents": {"list": [{"id": "ops", "tools": {"profile": "nope"}}]}},
            "agents.list[0].tools.profile",
        ),
        ({"tools": {"media": {"image": {"maxChars": "lots"}}}}, "tools.media.image.maxChars"),
        ({"tools": {"media": {"colour": True}}}, "tools.media.colour"),
    ],
    ids=[
        "unknown-profile",
        "allow-with-alsoAllow",
        "agent-profile",
        "media-type",
        "media-unknown-key",
    ],
)
def test_tool_policy_and_media_blocks_are_validated(document: dict, expected: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(document)
    assert any(str(issue).startswith(expected) for issue in error.value.errors), error.value.errors


def test_valid_tool_policy_and_media_blocks_are_kept() -> None:
    document = {
        "tools": {
            "profile": "coding",
            "deny": ["exec"],
            "byProvider": {"openai/gpt-4.1": {"profile": "minimal"}},
            "media": {"concurrency": 1, "audio": {"enabled": True}},
        }
    }
    config = parse_config(document)
    assert config.tool_policy["profile"] == "coding"
    assert config.media == {"concurrency": 1, "audio": {"enabled": True}}
