from __future__ import annotations

import asyncio
import json
import math
import os
import stat
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from enrichment.pipeline.files import FileLimits
from enrichment.pipeline.media import (
    ActiveModel,
    Attachment,
    AttachmentCache,
    MediaOutput,
    MediaProgress,
    attachment_kind,
    extract_media_user_text,
    format_media_body,
    format_transcripts,
    run_media_understanding,
    select_attachments,
)
from enrichment.pipeline.media_config import (
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
from enrichment.pipeline.media_providers import (
    _GEMINI_PROBES,
    LocalFile,
    LocalTools,
    MediaSkipError,
    ProviderAccess,
    auto_entries,
    command_id,
    configured_entries,
    resolve_cli_output,
)
from enrichment.pipeline.runner import CommandResult, run_command

FAKES = Path(__file__).parent / "fake_media_clis"
FIXTURES = Path(__file__).parent / "fixtures"
MIB = 1024 * 1024
WAV = b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(2100)  # > 1024 bytes: not "too small"


def config_of(obj: object) -> MediaConfig:
    config, issues = parse_media_config(obj)
    assert issues == []
    return config


def make_cli(tmp_path: Path, name: str, script: str) -> str:
    """A wrapper named like the real tool (command ids matter) running a fake script."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / name
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKES / script}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


class FakeFetcher:
    """Writes each attachment's bytes to a temp file, like the guarded downloader would."""

    def __init__(self, tmp_path: Path, contents: Mapping[int, bytes | BaseException]) -> None:
        self.tmp_path = tmp_path
        self.contents = contents
        self.calls: list[int] = []
        self.written: list[Path] = []

    async def __call__(self, attachment: Attachment) -> LocalFile:
        self.calls.append(attachment.index)
        await asyncio.sleep(0)
        value = self.contents[attachment.index]
        if isinstance(value, BaseException):
            raise value
        source = attachment.path or attachment.url or f"media-{attachment.index + 1}"
        name = os.path.basename(source.split("?", 1)[0])
        target = self.tmp_path / "downloads" / str(attachment.index) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(value)
        self.written.append(target)
        return LocalFile(str(target), len(value), attachment.mime, name, temporary=True)


class CountingRunner:
    """In-process runner that measures how many CLIs run at once."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.in_flight = 0
        self.peak = 0
        self.argvs: list[tuple[str, ...]] = []

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = 0,
        cwd: str | None = None,
    ) -> CommandResult:
        self.argvs.append(tuple(argv))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        return CommandResult("success", None, 0, 1, f"seen by {argv[0]}", 10, "")


def no_which(name: str) -> str | None:
    return None


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
        ({"concurrency": "2"}, "tools.media.concurrency", "must be a number"),
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
        ({"image": {"maxChars": 1.5}}, "tools.media.image.maxChars", "must be a whole number"),
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


# --- attachments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attachment", "kind"),
    [
        (Attachment(0, path="/m/a.bin", mime="Image/PNG; q=1"), "image"),
        (Attachment(0, path="/m/a.mp4"), "video"),
        (Attachment(0, path="/m/a.M4V"), "video"),
        (Attachment(0, path="/m/a.opus"), "audio"),
        (Attachment(0, path="/m/a.tif"), "image"),
        (Attachment(0, url="https://x.test/v/clip.webm?sig=1"), "video"),
        (Attachment(0, url="https://x.test/a.ogg#t=1"), "audio"),
        (Attachment(0, path="/m/report.pdf"), None),
        (Attachment(0, path="/m/a.ogg", mime="application/pdf"), "audio"),
        (Attachment(0, url="https://x.test/download"), None),
    ],
    ids=[
        "mime",
        "mp4",
        "m4v-upper",
        "opus",
        "tif",
        "url-query",
        "url-fragment",
        "pdf",
        "ext-fallback",
        "unknown",
    ],
)
def test_attachment_kind(attachment: Attachment, kind: str | None) -> None:
    assert attachment_kind(attachment) == kind


IMAGES = [
    Attachment(0, url="https://x.test/a.png"),
    Attachment(1, path="/m/b.png"),
    Attachment(2, path="/m/voice.ogg"),
    Attachment(3, url="https://x.test/c.png"),
]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (AttachmentPolicy(), [0]),
        (AttachmentPolicy(mode="all"), [0]),
        (AttachmentPolicy(mode="all", max_attachments=5), [0, 1, 3]),
        (AttachmentPolicy(mode="all", max_attachments=2, prefer="last"), [3, 1]),
        (AttachmentPolicy(prefer="path"), [1]),
        (AttachmentPolicy(mode="all", max_attachments=3, prefer="path"), [1, 0, 3]),
        (AttachmentPolicy(mode="first", max_attachments=3, prefer="url"), [0]),
    ],
    ids=[
        "default-first",
        "all-default-one",
        "all-many",
        "last",
        "prefer-path",
        "path-stable",
        "first-ignores-max",
    ],
)
def test_select_attachments(policy: AttachmentPolicy, expected: list[int]) -> None:
    assert [a.index for a in select_attachments(IMAGES, "image", policy)] == expected


# --- entries ------------------------------------------------------------------------------

CAP_CLI = {"command": "cap-cli"}
SHARED_CLI = {"command": "shared-cli"}
SHARED_CLI_IMAGE = {"command": "shared-img", "capabilities": ["image"]}
SHARED_GROQ = {"provider": "groq", "model": "w"}
SHARED_OPENAI = {"provider": "OpenAI", "model": "m"}
CAP_VIDEO_ONLY = {"command": "v-only", "capabilities": ["video"]}


@pytest.mark.parametrize(
    ("capability", "expected"),
    [
        ("audio", ["cap-cli", "groq", "OpenAI"]),
        ("image", ["shared-img", "OpenAI"]),
        ("video", []),
    ],
    ids=["audio", "image", "video"],
)
def test_configured_entries(capability: str, expected: list[str]) -> None:
    config = config_of(
        {
            "models": [SHARED_CLI, SHARED_CLI_IMAGE, SHARED_GROQ, SHARED_OPENAI],
            "audio": {"models": [CAP_CLI, CAP_VIDEO_ONLY]},
        }
    )
    entries = configured_entries(config, capability)  # type: ignore[arg-type]
    assert [e.command or e.provider for e in entries] == expected


def fake_which(tools: Mapping[str, str]) -> object:
    return lambda name: tools.get(name)


async def test_auto_whisper_cli_needs_a_model_file() -> None:
    which = fake_which({"whisper-cli": "/bin/whisper-cli", "whisper": "/bin/whisper"})
    runner = CountingRunner()
    with_model = LocalTools(
        whisper_cpp_model="/models/tiny.bin", is_file=lambda p: p == "/models/tiny.bin"
    )
    entries = await auto_entries("audio", which, runner, {}, None, None, with_model)  # type: ignore[arg-type]
    assert entries[0].command == "/bin/whisper-cli"
    assert entries[0].args == (
        "-m",
        "/models/tiny.bin",
        "-otxt",
        "-of",
        "{{OutputBase}}",
        "-np",
        "-nt",
        "{{MediaPath}}",
    )
    without = LocalTools(is_file=lambda p: False)
    entries = await auto_entries("audio", which, runner, {}, None, None, without)  # type: ignore[arg-type]
    assert entries[0].command == "/bin/whisper"
    assert "--output_dir" in entries[0].args and entries[0].args[-1] == "{{MediaPath}}"


async def test_auto_sherpa_needs_all_four_model_files() -> None:
    which = fake_which({"sherpa-onnx-offline": "/bin/sherpa-onnx-offline"})
    tools = LocalTools(sherpa_model_dir="/s", is_file=lambda p: True)
    entries = await auto_entries("audio", which, CountingRunner(), {}, None, None, tools)  # type: ignore[arg-type]
    assert entries[0].args == (
        "--tokens=/s/tokens.txt",
        "--encoder=/s/encoder.onnx",
        "--decoder=/s/decoder.onnx",
        "--joiner=/s/joiner.onnx",
        "{{MediaPath}}",
    )
    missing = LocalTools(sherpa_model_dir="/s", is_file=lambda p: not p.endswith("joiner.onnx"))
    assert await auto_entries("audio", which, CountingRunner(), {}, None, None, missing) == []  # type: ignore[arg-type]


async def test_auto_gemini_probe_and_key_order(tmp_path: Path) -> None:
    gemini = make_cli(tmp_path, "gemini", "gemini.py")
    which = fake_which({"gemini": gemini})
    entries = await auto_entries("video", which, run_command, {}, None, None, LocalTools())  # type: ignore[arg-type]
    assert entries[0].command == gemini and "{{MediaPath}}" in entries[0].args[-1]
    assert _GEMINI_PROBES[gemini] is True
    keys = {"groq": ProviderAccess(api_key="g"), "openai": ProviderAccess(api_key="o")}
    audio = await auto_entries("audio", no_which, run_command, keys, None, None, LocalTools())
    assert [e.provider for e in audio] == ["openai"]  # the notes' order: openai before groq
    image = await auto_entries("image", no_which, run_command, keys, None, None, LocalTools())
    assert [e.provider for e in image] == ["openai"]  # groq cannot see
    active = await auto_entries(
        "audio", no_which, run_command, keys, "OpenAI", "whisper-1", LocalTools()
    )
    assert [(e.provider, e.model) for e in active] == [("openai", "whisper-1")]
    assert await auto_entries("video", no_which, run_command, keys, None, None, LocalTools()) == []


# --- CLI output resolution ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "file", "stdout", "expected"),
    [
        ("whisper-cli", ["-otxt", "-of", "{out}/a"], "a.txt", "noise", "from file"),
        (
            "/usr/bin/whisper-cli.exe",
            ["--output-txt", "--output-file", "{out}/a"],
            "a.txt",
            "noise",
            "from file",
        ),
        ("whisper-cli", ["-of", "{out}/a"], "a.txt", "noise", "noise"),
        (
            "whisper",
            ["--output_dir", "{out}", "--output_format", "srt,txt"],
            "clip.txt",
            "x",
            "from file",
        ),
        ("whisper", ["-o", "{out}", "--output_format", "srt"], "clip.txt", "x", "x"),
        ("parakeet-mlx", ["--output-dir", "{out}"], "clip.txt", "x", "from file"),
        (
            "parakeet-mlx",
            ["--output-dir", "{out}", "--output-format", "json"],
            "clip.txt",
            "x",
            "x",
        ),
        ("whisper-cli", ["-otxt", "-of", "{out}/blank"], "blank.txt", "stdout wins", "stdout wins"),
        ("gemini", [], None, 'Loading...\n{"response": "  a cat  "}', "a cat"),
        (
            "gemini",
            [],
            None,
            '{"response": "a", "stats": {"n": 1}}',
            '{"response": "a", "stats": {"n": 1}}',
        ),
        ("gemini", [], None, '{"response": "   "}', '{"response": "   "}'),
        ("sherpa-onnx-offline", [], None, 'log line\n{"text": " hello "}\n', "hello"),
        ("sherpa-onnx-offline", [], None, '"{\\"text\\": \\"nested\\"}"', "nested"),
        ("sherpa-onnx-offline", [], None, '{"text": "last"}\nplain tail', "last"),
        ("other", [], None, "  plain  \n", "plain"),
    ],
    ids=[
        "whisper-cli-file",
        "whisper-cli-long-flags",
        "whisper-cli-no-otxt",
        "whisper-formats",
        "whisper-no-txt",
        "parakeet",
        "parakeet-json",
        "blank-file",
        "gemini-json",
        "gemini-nested-raw",
        "gemini-blank",
        "sherpa-line",
        "sherpa-string",
        "sherpa-earlier-line",
        "stdout",
    ],
)
def test_resolve_cli_output(
    tmp_path: Path, command: str, args: list[str], file: str | None, stdout: str, expected: str
) -> None:
    if file:
        (tmp_path / file).write_text("  \n" if file == "blank.txt" else " from file \n")
    rendered = [arg.replace("{out}", str(tmp_path)) for arg in args]
    assert resolve_cli_output(command, rendered, stdout, "/media/clip.ogg") == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/usr/bin/whisper-cli.exe", "whisper-cli"),
        ("gemini", "gemini"),
        ("C:\\t\\whisper.EXE", "whisper"),
        (".hidden", ".hidden"),
    ],
    ids=["path-ext", "bare", "windows", "dotfile"],
)
def test_command_id(command: str, expected: str) -> None:
    assert command_id(command) == expected


# --- envelope -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", None),
        ("   ", None),
        ("<media:audio>", None),
        ("<media:image> (2 images)", None),
        ("<MEDIA:image>(photo)", None),
        ("<media:audio> what did she say?", "what did she say?"),
        ("hello <media:audio>", "hello <media:audio>"),
        ("  plain text ", "plain text"),
    ],
    ids=[
        "empty",
        "blank",
        "placeholder",
        "placeholder-paren",
        "case",
        "leading",
        "not-leading",
        "plain",
    ],
)
def test_extract_media_user_text(body: str, expected: str | None) -> None:
    assert extract_media_user_text(body) == expected


def out(kind: str, index: int, text: str) -> MediaOutput:
    return MediaOutput(kind, index, text, "cli", "x")


@pytest.mark.parametrize(
    ("outputs", "user_text", "expected"),
    [
        ([out("audio.transcription", 0, "call me")], None, "[Audio]\nTranscript:\ncall me"),
        (
            [out("audio.transcription", 0, "call me")],
            "what?",
            "[Audio]\nUser text:\nwhat?\nTranscript:\ncall me",
        ),
        (
            [out("image.description", 0, "a cat"), out("audio.transcription", 1, "meow")],
            "look",
            "User text:\nlook\n\n[Image]\nDescription:\na cat\n\n[Audio]\nTranscript:\nmeow",
        ),
        (
            [out("audio.transcription", 0, "one"), out("audio.transcription", 1, "two")],
            None,
            "[Audio 1/2]\nTranscript:\none\n\n[Audio 2/2]\nTranscript:\ntwo",
        ),
        (
            [out("image.description", 0, "  "), out("video.description", 1, "a dog runs")],
            "hi",
            "[Video]\nUser text:\nhi\nDescription:\na dog runs",
        ),
        ([out("image.description", 0, " ")], "hi", ""),
    ],
    ids=[
        "single",
        "single-user-text",
        "mixed-user-text-first",
        "numbered",
        "blank-dropped",
        "all-blank",
    ],
)
def test_format_media_body(
    outputs: list[MediaOutput], user_text: str | None, expected: str
) -> None:
    assert format_media_body(outputs, user_text) == expected


def test_format_transcripts() -> None:
    assert format_transcripts([out("image.description", 0, "x")]) is None
    assert format_transcripts([out("audio.transcription", 0, "a")]) == "a"
    both = [out("audio.transcription", 0, "a"), out("audio.transcription", 2, "b")]
    assert format_transcripts(both) == "Audio 1:\na\n\nAudio 2:\nb"


# --- full runs ----------------------------------------------------------------------------


async def test_real_whisper_cli_transcribes_and_cleans_up(tmp_path: Path) -> None:
    whisper = make_cli(tmp_path, "whisper-cli", "whisper_cli.py")
    config = config_of(
        {
            "audio": {
                "models": [
                    {
                        "command": whisper,
                        "args": ["-otxt", "-of", "{{OutputBase}}", "-np", "{{MediaPath}}"],
                    }
                ]
            }
        }
    )
    fetcher = FakeFetcher(tmp_path, {0: WAV})
    progress: list[MediaProgress] = []
    result = await run_media_understanding(
        config,
        "<media:audio>",
        [Attachment(0, path="/inbound/note.wav", mime="audio/wav")],
        channel="telegram",
        chat_type="direct",
        session_key="agent:main:telegram:dm:1",
        fetch_bytes=fetcher,
        which=no_which,
        on_progress=progress.append,
    )
    transcript = f"whisper-cli heard note.wav ({len(WAV)} bytes)"
    assert result.body == f"[Audio]\nTranscript:\n{transcript}"
    assert result.transcript == transcript
    audio = result.decisions[1].to_dict()
    assert audio["capability"] == "audio" and audio["outcome"] == "success"
    chosen = audio["attachments"][0]["chosen"]  # type: ignore[index]
    assert chosen["provider"] == "cli" and chosen["model"] == whisper and chosen["exitCode"] == 0
    assert chosen["argv"][-1].endswith("note.wav")
    assert [d.outcome for d in result.decisions] == ["no-attachment", "success", "no-attachment"]
    assert [event.to_dict() for event in progress] == [
        {
            "stage": "media",
            "capability": "audio",
            "attachmentIndex": 0,
            "text": "Transcribing audio attachment 1...",
        }
    ]
    assert result.outputs[0].to_dict() == {
        "kind": "audio.transcription",
        "attachmentIndex": 0,
        "text": transcript,
        "provider": "cli",
        "model": whisper,
    }
    assert result.files[0].skipped == "transcribed"
    assert fetcher.calls == [0]
    assert not any(path.exists() for path in fetcher.written)


async def test_auto_discovered_whisper_on_ogg(tmp_path: Path) -> None:
    whisper = make_cli(tmp_path, "whisper", "whisper.py")
    data = (FIXTURES / "tiny.ogg").read_bytes() * 30
    result = await run_media_understanding(
        MediaConfig(),
        "what is this?",
        [Attachment(0, url="https://cdn.test/voice-1.ogg")],
        channel="slack",
        chat_type="group",
        session_key="k",
        fetch_bytes=FakeFetcher(tmp_path, {0: data}),
        which=fake_which({"whisper": whisper}),  # type: ignore[arg-type]
    )
    assert (
        result.body
        == "[Audio]\nUser text:\nwhat is this?\nTranscript:\nwhisper transcript of voice-1"
    )
    assert result.outputs[0].kind == "audio.transcription"


async def test_gemini_cli_describes_video_with_templated_prompt(tmp_path: Path) -> None:
    gemini = make_cli(tmp_path, "gemini", "gemini.py")
    result = await run_media_understanding(
        config_of({"video": {"maxChars": 0}}),
        "",
        [Attachment(0, path="/in/clip.mp4")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"\x00\x00\x00\x18ftyp" + bytes(64)}),
        which=fake_which({"gemini": gemini}),  # type: ignore[arg-type]
    )
    assert result.body == "[Video]\nDescription:\ngemini: Describe the video. [clip.mp4]"


@pytest.mark.parametrize(
    ("capability_config", "outcome", "attachments"),
    [
        ({"enabled": False}, "disabled", []),
        ({"scope": {"default": "deny"}}, "scope-deny", [{"attachmentIndex": 0, "attempts": []}]),
        (
            {"scope": {"rules": [{"action": "deny", "match": {"channel": "SLACK"}}]}},
            "scope-deny",
            [{"attachmentIndex": 0, "attempts": []}],
        ),
        (
            {"scope": {"rules": [{"action": "deny", "match": {"channel": "discord"}}]}},
            "skipped",
            [{"attachmentIndex": 0, "attempts": []}],
        ),
        ({}, "skipped", [{"attachmentIndex": 0, "attempts": []}]),
    ],
    ids=["disabled", "default-deny", "rule-deny", "rule-not-matching", "no-entries"],
)
async def test_capability_outcomes(
    tmp_path: Path, capability_config: dict[str, object], outcome: str, attachments: list[object]
) -> None:
    fetcher = FakeFetcher(tmp_path, {0: b"png"})
    result = await run_media_understanding(
        config_of({"image": capability_config}),
        "hi",
        [Attachment(0, path="/a.png")],
        channel="slack",
        chat_type="group",
        session_key="s",
        fetch_bytes=fetcher,
        which=no_which,
    )
    image = result.decisions[0].to_dict()
    assert (image["outcome"], image["attachments"]) == (outcome, attachments)
    assert result.body == "hi"
    assert fetcher.calls == []  # nothing downloaded for a capability that did not run


async def test_scope_deny_records_the_matched_rule(tmp_path: Path) -> None:
    scope = {
        "rules": [
            {"action": "allow", "match": {"chatType": "dm"}},
            {"action": "deny", "match": {"keyPrefix": "Agent:"}},
        ]
    }
    result = await run_media_understanding(
        config_of({"image": {"scope": scope}}),
        "",
        [Attachment(0, path="/a.png")],
        channel="slack",
        chat_type="group",
        session_key="agent:main:x",
        fetch_bytes=FakeFetcher(tmp_path, {}),
        which=no_which,
    )
    assert result.decisions[0].to_dict()["matchedRule"] == 1


async def test_native_vision_skip(tmp_path: Path) -> None:
    result = await run_media_understanding(
        config_of({"image": {"models": [{"command": "never-run"}]}}),
        "",
        [Attachment(0, path="/a.png"), Attachment(1, path="/b.jpg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {}),
        which=no_which,
        active_model=ActiveModel("OpenAI", "gpt-4o", supports_vision=True),
    )
    skip = {
        "type": "provider",
        "provider": "OpenAI",
        "model": "gpt-4o",
        "outcome": "skipped",
        "reason": "primary model supports vision natively",
    }
    assert result.decisions[0].to_dict() == {
        "capability": "image",
        "outcome": "skipped",
        "attachments": [{"attachmentIndex": 0, "attempts": [skip], "chosen": skip}],
    }


async def test_fallback_chain_and_single_fetch(tmp_path: Path) -> None:
    describe = str(FAKES / "describe.py")
    entries = [
        {"command": sys.executable, "args": [describe, "--exit", "3", "partial"]},
        {"command": sys.executable, "args": [describe, ""]},
        {"command": "/nonexistent/describer"},
        {
            "command": sys.executable,
            "args": [describe, "A {{MediaType}} at {{MediaUrl}}, max {{MaxChars}}"],
        },
    ]
    fetcher = FakeFetcher(tmp_path, {0: b"\x89PNG\r\n\x1a\n"})
    result = await run_media_understanding(
        config_of({"image": {"models": entries, "maxChars": 60}}),
        "",
        [Attachment(0, url="https://cdn.test/p.png", mime="image/png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=fetcher,
        which=no_which,
    )
    attempts = result.decisions[0].attachments[0].attempts
    assert [(a.outcome, a.reason) for a in attempts] == [
        ("failed", "exited with code 3"),
        ("skipped", "empty output"),
        ("failed", "command not found: /nonexistent/describer"),
        ("success", None),
    ]
    assert result.outputs[0].text == "A image/png at https://cdn.test/p.png, max 60"
    assert result.decisions[0].attachments[0].chosen == attempts[3]
    assert fetcher.calls == [0]


@pytest.mark.parametrize(
    ("fetched", "attempt"),
    [
        (
            MediaSkipError("blocked", "private address 10.0.0.1"),
            ("skipped", "blocked: private address 10.0.0.1"),
        ),
        (
            MediaSkipError("timeout", "download timed out"),
            ("skipped", "timeout: download timed out"),
        ),
        (RuntimeError("connection refused"), ("failed", "RuntimeError: connection refused")),
        (b"x" * 2048, ("skipped", "maxBytes: Attachment 1 exceeds maxBytes 1024")),
        (
            b"x" * 1023,
            ("skipped", "tooSmall: Audio attachment 1 is too small (1023 bytes, minimum 1024)"),
        ),
    ],
    ids=["blocked", "timeout", "error", "max-bytes", "too-small"],
)
async def test_download_failures_are_recorded(
    tmp_path: Path, fetched: bytes | BaseException, attempt: tuple[str, str]
) -> None:
    config = config_of(
        {"audio": {"maxBytes": 1024, "models": [{"command": "a"}, {"command": "b"}]}}
    )
    fetcher = FakeFetcher(tmp_path, {0: fetched})
    runner = CountingRunner()
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, url="https://x.test/v.ogg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=fetcher,
        runner=runner,
        which=no_which,
    )
    attempts = result.decisions[1].attachments[0].attempts
    assert [(a.outcome, a.reason) for a in attempts] == [attempt, attempt]
    assert [a.model for a in attempts] == ["a", "b"]
    assert result.decisions[1].outcome == "skipped"
    assert fetcher.calls == [0] and runner.argvs == []


async def test_attachment_without_location_is_empty(tmp_path: Path) -> None:
    cache = AttachmentCache(FakeFetcher(tmp_path, {}))
    with pytest.raises(MediaSkipError, match="empty: Attachment 3 has no path or URL."):
        await cache.get(Attachment(2, mime="audio/ogg"), 10)


async def test_cache_fetches_once_for_concurrent_readers(tmp_path: Path) -> None:
    fetcher = FakeFetcher(tmp_path, {0: b"abc"})
    cache = AttachmentCache(fetcher)
    first, second = await asyncio.gather(
        cache.get(Attachment(0, path="/a.png"), 10), cache.get(Attachment(0, path="/a.png"), 10)
    )
    assert first == second and fetcher.calls == [0]
    await cache.cleanup()
    assert not Path(first.path).exists()


ALL_KINDS = [
    Attachment(0, path="/a.png"),
    Attachment(1, path="/b.wav"),
    Attachment(2, path="/c.mp4"),
]
ALL_CONTENT = {0: b"img", 1: WAV, 2: b"vid"}


@pytest.mark.parametrize(
    ("concurrency", "peak"), [(1, 1), (2, 2), (3, 3), (7, 3)], ids=["one", "two", "three", "capped"]
)
async def test_capabilities_never_exceed_concurrency(
    tmp_path: Path, concurrency: int, peak: int
) -> None:
    cli = [{"command": "describer"}]
    config = config_of(
        {
            "concurrency": concurrency,
            "image": {"models": cli},
            "audio": {"models": cli},
            "video": {"models": cli},
        }
    )
    runner = CountingRunner()
    result = await run_media_understanding(
        config,
        "",
        ALL_KINDS,
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, ALL_CONTENT),
        runner=runner,
        which=no_which,
    )
    assert runner.peak == peak
    assert [o.kind for o in result.outputs] == [
        "image.description",
        "audio.transcription",
        "video.description",
    ]


@pytest.mark.parametrize(
    ("concurrency", "log"),
    [(2, "start start end end"), (1, "start end start end")],
    ids=["parallel", "serial"],
)
async def test_two_slow_real_clis_run_in_parallel(
    tmp_path: Path, concurrency: int, log: str
) -> None:
    log_file = tmp_path / "log.txt"
    slow = [
        {
            "command": sys.executable,
            "args": [str(FAKES / "describe.py"), "--sleep", "0.6", "--log", str(log_file), "seen"],
        }
    ]
    config = config_of(
        {"concurrency": concurrency, "image": {"models": slow}, "video": {"models": slow}}
    )
    result = await run_media_understanding(
        config,
        "",
        [ALL_KINDS[0], ALL_KINDS[2]],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, ALL_CONTENT),
        which=no_which,
    )
    assert " ".join(log_file.read_text().split()) == log
    assert [d.outcome for d in result.decisions] == ["success", "no-attachment", "success"]


async def test_temp_files_removed_when_a_capability_crashes(tmp_path: Path) -> None:
    def exploding_progress(event: MediaProgress) -> None:
        raise RuntimeError("socket closed")

    fetcher = FakeFetcher(tmp_path, {0: b"img", 1: b"hello"})
    result = await run_media_understanding(
        config_of({"image": {"models": [{"command": "x"}]}}),
        "body",
        [Attachment(0, path="/a.png"), Attachment(1, path="/n.txt")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=fetcher,
        runner=CountingRunner(),
        which=no_which,
        on_progress=exploding_progress,
    )
    assert [d.capability for d in result.decisions] == ["audio", "video"]  # image left a hole
    assert result.body == 'body\n\n<file name="n.txt" mime="text/plain">\nhello\n</file>'
    assert fetcher.written and not any(path.exists() for path in fetcher.written)


async def test_files_are_extracted_after_capabilities(tmp_path: Path) -> None:
    ogg = (FIXTURES / "tiny.ogg").read_bytes()
    attachments = [
        Attachment(0, path="/in/data.csv", mime="text/csv"),
        Attachment(1, path="/in/voice.ogg"),
        Attachment(2, url="https://x.test/blob", name="voice-note"),
        Attachment(3, path="/in/huge.txt"),
        Attachment(4, url="https://x.test/gone.md"),
    ]
    contents: dict[int, bytes | BaseException] = {
        0: b"a,b\n1,2",
        1: ogg,
        2: ogg,
        3: b"x" * 2048,
        4: RuntimeError("HTTP 404"),
    }
    result = await run_media_understanding(
        MediaConfig(),
        "<media:document>",
        attachments,
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, contents),
        which=no_which,
        file_limits=FileLimits(max_bytes=1024),
    )
    assert (
        result.body
        == '<media:document>\n\n<file name="data.csv" mime="text/csv">\na,b\n1,2\n</file>'
    )
    assert [(f.attachment_index, f.skipped) for f in result.files] == [
        (0, None),
        (1, "binary"),
        (2, "binary"),
        (3, "too-large"),
        (4, "fetch-failed: RuntimeError: HTTP 404"),
    ]
    assert result.files[0].to_dict() == {
        "attachmentIndex": 0,
        "name": "data.csv",
        "mime": "text/csv",
        "encoding": "utf-8",
        "skipped": None,
    }


# --- OpenAI-compatible HTTP provider against a local server -------------------------------


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        server: FakeProviderServer = self.server  # type: ignore[assignment]
        server.requests.append((self.path, dict(self.headers), body))
        status, payload = server.replies.get(self.path, (404, b"{}"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return


class FakeProviderServer(ThreadingHTTPServer):
    requests: list[tuple[str, dict[str, str], bytes]]
    replies: dict[str, tuple[int, bytes]]


@pytest.fixture
def provider_server() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer(("127.0.0.1", 0), _Handler)
    server.requests, server.replies = [], {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def base_url(server: FakeProviderServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


async def test_http_audio_transcription(
    tmp_path: Path, provider_server: FakeProviderServer
) -> None:
    provider_server.replies["/v1/audio/transcriptions"] = (
        200,
        json.dumps({"text": " bonjour "}).encode(),
    )
    config = config_of(
        {
            "audio": {
                "language": "fr",
                "models": [{"provider": "groq", "baseUrl": base_url(provider_server)}],
            }
        }
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/in/v.ogg", mime="audio/ogg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: WAV}),
        which=no_which,
        providers={"groq": ProviderAccess(api_key="sk-test")},
    )
    assert result.body == "[Audio]\nTranscript:\nbonjour"
    chosen = result.decisions[1].attachments[0].chosen
    assert chosen is not None and (chosen.provider, chosen.model) == (
        "groq",
        "whisper-large-v3-turbo",
    )
    path, headers, body = provider_server.requests[0]
    assert path == "/v1/audio/transcriptions" and headers["Authorization"] == "Bearer sk-test"
    assert b'name="model"\r\n\r\nwhisper-large-v3-turbo' in body
    assert b'name="language"\r\n\r\nfr' in body and WAV in body and b'filename="v.ogg"' in body


async def test_http_image_description(tmp_path: Path, provider_server: FakeProviderServer) -> None:
    reply = {"choices": [{"message": {"content": "A red square on white, " + "very " * 50}}]}
    provider_server.replies["/v1/chat/completions"] = (200, json.dumps(reply).encode())
    config = config_of(
        {
            "image": {
                "maxChars": 30,
                "headers": {"X-Org": "ops"},
                "models": [{"provider": "openai", "model": "gpt-4o-mini"}],
            }
        }
    )
    result = await run_media_understanding(
        config,
        "what is it",
        [Attachment(0, path="/in/p.png", mime="image/png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"\x89PNGdata"}),
        which=no_which,
        providers={"OpenAI": ProviderAccess(api_key="k", base_url=base_url(provider_server))},
    )
    assert result.outputs[0].text == "A red square on white, very ve"
    _, headers, body = provider_server.requests[0]
    sent = json.loads(body)
    assert headers["X-Org"] == "ops" and sent["model"] == "gpt-4o-mini"
    content = sent["messages"][0]["content"]
    assert content[0] == {
        "type": "text",
        "text": "Describe the image. Respond in at most 30 characters.",
    }
    assert content[1]["image_url"]["url"] == "data:image/png;base64,iVBOR2RhdGE="


@pytest.mark.parametrize(
    ("status", "payload", "access", "reason"),
    [
        (500, b"{}", "k", "HTTP 500 from provider openai"),
        (200, b"not json", "k", "RuntimeError: provider returned invalid JSON"),
        (200, b'{"choices": []}', "k", "RuntimeError: provider response has no text"),
        (200, b"{}", None, "no API key for provider openai"),
    ],
    ids=["server-error", "bad-json", "no-text", "no-key"],
)
async def test_http_failures_are_attempts(
    tmp_path: Path,
    provider_server: FakeProviderServer,
    status: int,
    payload: bytes,
    access: str | None,
    reason: str,
) -> None:
    provider_server.replies["/v1/chat/completions"] = (status, payload)
    config = config_of(
        {
            "image": {
                "models": [
                    {"provider": "openai", "model": "m", "baseUrl": base_url(provider_server)}
                ]
            }
        }
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/p.png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"img"}),
        which=no_which,
        providers={"openai": ProviderAccess(api_key=access)},
    )
    attempt = result.decisions[0].attachments[0].attempts[0]
    assert (attempt.outcome, attempt.reason) == ("failed", reason)


async def test_http_video_is_unsupported(tmp_path: Path) -> None:
    config = config_of({"video": {"models": [{"provider": "google", "model": "g"}]}})
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/c.mp4")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"v"}),
        which=no_which,
    )
    attempt = result.decisions[2].attachments[0].attempts[0]
    assert attempt.outcome == "skipped" and (attempt.reason or "").startswith("unsupported:")


class ScriptedRunner(CountingRunner):
    """Records argv; ffmpeg 'converts' by writing the target file unless told to fail."""

    def __init__(self, ffmpeg_exit: int) -> None:
        super().__init__(delay=0)
        self.ffmpeg_exit = ffmpeg_exit

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = 0,
        cwd: str | None = None,
    ) -> CommandResult:
        self.argvs.append(tuple(argv))
        if argv[0] == "ffmpeg":
            if self.ffmpeg_exit == 0:
                Path(argv[-1]).write_bytes(WAV)
                return CommandResult("skipped", "empty output", 0, 1, "", 0, "")
            return CommandResult("failed", "exited with code 1", 1, 1, "", 0, "bad input")
        return CommandResult("success", None, 0, 1, f"heard {Path(argv[-1]).name}", 9, "")


@pytest.mark.parametrize(
    ("ffmpeg_exit", "expected"),
    [
        (0, ("success", None)),
        (1, ("failed", "RuntimeError: ffmpeg conversion failed: exited with code 1")),
    ],
    ids=["converted", "ffmpeg-fails"],
)
async def test_whisper_cli_gets_a_wav(
    tmp_path: Path, ffmpeg_exit: int, expected: tuple[str, str | None]
) -> None:
    runner = ScriptedRunner(ffmpeg_exit)
    config = config_of(
        {"audio": {"models": [{"command": "whisper-cli", "args": ["{{MediaPath}}"]}]}}
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/in/voice.ogg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: WAV}),
        runner=runner,
        which=no_which,
    )
    attempt = result.decisions[1].attachments[0].attempts[0]
    assert (attempt.outcome, attempt.reason) == expected
    ffmpeg = runner.argvs[0]
    assert ffmpeg[:3] == ("ffmpeg", "-y", "-i") and ffmpeg[3].endswith("voice.ogg")
    assert ffmpeg[4:10] == ("-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le")
    if ffmpeg_exit == 0:
        assert runner.argvs[1] == ("whisper-cli", ffmpeg[-1])
        assert result.outputs[0].text == "heard voice.wav"


async def test_cancelled_run_still_removes_downloads(tmp_path: Path) -> None:
    started = asyncio.Event()

    class HangingRunner(CountingRunner):
        async def __call__(
            self,
            argv: Sequence[str],
            *,
            timeout_seconds: float,
            max_stdout_bytes: int = 0,
            cwd: str | None = None,
        ) -> CommandResult:
            started.set()
            await asyncio.sleep(60)
            raise AssertionError("not reached")

    fetcher = FakeFetcher(tmp_path, {0: b"img"})
    run = asyncio.ensure_future(
        run_media_understanding(
            config_of({"image": {"models": [{"command": "x"}]}}),
            "",
            [Attachment(0, path="/a.png")],
            channel=None,
            chat_type=None,
            session_key=None,
            fetch_bytes=fetcher,
            runner=HangingRunner(),
            which=no_which,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    assert fetcher.written[0].exists()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not fetcher.written[0].exists()
