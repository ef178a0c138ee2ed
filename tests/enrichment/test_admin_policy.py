"""Admin editing of the ``tool_policy`` and ``media`` JSON fields: validated with the core
parsers, path-named errors shown on the field, nothing saved on error."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse
from django.utils.html import escape

from enrichment.config.changes import config_replace
from enrichment.models import Agent, EnrichmentConfig

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "tools": {"links": {"models": []}, "profile": "coding"},
    "agents": {"list": [{"id": "main"}, {"id": "support", "tools": {"deny": ["exec"]}}]},
}


def _widget_value(bound_field: Any) -> Any:
    """The string a browser would send for one field (None: the field is left out)."""
    widget = bound_field.field.widget
    value = bound_field.value()  # already prepared (JSON fields come back as JSON text)
    if getattr(widget, "input_type", None) == "checkbox":
        return "on" if value else None
    formatted = widget.format_value(value)
    return "" if formatted is None else formatted


def change_form_data(response: Any) -> dict[str, Any]:
    """What the browser would post back unchanged from an admin change page."""
    data: dict[str, Any] = {}

    def add(form: Any) -> None:
        for name in form.fields:
            value = _widget_value(form[name])
            if value is not None:
                data[form.add_prefix(name)] = value

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        add(formset.management_form)
        for form in formset.forms:
            add(form)
    return data


def edit(client: Any, url: str, **changes: Any) -> Any:
    data = change_form_data(client.get(url))
    data.update({key: json.dumps(value) for key, value in changes.items()})
    return client.post(url, data)


def config_url() -> str:
    config = EnrichmentConfig.objects.get(is_active=True)
    return reverse("admin:enrichment_enrichmentconfig_change", args=[config.pk])


def agent_url(agent_id: str) -> str:
    agent = Agent.objects.get(agent_id=agent_id)
    return reverse("admin:enrichment_agent_change", args=[agent.pk])


def field_errors(response: Any, field: str) -> list[str]:
    assert response.status_code == 200, "the form should be shown again, not saved"
    return list(response.context["adminform"].form.errors[field])


def error_shown_on_field(response: Any, field: str, message: str) -> bool:
    """The message is in that field's own error list, inside the field's row."""
    content = response.content.decode()
    row = re.search(
        rf'<div class="form-row errors field-{field}">\s*'
        rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>',
        content,
        re.S,
    )
    return bool(row) and f"<li>{escape(message)}</li>" in row.group(1)


@pytest.fixture
def stored(db) -> None:
    config_replace(document=DOCUMENT)


@pytest.mark.parametrize(
    ("policy", "errors"),
    [
        ({"profile": "root"}, ['tools.profile: unknown profile "root"']),
        (
            {"allow": ["read"], "alsoAllow": ["exec"]},
            [
                "tools: tools cannot set both allow and alsoAllow in the same scope "
                "(merge alsoAllow into allow, or remove allow and use profile + alsoAllow)"
            ],
        ),
        (
            {"byProvider": {"openai/gpt-5": {"profile": "x", "allow": "read"}}},
            [
                'tools.byProvider["openai/gpt-5"].profile: unknown profile "x"',
                'tools.byProvider["openai/gpt-5"].allow: must be a list of strings',
            ],
        ),
        ({"deny": ["exec", 7]}, ["tools.deny[1]: must be a string"]),
        ({"links": {}}, ["tools.links: unknown key"]),
        (["read"], ["tools: must be an object"]),
    ],
    ids=[
        "unknown-profile",
        "allow-and-also-allow",
        "by-provider",
        "non-string",
        "foreign-key",
        "list",
    ],
)
def test_config_tool_policy_errors_on_the_field(staff_client, stored, policy, errors) -> None:
    response = edit(staff_client, config_url(), tool_policy=policy)
    assert field_errors(response, "tool_policy") == errors
    assert error_shown_on_field(response, "tool_policy", errors[0])
    assert EnrichmentConfig.objects.get(is_active=True).tool_policy == {"profile": "coding"}


def test_config_valid_tool_policy_is_saved_and_exported(staff_client, stored) -> None:
    policy = {"profile": "minimal", "alsoAllow": ["read"], "byProvider": {"openai": {"deny": []}}}
    response = edit(staff_client, config_url(), tool_policy=policy)
    assert response.status_code == 302, (
        response.context and response.context["adminform"].form.errors
    )
    assert EnrichmentConfig.objects.get(is_active=True).tool_policy == policy
    tools = staff_client.get("/api/config").json()["tools"]
    assert {key: tools[key] for key in policy} == policy
    resolved = staff_client.post("/api/tools/resolve", {}, content_type="application/json")
    assert resolved.json()["allowed"] == ["read", "session_status"]


def test_config_blank_tool_policy_means_no_policy(staff_client, stored) -> None:
    data = change_form_data(staff_client.get(config_url()))
    data["tool_policy"] = ""
    response = staff_client.post(config_url(), data)
    assert response.status_code == 302
    assert EnrichmentConfig.objects.get(is_active=True).tool_policy == {}


@pytest.mark.parametrize(
    ("media", "errors"),
    [
        ({"concurrency": 0}, ["tools.media.concurrency: must be at least 1"]),
        ({"bogus": 1}, ["tools.media.bogus: unknown key"]),
        ({"image": {"enabled": "yes"}}, ["tools.media.image.enabled: must be true or false"]),
        ("image", ["tools.media: must be an object"]),
    ],
    ids=["concurrency", "unknown-key", "capability-flag", "not-an-object"],
)
def test_config_media_errors_on_the_field(staff_client, stored, media, errors) -> None:
    response = edit(staff_client, config_url(), media=media)
    assert field_errors(response, "media") == errors
    assert error_shown_on_field(response, "media", errors[0])
    assert EnrichmentConfig.objects.get(is_active=True).media is None


def test_config_valid_media_is_saved(staff_client, stored) -> None:
    response = edit(staff_client, config_url(), media={"concurrency": 2})
    assert response.status_code == 302
    assert EnrichmentConfig.objects.get(is_active=True).media == {"concurrency": 2}


def test_both_fields_report_together(staff_client, stored) -> None:
    response = edit(
        staff_client, config_url(), media={"concurrency": 0}, tool_policy={"profile": "x"}
    )
    errors = response.context["adminform"].form.errors
    assert set(errors) == {"media", "tool_policy"}


@pytest.mark.parametrize(
    ("policy", "errors"),
    [
        ({"profile": "root"}, ['agents.list[1].tools.profile: unknown profile "root"']),
        (
            {"allow": ["read"], "alsoAllow": ["exec"]},
            [
                "agents.list[1].tools: agent tools cannot set both allow and alsoAllow in the "
                "same scope (merge alsoAllow into allow, or remove allow and use profile + "
                "alsoAllow)"
            ],
        ),
        (
            {"byProvider": {"openai": {"alsoAllow": ["x"], "allow": ["y"]}}},
            [
                'agents.list[1].tools.byProvider["openai"]: tools.byProvider policy cannot set '
                "both allow and alsoAllow in the same scope (merge alsoAllow into allow, or "
                "remove allow and use profile + alsoAllow)"
            ],
        ),
    ],
    ids=["unknown-profile", "allow-and-also-allow", "by-provider-wording"],
)
def test_agent_tool_policy_errors_on_the_field(staff_client, stored, policy, errors) -> None:
    response = edit(staff_client, agent_url("support"), tool_policy=policy)
    assert field_errors(response, "tool_policy") == errors
    assert error_shown_on_field(response, "tool_policy", errors[0])
    assert Agent.objects.get(agent_id="support").tool_policy == {"deny": ["exec"]}


def test_agent_media_errors_on_the_field(staff_client, stored) -> None:
    response = edit(staff_client, agent_url("support"), media={"video": {"maxBytes": -1}})
    errors = field_errors(response, "media")
    assert errors and all(error.startswith("agents.list[1].tools.media.video") for error in errors)


def test_agent_valid_tool_policy_is_saved_and_resolved(staff_client, stored) -> None:
    response = edit(staff_client, agent_url("support"), tool_policy={"profile": "minimal"})
    assert response.status_code == 302
    resolved = staff_client.post(
        "/api/tools/resolve", {"agentId": "support"}, content_type="application/json"
    )
    assert resolved.json()["allowed"] == ["session_status"]
