"""Parsing the tools.media block: capabilities, entries, limits, scope."""

from __future__ import annotations

import math

import pytest

from enrichment.pipeline.config.media import (
    AttachmentPolicy,
    CapabilityConfig,
    MediaConfig,
    MediaModelEntry,
    clamp_concurrency,
    media_config_to_dict,
    parse_media_config,
    resolve_max_bytes,
    resolve_max_chars,
    resolve_prompt,
    resolve_timeout_seconds,
    trim_output,
)
from tests.enrichment.pipeline.media.helpers import MIB, config_of

# --- config: defaults, precedence, parsing ------------------------------------------------


@pytest.mark.parametrize(
    ("capability", "max_bytes", "max_chars", "timeout", "prompt"),
    [
        ("image", 10 * MIB, 500, 60.0, "Describe the image. Respond in at most 500 characters."),
        ("audio", 20 * MIB, None, 60.0, "Transcribe the audio."),
        ("video", 50 * MIB, 500, 120.0, "Describe the video. Respond in at most 500 characters."),
    ],
    ids=["image", "audio", "video"],
)
def test_defaults(
    capability: str, max_bytes: int, max_chars: int | None, timeout: float, prompt: str
) -> None:
    config = CapabilityConfig()
    assert resolve_max_bytes(None, config, capability) == max_bytes  # type: ignore[arg-type]
    assert resolve_max_chars(None, config, capability) == max_chars  # type: ignore[arg-type]
    assert resolve_timeout_seconds(None, config, capability) == timeout  # type: ignore[arg-type]
    assert resolve_prompt(None, config, capability) == prompt  # type: ignore[arg-type]
    assert MediaConfig().concurrency == 2


def test_entry_beats_capability_beats_default() -> None:
    capability = CapabilityConfig(max_bytes=100, max_chars=50, timeout_seconds=10, prompt="Cap.")
    entry = MediaModelEntry(type="cli", command="x", max_bytes=7, max_chars=9, timeout_seconds=3)
    bare = MediaModelEntry(type="cli", command="x")
    assert resolve_max_bytes(entry, capability, "image") == 7
    assert resolve_max_bytes(bare, capability, "image") == 100
    assert resolve_max_chars(entry, capability, "image") == 9
    assert resolve_max_chars(bare, capability, "image") == 50
    assert resolve_timeout_seconds(entry, capability, "video") == 3
    assert resolve_timeout_seconds(bare, capability, "video") == 10
    assert resolve_prompt(bare, capability, "image") == "Cap. Respond in at most 50 characters."


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0.5, 1.0), (1.2345, 1.234), (30, 30.0), (math.inf, 60.0), (math.nan, 60.0)],
    ids=["min-one-second", "floored-ms", "whole", "infinite-default", "nan-default"],
)
def test_timeout_resolution(seconds: float, expected: float) -> None:
    config = CapabilityConfig(timeout_seconds=seconds)
    assert resolve_timeout_seconds(None, config, "image") == expected


@pytest.mark.parametrize(
    ("entry_prompt", "cap_prompt", "cap_chars", "capability", "expected"),
    [
        (
            None,
            "Say what you see.",
            None,
            "image",
            "Say what you see. Respond in at most 500 characters.",
        ),
        (
            "",
            "Say what you see.",
            None,
            "image",
            "Describe the image. Respond in at most 500 characters.",
        ),
        ("  ", None, None, "video", "Describe the video. Respond in at most 500 characters."),
        ("Mine.", "Theirs.", 0, "image", "Mine."),
        (None, "Words only.", 40, "audio", "Words only."),
        (None, None, 80, "video", "Describe the video. Respond in at most 80 characters."),
    ],
    ids=[
        "capability",
        "empty-entry-masks",
        "blank-default",
        "zero-no-suffix",
        "audio-no-suffix",
        "cap-chars",
    ],
)
def test_prompt_resolution(
    entry_prompt: str | None,
    cap_prompt: str | None,
    cap_chars: int | None,
    capability: str,
    expected: str,
) -> None:
    entry = MediaModelEntry(type="cli", command="x", prompt=entry_prompt)
    config = CapabilityConfig(prompt=cap_prompt, max_chars=cap_chars)
    assert resolve_prompt(entry, config, capability) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 2), (-1, 2), (math.nan, 2), (math.inf, 2), (1, 1), (2.7, 2), (3, 3), (9, 3)],
    ids=["zero", "negative", "nan", "inf", "one", "floor", "three", "capped"],
)
def test_concurrency_clamp(value: float, expected: int) -> None:
    assert clamp_concurrency(value) == expected


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [("  abc  ", None, "abc"), ("abcdef", 3, "abc"), ("ab cdef", 3, "ab"), ("abc", 0, "abc")],
    ids=["trim", "cut", "cut-then-trim", "zero-unlimited"],
)
def test_trim_output(text: str, limit: int | None, expected: str) -> None:
    assert trim_output(text, limit) == expected


FULL_CONFIG = {
    "concurrency": 3,
    "models": [{"type": "provider", "provider": "openai", "model": "gpt-4o-mini-transcribe"}],
    "audio": {
        "enabled": True,
        "maxBytes": 1048576,
        "timeoutSeconds": 30,
        "language": "en",
        "scope": {
            "default": "deny",
            "rules": [{"action": "allow", "match": {"chatType": "direct"}}],
        },
        "attachments": {"mode": "all", "maxAttachments": 2, "prefer": "last"},
        "models": [
            {
                "type": "cli",
                "command": "whisper-cli",
                "args": ["-otxt", "-of", "{{OutputBase}}", "{{MediaPath}}"],
                "timeoutSeconds": 45.5,
            }
        ],
    },
    "image": {"prompt": "What is it?", "maxChars": 200, "headers": {"X-Team": "ops"}},
    "video": {"enabled": False},
}


def test_parse_and_round_trip() -> None:
    config = config_of(FULL_CONFIG)
    assert config.concurrency == 3
    assert config.audio.attachments == AttachmentPolicy(
        mode="all", max_attachments=2, prefer="last"
    )
    assert config.audio.models[0].args[2] == "{{OutputBase}}"
    assert config.audio.scope is not None and config.audio.scope.default == "deny"
    assert config.video.enabled is False
    assert config.models[0].type == "provider"
    assert media_config_to_dict(config) == FULL_CONFIG
    assert config_of(media_config_to_dict(config)) == config


def test_empty_config_is_defaults() -> None:
    assert config_of({}) == MediaConfig()
    assert config_of(None) == MediaConfig()
    assert media_config_to_dict(MediaConfig()) == {"concurrency": 2}


@pytest.mark.parametrize(
    ("obj", "path", "message"),
    [
        ({"imgae": {}}, "tools.media.imgae", "unknown key"),
        ({"concurrency": 0}, "tools.media.concurrency", "must be at least 1"),
        ({"concurrency": "2"}, "tools.media.concurrency", "must be an integer"),
        ({"audio": {"enabled": "yes"}}, "tools.media.audio.enabled", "must be true or false"),
        (
            {"audio": {"models": [{"type": "cli"}]}},
            "tools.media.audio.models[0].command",
            "required for a cli entry",
        ),
        (
            {"models": [{"model": "x"}]},
            "tools.media.models[0].provider",
            "required for a provider entry",
        ),
        (
            {"models": [{"type": "rest", "provider": "x"}]},
            "tools.media.models[0].type",
            'must be one of cli, provider (got "rest")',
        ),
        (
            {"audio": {"models": [{"command": "w", "args": ["{{Media-Path}}"]}]}},
            "tools.media.audio.models[0].args[0]",
            'invalid placeholder "{{Media-Path}}"',
        ),
        (
            {"audio": {"models": [{"command": "w", "args": "x"}]}},
            "tools.media.audio.models[0].args",
            "must be a list of strings",
        ),
        (
            {"models": [{"provider": "x", "capabilities": ["smell"]}]},
            "tools.media.models[0].capabilities",
            'unknown capability "smell"',
        ),
        (
            {"image": {"scope": {"rules": [{"match": {"chatType": "room"}}]}}},
            "tools.media.image.scope.rules[0].match.chatType",
            'unknown chat type "room"',
        ),
        (
            {"image": {"attachments": {"mode": "some"}}},
            "tools.media.image.attachments.mode",
            'must be one of first, all (got "some")',
        ),
        (
            {"image": {"attachments": {"maxAttachments": 0}}},
            "tools.media.image.attachments.maxAttachments",
            "must be at least 1",
        ),
        ({"image": {"maxChars": 1.5}}, "tools.media.image.maxChars", "must be an integer"),
        (
            {"image": {"headers": {"X": 1}}},
            "tools.media.image.headers",
            "must be an object of strings",
        ),
        ({"video": []}, "tools.media.video", "must be an object"),
        ({"models": {}}, "tools.media.models", "must be a list"),
    ],
    ids=[
        "unknown-key",
        "concurrency-zero",
        "concurrency-string",
        "enabled-type",
        "cli-no-command",
        "provider-missing",
        "bad-type",
        "bad-template",
        "args-not-list",
        "bad-capability",
        "bad-chat-type",
        "bad-mode",
        "max-attachments-zero",
        "fractional-chars",
        "header-values",
        "capability-not-object",
        "models-not-list",
    ],
)
def test_validation_names_the_path(obj: object, path: str, message: str) -> None:
    _, issues = parse_media_config(obj)
    assert (path, message) in [(issue.path, issue.message) for issue in issues]
