"""Admin polish: one config (no add/delete), proper names, yes/no settings that say
"default", allowed hostnames one per line."""

from __future__ import annotations

import pytest
from django.urls import reverse

from enrichment.config.store import active_config, config_document
from tests.enrichment.test_admin import change_url, form_values

pytestmark = pytest.mark.django_db


def test_the_single_config_cannot_be_added_to_or_deleted(staff_client) -> None:
    config = active_config()
    page = staff_client.get(change_url()).content.decode()
    assert "Save and add another" not in page
    assert 'class="deletelink"' not in page
    assert staff_client.get(reverse("admin:enrichment_enrichmentconfig_add")).status_code == 403
    delete = reverse("admin:enrichment_enrichmentconfig_delete", args=[config.pk])
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403
    assert active_config().pk == config.pk


def test_inline_names_are_plural_and_readable(staff_client) -> None:
    page = staff_client.get(change_url()).content.decode()
    assert "CLI entries (link models, tried in order)" in page
    assert "Scope rules (first match wins)" in page
    assert "ENTRY)S" not in page.upper().replace(" ", "")


def test_optional_yes_no_settings_say_default_not_unknown(staff_client) -> None:
    page = staff_client.get(change_url()).content.decode()
    assert "— not set (use the default) —" in page
    assert ">Unknown<" not in page


def test_allowed_hostnames_are_edited_one_per_line(staff_client) -> None:
    values = form_values(staff_client.get(change_url()).content.decode())
    values["ssrf_allowed_hostnames"] = "wiki.internal\n\n  *.corp.example  \n"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, response.content.decode()[:2000]
    policy = config_document()["tools"]["web"]["fetch"]["ssrfPolicy"]
    assert policy["allowedHostnames"] == ["wiki.internal", "*.corp.example"]
    # Shown back one per line, not as JSON.
    page = staff_client.get(change_url()).content.decode()
    assert "wiki.internal\n*.corp.example</textarea>" in page


def test_emptying_the_hostnames_removes_the_key(staff_client) -> None:
    values = form_values(staff_client.get(change_url()).content.decode())
    values["ssrf_allowed_hostnames"] = "intranet.example"
    assert staff_client.post(change_url(), values).status_code == 302
    # The form is opened again: a save is based on the config version it was opened at.
    values = form_values(staff_client.get(change_url()).content.decode())
    values["ssrf_allowed_hostnames"] = ""
    assert staff_client.post(change_url(), values).status_code == 302
    fetch = config_document()["tools"].get("web", {}).get("fetch", {})
    assert "allowedHostnames" not in fetch.get("ssrfPolicy", {})
