"""Whole media-understanding runs with fake fetchers and CLIs."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from enrichment.pipeline.config.media import (
    MediaConfig,
)
from enrichment.pipeline.files.extraction import FileLimits
from enrichment.pipeline.media.providers import (
    MediaSkipError,
)
from enrichment.pipeline.media.understanding import (
    ActiveModel,
    Attachment,
    AttachmentCache,
    MediaProgress,
    run_media_understanding,
)
from tests.enrichment.pipeline.media.helpers import (
    FAKES,
    FIXTURES,
    WAV,
    CountingRunner,
    FakeFetcher,
    config_of,
    fake_which,
    make_cli,
    no_which,
)

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


async def test_each_model_attempt_is_timed_in_its_own_span(tmp_path: Path) -> None:
    from contextlib import contextmanager

    spans: list[tuple[str, dict]] = []

    @contextmanager
    def recording_span(name, attributes):
        attributes = dict(attributes)
        spans.append((name, attributes))
        yield attributes.__setitem__

    describe = str(FAKES / "describe.py")
    entries = [
        {"command": sys.executable, "args": [describe, "--exit", "3", "partial"]},
        {"command": sys.executable, "args": [describe, "A picture"]},
    ]
    result = await run_media_understanding(
        config_of({"image": {"models": entries}}),
        "",
        [Attachment(0, url="https://cdn.test/p.png", mime="image/png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"\x89PNG\r\n\x1a\n"}),
        which=no_which,
        span=recording_span,
    )
    assert result.outputs[0].text == "A picture"
    assert [
        (name, a["capability"], a["attachment"], a["type"], a["outcome"]) for name, a in spans
    ] == [
        ("media.attempt", "image", 0, "cli", "failed"),
        ("media.attempt", "image", 0, "cli", "success"),
    ]
    assert spans[0][1]["reason"] == "exited with code 3"
    assert spans[0][1]["command"] == sys.executable
