from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enrichment.pipeline.templates import (
    MessageContext,
    find_template_errors,
    js_trim,
    render_template,
)

VARIABLES = {"LinkUrl": "https://a.example/x?y=1", "Body": "hello", "From": "+100"}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{LinkUrl}}", "https://a.example/x?y=1"),
        ("{{ LinkUrl }}", "https://a.example/x?y=1"),
        ("{{\tLinkUrl\n}}", "https://a.example/x?y=1"),
        ("{{\u00a0LinkUrl\u3000}}", "https://a.example/x?y=1"),
        ("--url={{LinkUrl}}&from={{From}}", "--url=https://a.example/x?y=1&from=+100"),
        ("{{Unknown}}", ""),
        ("a{{Unknown}}b", "ab"),
        ("{{linkurl}}", ""),
        ("{{Link-Url}}", "{{Link-Url}}"),
        ("{{Link Url}}", "{{Link Url}}"),
        ("{{}}", "{{}}"),
        ("{{LinkUrl", "{{LinkUrl"),
        ("{LinkUrl}", "{LinkUrl}"),
        ("{{{LinkUrl}}}", "{https://a.example/x?y=1}"),
        ("{{Body}}{{Body}}", "hellohello"),
        ("", ""),
        ("no placeholders", "no placeholders"),
        ("{{LinkÜrl}}", "{{LinkÜrl}}"),
        ("$(rm -rf /) {{Body}}", "$(rm -rf /) hello"),
    ],
    ids=[
        "plain",
        "inner-spaces",
        "inner-tab-newline",
        "inner-unicode-spaces",
        "several",
        "unknown-empty",
        "unknown-inline",
        "case-sensitive",
        "dash-left-alone",
        "space-in-name-left-alone",
        "empty-left-alone",
        "unclosed-left-alone",
        "single-braces",
        "triple-braces",
        "repeated",
        "empty-template",
        "no-placeholders",
        "non-ascii-name",
        "shell-text-is-inert",
    ],
)
def test_render_template(template: str, expected: str) -> None:
    assert render_template(template, VARIABLES) == expected


def test_rendered_value_is_not_re_expanded() -> None:
    assert render_template("{{Body}}", {"Body": "{{LinkUrl}}", "LinkUrl": "x"}) == "{{LinkUrl}}"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("--url {{LinkUrl}}", []),
        ("{{ LinkUrl }} {{Body}}", []),
        ("{{Unknown}}", []),
        ("plain }} text", []),
        ("{{LinkUrl", ['unclosed "{{" at position 0']),
        ("{{}}", ['empty placeholder "{{}}"']),
        ("{{   }}", ['empty placeholder "{{   }}"']),
        ("{{Link-Url}}", ['invalid placeholder "{{Link-Url}}"']),
        ("{{Link Url}}", ['invalid placeholder "{{Link Url}}"']),
        ("{{{LinkUrl}}}", ['invalid placeholder "{{{LinkUrl}}"']),
        (
            "{{LinkUrl}} {{ }} {{Link-Url}} {{Body",
            [
                'empty placeholder "{{ }}"',
                'invalid placeholder "{{Link-Url}}"',
                'unclosed "{{" at position 31',
            ],
        ),
    ],
    ids=[
        "valid",
        "valid-spaces",
        "unknown-name-is-not-malformed",
        "stray-closer",
        "unclosed",
        "empty",
        "blank",
        "dash",
        "space",
        "triple-brace",
        "several",
    ],
)
def test_find_template_errors(template: str, expected: list[str]) -> None:
    assert find_template_errors(template) == expected


@given(st.text())
def test_templates_never_raise(text: str) -> None:
    render_template(text, VARIABLES)
    assert isinstance(find_template_errors(text), list)


def test_js_trim_matches_javascript_whitespace() -> None:
    assert js_trim("\ufeff\u00a0 text \u2028\u3000") == "text"
    assert js_trim("\x1ctext\x85") == "\x1ctext\x85"  # not whitespace in JavaScript


def test_context_template_variables() -> None:
    context = MessageContext(
        body="see https://a.example",
        raw_body="raw",
        channel="webchat",
        chat_type="group",
        session_key="agent:main:slack:channel:C1",
        provider="slack",
        surface="slack",
        sender_name="Ada",
        sender_id="U1",
        message_sid="m1",
        account_id="acc",
        from_="+1",
        to="+2",
    )
    assert context.template_variables(link_url="https://a.example") == {
        "Body": "see https://a.example",
        "RawBody": "raw",
        "From": "+1",
        "To": "+2",
        "MessageSid": "m1",
        "SessionKey": "agent:main:slack:channel:C1",
        "ChatType": "group",
        "Provider": "slack",
        "Surface": "slack",
        "SenderName": "Ada",
        "SenderId": "U1",
        "AccountId": "acc",
        "LinkUrl": "https://a.example",
    }


def test_missing_context_values_render_empty() -> None:
    variables = MessageContext(body="hi").template_variables()
    assert variables["LinkUrl"] == "" and variables["SenderName"] == ""
    assert variables["RawBody"] == "hi"  # the raw body defaults to the body
    assert render_template("[{{SenderName}}|{{LinkUrl}}]", variables) == "[|]"


@pytest.mark.parametrize(
    ("surface", "provider", "channel", "expected"),
    [
        ("slack", "discord", "webchat", "slack"),
        (None, "discord", "webchat", "discord"),
        ("  ", "discord", None, "discord"),
        (None, None, "webchat", "webchat"),
        (None, None, None, None),
    ],
    ids=["surface", "provider", "blank-surface", "channel", "none"],
)
def test_scope_channel(
    surface: str | None, provider: str | None, channel: str | None, expected: str | None
) -> None:
    context = MessageContext(surface=surface, provider=provider, channel=channel)
    assert context.scope_channel == expected


def test_link_text_prefers_raw_body() -> None:
    assert MessageContext(body="rewritten", raw_body="original").link_text == "original"
    assert MessageContext(body="only", raw_body=None).link_text == "only"
    assert MessageContext(body="body", raw_body="").link_text == ""
