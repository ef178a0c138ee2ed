"""The newcomer's rough edges of issue 33, items 7-12 (the browser-only parts of 8, 9 and 11
are checked by tests/controlui/test_every_page_browser.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from enrichment.config.changes import config_replace
from enrichment.config.store import config_document
from enrichment.models import EnrichmentConfig
from tests.enrichment.views.test_history import make_run

pytestmark = pytest.mark.django_db
STATIC = Path(__file__).resolve().parents[2] / "static"


# --- 7. keyboard on arrival ----------------------------------------------------------------


def test_history_puts_no_field_in_focus_on_arrival(user_client) -> None:
    """j/k/Enter must reach the list, not a filter field (issue 33, item 7)."""
    make_run()
    html = user_client.get("/decisions/").content.decode()
    assert "autofocus" not in html


# --- 8. admin ordering on a phone and by keyboard ----------------------------------------


def test_admin_order_buttons_are_big_enough_and_rows_stack_on_a_phone() -> None:
    css = (STATIC / "css/admin_sortable.css").read_text()
    buttons = css.split("fieldset.sortable button.sort-step {", 1)[1].split("}", 1)[0]
    assert "min-width: 24px" in buttons and "min-height: 24px" in buttons
    focus = css.split(":focus-visible {", 1)[1].split("}", 1)[0]
    assert "outline: 3px solid" in focus
    phone = css.split("@media (max-width: 767px)", 1)[1]
    for field in ("chat_type", "key_prefix", "rule_number"):
        assert f"td.field-{field}::before" in phone
    assert "td.delete::before" in phone


# --- 10. the site's 404 with DEBUG on -------------------------------------------------------


def test_an_unknown_run_shows_the_site_404_even_with_debug(user_client, settings) -> None:
    settings.DEBUG = True
    response = user_client.get("/decisions/999999/")
    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="error-code">404<' in html and "Nothing here" in html
    assert "No run with id 999999." in html
    assert "Django tried these URL patterns" not in html and "technical_404" not in html


# --- 12. times, messages, one history ------------------------------------------------------


def test_datetime_fields_have_room_for_a_12_hour_clock() -> None:
    css = (STATIC / "css/app.css").read_text()
    assert 'input[type="datetime-local"] { min-width: min(15rem, 100%); }' in css


def test_config_history_does_not_call_relative_times_utc(staff_client) -> None:
    config_replace(document=config_document())
    html = staff_client.get(reverse("config-history")).content.decode()
    assert '<th scope="col">When</th>' in html and "When (UTC)" not in html
    # The exact UTC instant stays in the markup (reltime.js shows it on hover).
    assert re.search(r'<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</time>', html)


def admin_values(client) -> tuple[str, dict[str, str]]:
    config = EnrichmentConfig.objects.get()
    url = reverse("admin:enrichment_enrichmentconfig_change", args=[config.pk])
    html = client.get(url).content.decode()
    values: dict[str, str] = {}
    for tag in re.findall(r"<(?:input|select|textarea)[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        if not name or 'type="checkbox"' in tag or 'type="submit"' in tag:
            continue
        value = re.search(r'value="([^"]*)"', tag)
        values[name.group(1)] = value.group(1) if value else ""
    for select in re.finditer(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(2))
        values[select.group(1)] = chosen.group(1) if chosen else ""
    for area in re.finditer(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', html, re.S):
        values[area.group(1)] = area.group(2).strip()
    return url, values


def test_admin_messages_all_name_the_setting_in_the_same_words(staff_client) -> None:
    config_replace(document=config_document())
    url, values = admin_values(staff_client)
    values.update(
        links_timeout_seconds="0",
        links_max_links="-1",
    )
    html = staff_client.post(url, values).content.decode()
    assert "Ensure this value" not in html
    assert "tools.links.timeoutSeconds: must be at least 1" in html
    assert re.search(r"tools\.links\.maxLinks: must be", html)
    # Every bad hostname of the list at once, not only the first: the form's own check of
    # each line, then the core's check of each pattern.
    values["ssrf_allowed_hostnames"] = "ok.example\nbad host\nx,y"
    html = staff_client.post(url, values).content.decode()
    assert "&#x27;bad host&#x27;: not a hostname" in html
    assert "&#x27;x,y&#x27;: not a hostname" in html
    values["ssrf_allowed_hostnames"] = "ok.example\n*.\n*"
    html = staff_client.post(url, values).content.decode()
    assert "2 bad entries: &#x27;*.&#x27;, &#x27;*&#x27;" in html


def test_admin_offers_one_history_not_two(staff_client) -> None:
    config_replace(document=config_document())
    url, _ = admin_values(staff_client)
    html = staff_client.get(url).content.decode()
    tools = html.split('class="object-tools"', 1)[1].split("</ul>", 1)[0]
    assert "Config history" in tools
    assert ">History<" not in tools
