"""Property tests: the renderer never raises, no directive survives outside code, and
every block has the exact stored shape."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from richoutput.canvas.codespans import find_code_regions
from richoutput.canvas.render import render_assistant_text
from richoutput.canvas.textutil import JS_WHITESPACE

FRAGMENTS = [
    "[[reply_to_current]]",
    "[[reply_to:",
    "[[ reply_to : id-1 ]]",
    "[[audio_as_voice]]",
    "[[",
    "]]",
    "]",
    "[",
    "reply_to_current",
    "audio_as_voice",
    "MEDIA:",
    "media: /tmp/a b.png",
    "MEDIA:https://cdn.example.com/a.png",
    "MEDIA:https://127.0.0.1/x.png",
    "MEDIA:../etc/passwd",
    '[embed ref="cv_1" /]',
    '[embed url="/__openclaw__/canvas/x" height="0x1F4"]body[/embed]',
    "[embed ",
    "[/embed]",
    'ref="',
    "height='",
    "`",
    "```",
    "    ",
    "\n",
    "\n\n",
    " ",
    "\t",
    "\r\n",
    "x",
    "Hello",
    "<script>",
    "javascript:",
    '"',
    "'",
    "/",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=24).map(
    "".join
)

AUDIO = re.compile(r"\[\[\s*audio_as_voice\s*\]\]", re.IGNORECASE)
CURRENT = re.compile(r"\[\[\s*reply_to_current\s*\]\]", re.IGNORECASE)
EXPLICIT = re.compile(r"\[\[\s*reply_to\s*:\s*[^\]\n]*[^\]\n\s][^\]\n]*\s*\]\]", re.IGNORECASE)
PREVIEW_KEYS = {"kind", "surface", "render", "viewId", "url", "title", "preferredHeight"}


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(texts, st.one_of(st.none(), st.text(max_size=5)))
def test_never_raises_and_shapes_hold(text: str, current: str | None) -> None:
    rendered = render_assistant_text(text, current)
    assert isinstance(rendered.text, str)
    assert rendered.text == rendered.text.rstrip(JS_WHITESPACE)
    assert rendered.reply_to_id is None or 0 < len(rendered.reply_to_id) <= 256
    for block in rendered.blocks:
        assert set(block) == {"type", "preview"}
        assert block["type"] == "canvas"
        preview = block["preview"]
        assert isinstance(preview, dict)
        assert set(preview) <= PREVIEW_KEYS
        assert {"kind", "surface", "render", "url"} <= set(preview)
        assert (preview["kind"], preview["surface"], preview["render"]) == (
            "canvas",
            "assistant_message",
            "url",
        )
        for key in ("viewId", "url", "title"):
            if key in preview:
                assert isinstance(preview[key], str) and preview[key]
        if "preferredHeight" in preview:
            height = preview["preferredHeight"]
            assert type(height) is int and 160 <= height <= 1200


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(texts)
def test_no_directive_survives_outside_code(text: str) -> None:
    visible = render_assistant_text(text).text
    regions = find_code_regions(visible)
    for pattern in (AUDIO, CURRENT, EXPLICIT):
        for match in pattern.finditer(visible):
            assert regions.contains(match.start()), (pattern.pattern, visible)
    # A MEDIA: line may stay visible only when its reference was rejected (SPEC §8),
    # so the visible text must not yield media when parsed again.
    assert render_assistant_text(visible).media_urls == ()


@settings(max_examples=500, deadline=None)
@given(texts)
def test_render_is_stable_on_its_own_output(text: str) -> None:
    once = render_assistant_text(text)
    again = render_assistant_text(once.text)
    # Blocks are not checked: shortcodes are cut first, so one hidden in an inline code
    # span that a later MEDIA-line removal breaks up legitimately stays literal text.
    assert again.media_urls == ()
    assert not again.audio_as_voice
