"""The media envelopes appended to the body."""

from __future__ import annotations

import pytest

from enrichment.pipeline.media.understanding import (
    MediaOutput,
    extract_media_user_text,
    format_media_body,
    format_transcripts,
)

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
