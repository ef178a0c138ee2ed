"""The verbose-log summary and the /status line of media decisions (notes §4)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enrichment.pipeline.media.summary import status_line, summary_line


def attempt(outcome: str, **fields: object) -> dict[str, object]:
    return {"type": "provider", "outcome": outcome, **fields}


def described(provider: str = "openai", model: str | None = "gpt-4o-mini") -> dict[str, object]:
    chosen = attempt("success", provider=provider, **({"model": model} if model else {}))
    return {"attachmentIndex": 0, "attempts": [chosen], "chosen": chosen}


IMAGE_OK = {"capability": "image", "outcome": "success", "attachments": [described()]}
AUDIO_NONE = {"capability": "audio", "outcome": "no-attachment", "attachments": []}
VIDEO_SKIPPED = {
    "capability": "video",
    "outcome": "skipped",
    "attachments": [
        {
            "attachmentIndex": 1,
            "attempts": [
                attempt(
                    "skipped", reason="maxBytes: Video attachment 1 base64 payload 9 exceeds 8"
                ),
                attempt("failed", reason="HTTP 500"),
            ],
        }
    ],
}


@pytest.mark.parametrize(
    ("decision", "line"),
    [
        (IMAGE_OK, "image: success (1/1) via openai/gpt-4o-mini"),
        (AUDIO_NONE, "audio: no-attachment"),
        (VIDEO_SKIPPED, "video: skipped (0/1) reason=maxBytes"),
        (
            {
                "capability": "audio",
                "outcome": "success",
                "attachments": [
                    {
                        "attachmentIndex": 0,
                        "attempts": [
                            attempt("failed", reason="exit code 1"),
                            attempt("success", provider="cli", model="whisper"),
                        ],
                        "chosen": attempt("success", provider="cli", model="whisper"),
                    },
                    {"attachmentIndex": 1, "attempts": [attempt("skipped", reason="empty output")]},
                ],
            },
            "audio: success (1/2) via cli/whisper reason=exit code 1",
        ),
        ({"capability": "image", "outcome": "disabled"}, "image: disabled"),
        (
            {"capability": "image", "outcome": "scope-deny", "attachments": [{"attempts": []}]},
            "image: scope-deny (0/1)",
        ),
    ],
    ids=[
        "provider success",
        "nothing attached",
        "skipped reason",
        "cli after a failure",
        "disabled",
        "denied",
    ],
)
def test_summary_line(decision: dict[str, object], line: str) -> None:
    assert summary_line(decision) == line


@pytest.mark.parametrize(
    ("decisions", "line"),
    [
        ([IMAGE_OK, AUDIO_NONE], "📎 Media: image ok (openai/gpt-4o-mini) · audio none"),
        (
            [
                {
                    "capability": "image",
                    "outcome": "success",
                    "attachments": [
                        described(),
                        {**described("cli", "describe"), "attachmentIndex": 1},
                    ],
                }
            ],
            "📎 Media: image x2 ok (openai/gpt-4o-mini)",
        ),
        (
            [
                {
                    "capability": "audio",
                    "outcome": "success",
                    "attachments": [described("groq", None)],
                }
            ],
            "📎 Media: audio ok (groq)",
        ),
        ([VIDEO_SKIPPED], "📎 Media: video skipped (maxBytes)"),
        (
            [{"capability": "video", "outcome": "skipped", "attachments": []}],
            "📎 Media: video skipped",
        ),
        (
            [
                {"capability": "image", "outcome": "disabled"},
                {"capability": "audio", "outcome": "scope-deny"},
            ],
            "📎 Media: image off · audio denied",
        ),
        ([AUDIO_NONE, {**AUDIO_NONE, "capability": "video"}], None),  # every part "none"
        ([], None),
        ([{"capability": "file", "outcome": "success", "files": []}], None),  # not a capability
    ],
    ids=[
        "ok and none",
        "two described",
        "provider without model",
        "skipped with reason",
        "skipped without reason",
        "off and denied",
        "all none",
        "nothing",
        "file record only",
    ],
)
def test_status_line(decisions: list[dict[str, object]], line: str | None) -> None:
    assert status_line(decisions) == line


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
RECORDS = st.dictionaries(
    st.sampled_from(["capability", "outcome", "attachments", "chosen", "attempts", "reason"]),
    JSONISH | st.sampled_from(["image", "audio", "success", "skipped"]),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(records=st.lists(RECORDS | JSONISH, max_size=4))
def test_odd_records_never_raise(records: list[object]) -> None:
    # Runs recorded by older versions (or edited by hand) must still render.
    line = status_line(records)
    assert line is None or line.startswith("📎 Media: ")
    for record in records:
        if isinstance(record, dict):
            assert isinstance(summary_line(record), str)
