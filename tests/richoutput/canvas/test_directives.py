from __future__ import annotations

import pytest

from richoutput.canvas.directives import (
    is_silent,
    sanitize_reply_id,
    strip_audio_tags,
    strip_malformed_reply_prefix,
    strip_reply_tags,
)
from richoutput.canvas.render import render_assistant_text


@pytest.mark.parametrize(
    ("text", "reply_id", "current", "visible"),
    [
        ("[[reply_to_current]] Hi", None, True, "Hi"),
        ("[[ REPLY_TO_CURRENT ]] Hi", None, True, "Hi"),
        ("[[reply_to_current\n]] Hi", None, True, "Hi"),
        ("[[reply_to:abc]] Hi", "abc", False, "Hi"),
        ("[[ reply_to : abc ]] Hi", "abc", False, "Hi"),
        ("[[Reply_To:MiXeD]] Hi", "MiXeD", False, "Hi"),
        ("[[reply_to:\nabc\n]] Hi", "abc", False, "Hi"),
        ("[[reply_to:a]] x [[reply_to:b]]", "b", False, "x"),
        ("[[reply_to:a]] x [[reply_to: ]]", "a", False, "x"),
        ("[[reply_to_current]] [[reply_to:m1]] Hi", "m1", True, "Hi"),
        ("[[reply_to: ]] Hi", None, False, "Hi"),
        ("[[reply_to:\n  ]] Hi", None, False, "Hi"),
        ("[[reply_to:a\x00b\tc]] Hi", "abc", False, "Hi"),
        ("[[reply_to:[x]] Hi", "x", False, "Hi"),
        ("[[reply_to:<script>alert(1)</script>]] Hi", "<script>alert(1)</script>", False, "Hi"),
    ],
    ids=[
        "current",
        "current-spaces-any-case",
        "current-newline-before-close",
        "explicit",
        "explicit-spaces",
        "explicit-case-preserved",
        "explicit-surrounding-line-feeds",
        "last-explicit-wins",
        "blank-does-not-reset",
        "current-and-explicit",
        "blank-id-tag-sets-nothing",
        "whitespace-id-with-line-feed",
        "control-chars-deleted",
        "brackets-deleted",
        "html-id-kept-as-text",
    ],
)
def test_reply_grammar(text: str, reply_id: str | None, current: bool, visible: str) -> None:
    result = strip_reply_tags(text)
    assert (result.reply_to_id, result.reply_to_current, result.text) == (
        reply_id,
        current,
        visible,
    )


@pytest.mark.parametrize(
    "text",
    [
        "[[reply_to:]] Hi",
        "[[reply_to:\n]] Hi",
        "[[reply_to:a\nb]] Hi",
        "[[reply_to_current foo]] Hi",
        "[[reply_to:abc] Hi ]",
        "`[[reply_to:abc]]` Hi",
        "```\n[[reply_to:abc]]\n```",
        "intro\n\n    [[reply_to:abc]]",
        "[reply_to:abc]] Hi",
    ],
    ids=[
        "empty-id",
        "only-line-feed",
        "line-feed-inside-id",
        "junk-after-current",
        "single-bracket-then-text",
        "inline-code",
        "fenced-code",
        "indented-code",
        "single-open-bracket",
    ],
)
def test_not_a_reply_tag(text: str) -> None:
    result = strip_reply_tags(text)
    assert not result.tag_seen
    assert result.text == text


def test_reply_id_capped_at_256_code_points() -> None:
    assert sanitize_reply_id("x" * 300) == "x" * 256
    assert sanitize_reply_id("😀" * 300) == "😀" * 256


def test_reply_id_cap_never_splits_surrogate_pair() -> None:
    pairs = "\ud83d\ude00" * 300  # UTF-16 pairs as separate code units
    capped = sanitize_reply_id(pairs)
    assert capped == "\ud83d\ude00" * 256


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("  a  ", "a"), ("\x00\x85", None), ("[]", None), ("a\u0085b", "ab"), ("Ab", "Ab")],
)
def test_sanitize_reply_id(raw: str, expected: str | None) -> None:
    assert sanitize_reply_id(raw) == expected


@pytest.mark.parametrize(
    ("text", "found", "visible"),
    [
        ("[[audio_as_voice]] hi", True, " hi"),
        ("hi [[ AUDIO_AS_VOICE ]]", True, "hi "),
        ("[[\naudio_as_voice\n]]", True, ""),
        ("[[audio_as_voice] hi", False, "[[audio_as_voice] hi"),
        ("`[[audio_as_voice]]`", False, "`[[audio_as_voice]]`"),
        ("[[audio_as_voice]][[audio_as_voice]]x", True, "x"),
    ],
    ids=["tag", "any-case-spaces", "newlines-inside", "malformed", "inline-code", "repeated"],
)
def test_audio_tag(text: str, found: bool, visible: str) -> None:
    result = strip_audio_tags(text)
    assert result.found is found
    assert result.text.rstrip() == visible.rstrip()


def test_audio_inside_reply_id_completes_reply_tag() -> None:
    rendered = render_assistant_text("[[reply_to:[[audio_as_voice]]id]] ok")
    assert (rendered.reply_to_id, rendered.audio_as_voice, rendered.text) == ("id", True, "ok")


# Notes §6.3: each removed directive closes only its own gap.
@pytest.mark.parametrize(
    ("text", "visible"),
    [
        ("Hello  [[reply_to_current]]  world", "Hello world"),
        ("see[[reply_to_current]]now", "see now"),
        ("Hello  [[reply_to_current]]  \nworld", "Hello\nworld"),
        ("[[reply_to_current]]    keep", "    keep"),
        ("Hello [[reply_to_current]]", "Hello"),
        ("Hello\n\n[[reply_to_current]]\n\n\nworld", "Hello\n\nworld"),
        ("L1\n[[reply_to_current]]\nL2", "L1\n\nL2"),
        ("[[reply_to_current]]\n\nHello", "Hello"),
        ("[[reply_to_current]] Hello", "Hello"),
        ("[[[reply_to_current]]hello", "[ hello"),
        ("a  b [[reply_to:1]] c   d", "a  b c   d"),
        ("Hi [[reply_to_current]] [[audio_as_voice]] there", "Hi there"),
        ("x\r\n[[reply_to_current]]\r\ny", "x\r\n\r\ny"),
        ("A\n\n\n\nB [[reply_to_current]]", "A\n\n\n\nB"),
        ("keep  double  spaces [[reply_to_current]]\n    code", "keep  double  spaces\n    code"),
        ("[[reply_to_current]]\n```\ncode  \n```", "```\ncode  \n```"),
    ],
    ids=[
        "between-words-one-space",
        "glued-words-get-space",
        "before-line-break",
        "line-start-keeps-indent",
        "end-of-message",
        "alone-on-line-collapses-seam",
        "alone-between-lines-leaves-blank",
        "leading-line-breaks-removed",
        "single-leading-space-removed",
        "extra-bracket-stays",
        "other-spacing-untouched",
        "adjacent-directives-one-run",
        "crlf-untouched",
        "existing-blank-lines-kept",
        "indented-code-kept",
        "fence-kept",
    ],
)
def test_whitespace_rule(text: str, visible: str) -> None:
    assert render_assistant_text(text).text == visible


@pytest.mark.parametrize(
    "text",
    ["  spaced  text  ", "a\n\n\n\nb", "\n\nleading", "x\r\ny", "tab\there"],
    ids=["spaces", "blank-lines", "leading-newlines", "crlf", "tab"],
)
def test_text_without_directives_only_trimmed_at_end(text: str) -> None:
    assert render_assistant_text(text).text == text.rstrip()


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("[[reply_to_current] Hello", "Hello"),
        ("  [[reply_to_current Hello", "Hello"),
        ("[[reply_to_current", ""),
        ("[[reply_to:abc] Hello", "Hello"),
        ("[[reply_to:", ""),
        ("[[reply_to:abc text", "[[reply_to:abc text"),
        ("Hi [[reply_to_current] there", "Hi [[reply_to_current] there"),
        ("[[reply_to:a\nb] Hello", "[[reply_to:a\nb] Hello"),
    ],
    ids=[
        "single-close",
        "current-then-text",
        "bare-current",
        "explicit-single-close",
        "bare-explicit-at-end",
        "unterminated-explicit-kept",
        "after-visible-text-kept",
        "id-with-line-feed-kept",
    ],
)
def test_malformed_leading_prefix(text: str, cleaned: str) -> None:
    assert strip_malformed_reply_prefix(text) == cleaned
    rendered = render_assistant_text(text, "cur")
    assert rendered.text == cleaned
    assert rendered.reply_to_id is None
    assert not rendered.reply_to_current


@pytest.mark.parametrize(
    ("text", "silent"),
    [
        ("NO_REPLY", True),
        ("  NO_REPLY\n", True),
        ('{"action":"NO_REPLY"}', True),
        ('{"action": "NO_REPLY", "x": 1}', False),
        ("NO_REPLY please", False),
        ("no_reply", False),
    ],
)
def test_silent_token(text: str, silent: bool) -> None:
    assert is_silent(text) is silent
    assert (render_assistant_text(text).text == "") is silent


def test_reply_to_current_uses_current_message_id() -> None:
    rendered = render_assistant_text("[[reply_to_current]] ok", "msg-7")
    assert (rendered.reply_to_id, rendered.reply_to_current) == ("msg-7", True)


def test_reply_to_current_without_known_id() -> None:
    rendered = render_assistant_text("[[reply_to_current]] ok")
    assert (rendered.reply_to_id, rendered.reply_to_current) == (None, True)


def test_explicit_id_beats_current_but_flag_stays() -> None:
    rendered = render_assistant_text("[[reply_to_current]][[reply_to:x9]] ok", "msg-7")
    assert (rendered.reply_to_id, rendered.reply_to_current) == ("x9", True)


def test_blank_explicit_falls_back_to_current() -> None:
    rendered = render_assistant_text("[[reply_to_current]] [[reply_to: ]] ok", "msg-7")
    assert rendered.reply_to_id == "msg-7"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[reply_to_current]] A\nB", "A\nB"),
        ("[[reply_to:x]] A\nB\nC", "A\nB\nC"),
        ("[[reply_to_current]]    keep\nB", "    keep\nB"),
        ("[[audio_as_voice]] line one\n\nline two", "line one\n\nline two"),
    ],
    ids=["reply-current-space", "reply-id-space", "indentation-kept", "audio-space"],
)
def test_removing_a_leading_tag_keeps_later_line_breaks(text: str, expected: str) -> None:
    # The boundary clean-up removes leading blank lines only at the very start, never a
    # line break further on (a leading "[[tag]] " used to glue the first two lines).
    assert render_assistant_text(text, current_message_id="m1").text == expected
