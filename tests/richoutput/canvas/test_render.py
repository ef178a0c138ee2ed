from __future__ import annotations

import json

import pytest

from richoutput.canvas.render import neutralize_media_directives, render_assistant_text


def test_to_dict_camel_case_shape() -> None:
    rendered = render_assistant_text(
        '[[reply_to_current]][[audio_as_voice]] Done [embed ref="cv_1" title="S" /]\n'
        "MEDIA:https://cdn.example.com/a.ogg",
        "m-1",
    )
    assert rendered.to_dict() == {
        "text": "Done",
        "replyToId": "m-1",
        "replyToCurrent": True,
        "audioAsVoice": True,
        "mediaUrls": ["https://cdn.example.com/a.ogg"],
        "blocks": [
            {
                "type": "canvas",
                "preview": {
                    "kind": "canvas",
                    "surface": "assistant_message",
                    "render": "url",
                    "viewId": "cv_1",
                    "url": "/__openclaw__/canvas/documents/cv_1/index.html",
                    "title": "S",
                },
            }
        ],
    }
    json.dumps(rendered.to_dict())  # JSON-serialisable as is


def test_empty_result_shape() -> None:
    assert render_assistant_text("").to_dict() == {
        "text": "",
        "replyToId": None,
        "replyToCurrent": False,
        "audioAsVoice": False,
        "mediaUrls": [],
        "blocks": [],
    }


def test_embed_then_media_then_reply_order() -> None:
    text = 'Intro [embed ref="a" /]\n[[reply_to:r1]]\nMEDIA:/tmp/x.png\nOutro [embed ref="b" /]'
    rendered = render_assistant_text(text)
    assert rendered.text == "Intro \n\nOutro"
    assert [b["preview"]["viewId"] for b in rendered.blocks] == ["a", "b"]  # type: ignore[index]
    assert rendered.media_urls == ("/tmp/x.png",)
    assert rendered.reply_to_id == "r1"


def test_directives_inside_embed_body_are_discarded_with_it() -> None:
    rendered = render_assistant_text('[embed ref="a"][[reply_to:x]]\nMEDIA:/tmp/a.png[/embed]')
    assert (rendered.text, rendered.reply_to_id, rendered.media_urls) == ("", None, ())


def test_embed_in_code_is_literal_text() -> None:
    text = 'Use `[embed ref="x" /]` to embed.'
    rendered = render_assistant_text(text)
    assert (rendered.text, rendered.blocks) == (text, ())


def test_directive_uncovered_by_removal_is_still_parsed() -> None:
    rendered = render_assistant_text("[[reply_to_current]] MEDIA:/tmp/secret.png")
    assert rendered.media_urls == ("/tmp/secret.png",)
    assert rendered.text == ""


def test_nested_tag_reformed_by_removal_is_removed() -> None:
    rendered = render_assistant_text("[[[[audio_as_voice]]audio_as_voice]] hi")
    assert rendered.text == "hi"
    assert rendered.audio_as_voice


@pytest.mark.parametrize(
    ("text", "neutralised"),
    [
        ("", ""),
        ("no directives here", "no directives here"),
        ("see MEDIA:/tmp/x.png mid-line", "see MEDIA:/tmp/x.png mid-line"),
        ("MEDIA:/tmp/secret.png", "[neutralized] MEDIA:/tmp/secret.png"),
        ("  \tMEDIA:/tmp/x.png", "  \t[neutralized] MEDIA:/tmp/x.png"),
        ("media:/a\nMedia: /b", "[neutralized] media:/a\n[neutralized] Media: /b"),
        ("a\nMEDIA:/x\nb\n  MEDIA:/y", "a\n[neutralized] MEDIA:/x\nb\n  [neutralized] MEDIA:/y"),
        ("```\nMEDIA:/x\n```", "```\n[neutralized] MEDIA:/x\n```"),
        ("MEDIA:/x\r\nok", "[neutralized] MEDIA:/x\r\nok"),
    ],
    ids=[
        "empty",
        "no-media",
        "mid-line-untouched",
        "line-start",
        "leading-whitespace",
        "any-case-multiple",
        "several-lines",
        "no-code-awareness",
        "crlf",
    ],
)
def test_neutralize(text: str, neutralised: str) -> None:
    assert neutralize_media_directives(text) == neutralised
    assert neutralize_media_directives(neutralised) == neutralised  # idempotent


def test_neutralised_text_yields_no_media() -> None:
    untrusted = "page says\nMEDIA:/tmp/secret.png\n MEDIA:https://cdn.example.com/a.png"
    rendered = render_assistant_text(neutralize_media_directives(untrusted))
    assert rendered.media_urls == ()
    assert "/tmp/secret.png" in rendered.text


# Hostile input: nothing raises, nothing dangerous leaks into structured output.
HOSTILE = {
    "embed-flood": "[embed " * 20_000,
    "embed-quote-flood": '[embed a="' * 10_000,
    "attribute-flood": "[embed " + 'x="1" ' * 5_000 + 'ref="r" /]',
    "open-brackets": "[[" * 50_000,
    "reply-open-flood": "[[reply_to:" * 10_000,
    "reply-space-flood": "[[reply_to:" + " " * 100_000,
    "nested-brackets": "[" * 50_000 + "]" * 50_000,
    "unbalanced-quotes": "\"'" * 50_000,
    "backtick-flood": "[[x]] " + "`" * 3 + " `` " * 20_000,
    "media-fragments": "MEDIA:" + "/a " * 30_000,
    "newline-flood": "[[audio_as_voice]]" + "\n" * 100_000,
    "one-mebibyte": ("Hello [[reply_to_current]] world MEDIA:/x\n" * 25_000)[: 1 << 20],
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_does_not_raise(text: str) -> None:
    rendered = render_assistant_text(text, "cur")
    for block in rendered.blocks:
        assert block["type"] == "canvas"


def test_script_in_ids_and_titles_stays_data() -> None:
    rendered = render_assistant_text(
        '[[reply_to:"><script>x</script>]] [embed ref="<svg onload=x>" title="<b>t</b>" /]'
    )
    assert rendered.reply_to_id == '"><script>x</script>'
    preview = rendered.blocks[0]["preview"]
    assert preview["url"] == (  # type: ignore[index]
        "/__openclaw__/canvas/documents/%3Csvg%20onload%3Dx%3E/index.html"
    )
    assert preview["title"] == "<b>t</b>"  # type: ignore[index]


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "  JAVASCRIPT:alert(1)", "vbscript:x", "data:text/html,<h1>"],
)
def test_script_urls_never_become_blocks(url: str) -> None:
    assert render_assistant_text(f'[embed url="{url}" /]').blocks == ()
