"""The admin: config page with ordered inlines and field errors, read-only decision log."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from enrichment.config.changes import config_replace
from enrichment.config.store import active_config, config_document
from enrichment.models import Attempt, Run, ScopeRule, UrlDecision

pytestmark = pytest.mark.django_db


class FormFields(HTMLParser):
    """The name → value pairs a browser would submit for the page's main form."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, Any] = {}
        self.select: str | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        name = attr.get("name")
        if tag == "input" and name:
            kind = attr.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in attr:
                    self.values[name] = attr.get("value") or "on"
            elif kind not in ("submit", "button", "file"):
                self.values[name] = attr.get("value") or ""
        elif tag == "select" and name:
            self.select = name
            self.values.setdefault(name, "")
        elif tag == "option" and self.select and "selected" in attr:
            self.values[self.select] = attr.get("value") or ""
        elif tag == "textarea" and name:
            self.textarea = name
            self.values[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.values[self.textarea] += data


def form_values(html: str) -> dict[str, Any]:
    parser = FormFields()
    parser.feed(html)
    # Django renders a textarea's content after a leading newline.
    return {
        key: value[1:] if isinstance(value, str) and value.startswith("\n") else value
        for key, value in parser.values.items()
        if "__prefix__" not in key and key != "csrfmiddlewaretoken"
    }


def change_url() -> str:
    return reverse("admin:enrichment_enrichmentconfig_change", args=[active_config().pk])


def add_inline_row(values: dict[str, Any], prefix: str, row: dict[str, Any]) -> None:
    index = int(values[f"{prefix}-TOTAL_FORMS"])
    for key, value in row.items():
        values[f"{prefix}-{index}-{key}"] = value
    values[f"{prefix}-TOTAL_FORMS"] = str(index + 1)


def config_with_rules(*rules: dict[str, Any]) -> None:
    document = config_document()
    document["tools"]["links"]["scope"] = {"default": "deny", "rules": list(rules)}
    config_replace(document=document)


def test_config_change_page_renders(staff_client) -> None:
    config_with_rules({"action": "allow", "match": {"channel": "telegram"}})
    response = staff_client.get(change_url())
    assert response.status_code == 200
    html = response.content.decode()
    for text in ("scope rule", "link model", "tools.web.fetch", "ssrfPolicy"):
        assert text in html
    assert 'value="telegram"' in html
    assert "link-understand" in html
    assert "Test this config on a message" in html


def test_changelists_render(staff_client) -> None:
    for name in ("enrichmentconfig", "agent", "run", "attempt"):
        assert staff_client.get(reverse(f"admin:enrichment_{name}_changelist")).status_code == 200


def test_scope_rules_are_renumbered_densely_in_the_chosen_order(staff_client) -> None:
    config_with_rules(
        {"action": "allow", "match": {"channel": "a"}},
        {"action": "allow", "match": {"channel": "b"}},
        {"action": "deny", "match": {"channel": "c"}},
    )
    values = form_values(staff_client.get(change_url()).content.decode())
    prefix = "scope_rules"
    channels = {values[f"{prefix}-{i}-channel"]: i for i in range(3)}
    # The editor moves "c" first, leaves gaps, deletes "b" and adds "d" last.
    values[f"{prefix}-{channels['c']}-position"] = "5"
    values[f"{prefix}-{channels['a']}-position"] = "20"
    values[f"{prefix}-{channels['b']}-DELETE"] = "on"
    add_inline_row(
        values, prefix, {"position": "99", "action": "allow", "channel": "d", "chat_type": "group"}
    )
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)

    rules = list(ScopeRule.objects.filter(agent__isnull=True).order_by("position"))
    assert [(rule.position, rule.channel) for rule in rules] == [(0, "c"), (1, "a"), (2, "d")]
    scope = config_document()["tools"]["links"]["scope"]
    assert [rule["match"] for rule in scope["rules"]] == [
        {"channel": "c"},
        {"channel": "a"},
        {"channel": "d", "chatType": "group"},
    ]


def form_errors(response: Any) -> str:
    if response.context is None:
        return response.content.decode()[:500]
    messages = [str(response.context["adminform"].form.errors)]
    for formset in response.context["inline_admin_formsets"]:
        messages.append(f"{formset.formset.prefix}: {formset.formset.errors}")
    return "\n".join(messages)


def inline_errors(response: Any, prefix: str) -> list[dict[str, list[str]]]:
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == prefix:
            return [
                {field: [str(m) for m in messages] for field, messages in errors.items()}
                for errors in inline.formset.errors
            ]
    raise AssertionError(f"no inline {prefix}")


@pytest.mark.parametrize(
    ("prefix", "row", "field", "message"),
    [
        (
            "scope_rules",
            {"position": "0", "action": "allow", "chat_type": "room"},
            "chat_type",
            'unknown chat type "room"',
        ),
        (
            "link_models",
            {"position": "1", "command": "summarize", "args": '["--url", "{{LinkUrl"]'},
            "args",
            "args[1]:",
        ),
        (
            "link_models",
            {"position": "1", "command": "summarize", "args": '["{{Link-Url}}", "{{ }}"]'},
            "args",
            'args[0]: invalid placeholder "{{Link-Url}}"',
        ),
        (
            "link_models",
            {"position": "1", "command": "summarize", "args": '{"not": "a list"}'},
            "args",
            "JSON list of strings",
        ),
        (
            "link_models",
            {"position": "1", "command": "   ", "args": "[]"},
            "command",
            "",
        ),
    ],
    ids=[
        "chat-type-room",
        "unclosed-template",
        "bad-placeholder-name",
        "args-not-list",
        "no-command",
    ],
)
def test_field_errors_are_shown_on_the_field_at_fault(
    staff_client, prefix, row, field, message
) -> None:
    before = config_document()
    values = form_values(staff_client.get(change_url()).content.decode())
    add_inline_row(values, prefix, row)
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200  # the page again, with errors
    errors = inline_errors(response, prefix)
    added = errors[-1]
    assert list(added) == [field], added
    assert message in " ".join(added[field])
    assert config_document() == before


def test_non_staff_cannot_open_the_admin(user_client) -> None:
    response = user_client.get(change_url())
    assert response.status_code in (302, 403)
    if response.status_code == 302:
        assert "/login/" in response["Location"]
    response = user_client.get(reverse("admin:enrichment_run_changelist"))
    assert response.status_code in (302, 403)


def make_runs(count: int) -> list[Run]:
    now = timezone.now()
    runs = Run.objects.bulk_create(
        Run(
            created_at=now - timedelta(minutes=i),
            outcome="success",
            channel="telegram",
            original_body=f"message {i} https://example.com/{i}",
            url_count=1,
        )
        for i in range(count)
    )
    decisions = UrlDecision.objects.bulk_create(
        UrlDecision(run=run, position=0, url=f"https://example.com/{run.pk}") for run in runs
    )
    Attempt.objects.bulk_create(
        Attempt(url_decision=decision, position=0, command="x", outcome="success")
        for decision in decisions
    )
    return runs


def test_decision_log_is_read_only(staff_client) -> None:
    run = make_runs(1)[0]
    assert staff_client.get(reverse("admin:enrichment_run_add")).status_code == 403
    detail = staff_client.get(reverse("admin:enrichment_run_change", args=[run.pk]))
    assert detail.status_code == 200  # viewable
    html = detail.content.decode()
    assert 'name="_save"' not in html
    assert "https://example.com/" in html
    assert (
        staff_client.post(
            reverse("admin:enrichment_run_change", args=[run.pk]), {"outcome": "error"}
        ).status_code
        == 403
    )
    assert staff_client.get(reverse("admin:enrichment_run_delete", args=[run.pk])).status_code in (
        403,
        302,
    )
    run.refresh_from_db()
    assert run.outcome == "success"
    changelist = staff_client.get(reverse("admin:enrichment_run_changelist")).content.decode()
    assert "Add run" not in changelist
    assert 'name="action"' not in changelist or "delete_selected" not in changelist
    assert Run.objects.filter(pk=run.pk).exists()


def count_queries(sql: list[dict[str, str]]) -> list[str]:
    return [query["sql"] for query in sql if re.search(r"\bCOUNT\(", query["sql"], re.I)]


def test_decision_log_changelist_avoids_a_full_count(staff_client) -> None:
    make_runs(60)
    url = reverse("admin:enrichment_run_changelist")
    staff_client.get(url)  # warm the session / content types
    with CaptureQueriesContext(connection) as small:
        assert staff_client.get(url).status_code == 200
    make_runs(60)
    with CaptureQueriesContext(connection) as large:
        response = staff_client.get(url)
    assert response.status_code == 200
    assert len(large.captured_queries) == len(small.captured_queries)
    assert len(large.captured_queries) <= 12
    counts = count_queries(large.captured_queries)
    # Every count the changelist makes is bounded by a LIMIT (no full COUNT(*) of the log).
    assert all("LIMIT" in sql.upper() for sql in counts), counts
    with CaptureQueriesContext(connection) as filtered:
        assert staff_client.get(url + "?outcome__exact=success").status_code == 200
    assert all("LIMIT" in sql.upper() for sql in count_queries(filtered.captured_queries))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("links_timeout_seconds", "0", "tools.links.timeoutSeconds: must be at least 1"),
        ("links_max_links", "0", "tools.links.maxLinks: must be at least 1"),
        ("links_concurrency", "0", "tools.links.concurrency: must be at least 1"),
        ("fetch_max_chars", "0", "tools.web.fetch.maxChars: must be at least 1"),
        ("fetch_timeout_seconds", "0", "tools.web.fetch.timeoutSeconds: must be at least 1"),
        ("ssrf_allowed_hostnames", '["*."]', "bad entry '*.'"),
        ("ssrf_allowed_hostnames", '"intranet"', "not a hostname"),
        ("ssrf_allowed_hostnames", '["intranet", 3]', "must be a list of strings"),
        ("ssrf_allowed_hostnames", "wiki.internal, corp.example", "not a hostname"),
    ],
    ids=[
        "timeout",
        "max-links",
        "concurrency",
        "max-chars",
        "fetch-timeout",
        "host",
        "host-quoted",
        "host-type",
        "host-commas",
    ],
)
def test_config_fields_the_core_refuses_are_field_errors(staff_client, field, value, message):
    """Values the core validator refuses never reach the database (they would make every
    enrichment fail with "stored configuration is invalid")."""
    before = config_document()
    values = form_values(staff_client.get(change_url()).content.decode())
    values[field] = value
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == [field], errors
    assert message in " ".join(errors[field])
    assert config_document() == before


def test_link_model_timeout_below_one_is_a_field_error(staff_client) -> None:
    values = form_values(staff_client.get(change_url()).content.decode())
    add_inline_row(
        values,
        "link_models",
        {"position": "1", "command": "summarize", "args": "[]", "timeout_seconds": "0"},
    )
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    assert inline_errors(response, "link_models")[-1] == {"timeout_seconds": ["must be at least 1"]}


def test_agent_fields_the_core_refuses_are_field_errors(staff_client) -> None:
    document = config_document()
    document["agents"] = {"list": [{"id": "quiet"}]}
    config_replace(document=document)
    values = form_values(staff_client.get(change_url()).content.decode())
    values["agents-0-links_max_links"] = "0"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    errors = inline_errors(response, "agents")[0]
    assert list(errors) == ["links_max_links"]
    assert "maxLinks: must be at least 1" in errors["links_max_links"][0]
    assert config_document() == document


def test_valid_scalar_edit_is_stored(staff_client) -> None:
    values = form_values(staff_client.get(change_url()).content.decode())
    values["links_max_links"] = "5"
    values["ssrf_allowed_hostnames"] = '["wiki.internal", "*.corp.example"]'
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)
    stored = config_document()["tools"]
    assert stored["links"]["maxLinks"] == 5
    assert stored["web"]["fetch"]["ssrfPolicy"]["allowedHostnames"] == [
        "wiki.internal",
        "*.corp.example",
    ]
