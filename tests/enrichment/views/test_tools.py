"""The "Tool access" page (``/tools/``), rendered without a browser, and its grouping."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from enrichment.config.changes import config_replace
from enrichment.models import EnrichmentConfig
from enrichment.pipeline.policy.inventory import BUILTIN_TOOL_NAMES
from enrichment.pipeline.policy.resolve import Removal, ToolResolution
from enrichment.selectors.tool_access import group_tools

pytestmark = pytest.mark.django_db

URL = "/tools/"

CONFIG = {
    "tools": {
        "profile": "coding",
        "allow": ["*", "nope"],
        "deny": ["process"],
        "byProvider": {"openai/gpt-5": {"deny": ["write"]}},
    },
    "agents": {
        "list": [
            {"id": "support", "tools": {"profile": "messaging"}},
            {"id": "ops", "tools": {"byProvider": {"anthropic": {"deny": ["message", "exec"]}}}},
        ]
    },
}


def page(client, **params: str) -> str:
    response = client.get(URL, params)
    assert response.status_code == 200
    return response.content.decode()


def tool_items(content: str, css_class: str) -> dict[str, str]:
    """tool name -> the visible text of its list item, for items with ``css_class``."""
    items = re.findall(
        rf'<li class="{css_class}" data-tool="([^"]+)">(.*?)</li>', content, flags=re.S
    )
    return {
        name: " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split()) for name, text in items
    }


def group_of(content: str, group: str) -> str:
    slug = re.sub(r"[^a-z0-9-]", "", group.lower())
    match = re.search(
        rf'<section class="card tool-group" id="group-{slug}".*?</section>', content, re.S
    )
    assert match, f"no section for {group}"
    return match.group(0)


def test_url_name_and_nav_entry(user_client) -> None:
    assert reverse("tool-access") == URL
    assert f'<a href="{URL}" aria-current="page">Tool access</a>' in page(user_client)


def test_login_required(client) -> None:
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_empty_state_when_no_policy_is_configured(user_client) -> None:
    content = page(user_client)
    assert 'id="tool-access-empty"' in content
    assert "No tool policy configured" in content
    assert sorted(tool_items(content, "tool-allowed")) == sorted(BUILTIN_TOOL_NAMES)
    assert tool_items(content, "tool-removed") == {}
    assert f"{len(BUILTIN_TOOL_NAMES)} of {len(BUILTIN_TOOL_NAMES)} tools allowed" in content
    assert 'id="tool-access-no-warnings"' in content


def test_groups_allowed_and_removed_with_stage_and_reason(user_client) -> None:
    config_replace(document=CONFIG)
    content = page(user_client)
    assert 'id="tool-access-empty"' not in content
    runtime = group_of(content, "group:runtime")
    assert tool_items(runtime, "tool-allowed") == {"exec": "exec allowed"}
    assert tool_items(runtime, "tool-removed") == {
        "process": "process removed by tools.allow (denied)"
    }
    web = group_of(content, "group:web")
    assert tool_items(web, "tool-removed") == {
        "web_search": "web_search removed by tools.profile (coding) (not in allowlist)",
        "web_fetch": "web_fetch removed by tools.profile (coding) (not in allowlist)",
    }
    assert "1 of 2 allowed" in runtime
    # image and agents_list only belong to group:openclaw; its other members sit in narrower groups.
    openclaw = group_of(content, "group:openclaw")
    assert set(tool_items(openclaw, "tool-allowed")) | set(
        tool_items(openclaw, "tool-removed")
    ) == {
        "image",
        "agents_list",
    }
    order = [m.group(1) for m in re.finditer(r'id="group-(group[a-z]+)"', content)]
    assert order == [
        "groupmemory",
        "groupweb",
        "groupfs",
        "groupruntime",
        "groupsessions",
        "groupui",
        "groupautomation",
        "groupmessaging",
        "groupnodes",
        "groupopenclaw",
    ]


def test_warnings_are_listed(user_client) -> None:
    config_replace(document=CONFIG)
    content = page(user_client)
    warnings = re.search(r'<ul id="tool-access-warnings">(.*?)</ul>', content, re.S)
    assert warnings
    assert html.unescape(warnings.group(1)).strip() == (
        '<li class="warning">tools: tools.allow allowlist contains unknown entries (nope). '
        "These entries won't match any tool unless the plugin is enabled.</li>"
    )


def test_agent_select_lists_configured_agents_and_none(user_client) -> None:
    config_replace(document=CONFIG)
    content = page(user_client, agent="ops")
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', content)
    assert options == [("", "", "(none)"), ("support", "", "support"), ("ops", " selected", "ops")]


@pytest.mark.parametrize(
    ("params", "removed"),
    [
        ({"provider": "openai", "model": "gpt-5"}, {"write": "tools.byProvider.allow (denied)"}),
        (
            {"agent": "ops", "provider": "anthropic"},
            {
                "exec": "agents.ops.tools.byProvider.allow (denied)",
                "message": "tools.profile (coding) (not in allowlist)",
            },
        ),
        ({"agent": "support"}, {"session_status": None, "message": None}),
    ],
    ids=["provider-model", "agent-provider", "agent-profile"],
)
def test_choice_changes_the_resolution(user_client, params, removed) -> None:
    config_replace(document=CONFIG)
    content = page(user_client, **params)
    items = tool_items(content, "tool-removed")
    for tool, stage in removed.items():
        if stage is None:  # allowed under this choice
            assert tool in tool_items(content, "tool-allowed"), tool
        else:
            assert items[tool] == f"{tool} removed by {stage}"
    for value in params.values():
        assert f"<code>{value}</code>" in content


def test_agent_profile_replaces_global_profile_on_the_page(user_client) -> None:
    config_replace(document=CONFIG)
    allowed = tool_items(page(user_client, agent="support"), "tool-allowed")
    assert list(allowed) == [
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "session_status",
        "message",
    ]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"agent": "ghost"}, "Select a valid choice"),
        ({"provider": "p" * 201}, "at most 200 characters"),
    ],
    ids=["unconfigured-agent", "provider-too-long"],
)
def test_invalid_choice_shows_form_errors_not_a_resolution(user_client, params, error) -> None:
    config_replace(document=CONFIG)
    content = page(user_client, **params)
    assert 'id="tool-access-form-errors"' in content
    assert error in html.unescape(content)
    assert 'id="tool-access-summary"' not in content


def test_invalid_stored_config_shows_the_errors(user_client) -> None:
    config_replace(document={"tools": {}})
    EnrichmentConfig.objects.filter(is_active=True).update(tool_policy={"profile": "root"})
    content = html.unescape(page(user_client))
    assert 'id="tool-access-config-error"' in content
    assert 'tools.profile: unknown profile "root"' in content


def test_query_count_does_not_grow_with_agents(user_client) -> None:
    def queries(agent_count: int) -> int:
        agents = [{"id": f"agent-{i}", "tools": {"deny": ["exec"]}} for i in range(agent_count)]
        config_replace(document={**CONFIG, "agents": {"list": agents}})
        with CaptureQueriesContext(connection) as captured:
            page(user_client, agent="agent-0", provider="openai")
        return len(captured)

    assert queries(1) == queries(25)
    assert queries(1) <= 8


def test_group_tools_puts_plugins_in_their_own_groups_and_unknown_in_other() -> None:
    resolution = ToolResolution(
        allowed=("exec", "custom", "lobster"),
        warnings=(),
        removed=(Removal("workflow_tool", "tools.allow", "not in allowlist"),),
    )
    groups = group_tools(
        resolution,
        available=["exec", "custom"],
        plugin_tools={"Lobster": ["lobster", "workflow_tool"]},
    )
    assert [(g.group, [t.name for t in g.tools], g.allowed_count) for g in groups] == [
        ("group:runtime", ["exec"], 1),
        ("plugin:lobster", ["lobster", "workflow_tool"], 1),
        ("other", ["custom"], 1),
    ]
    assert groups[1].tools[1].removal == Removal("workflow_tool", "tools.allow", "not in allowlist")
