"""Which model entries a capability tries, in which order."""

from __future__ import annotations

from pathlib import Path

import pytest

from enrichment.pipeline.media.providers import (
    _GEMINI_PROBES,
    LocalTools,
    ProviderAccess,
    auto_entries,
    configured_entries,
)
from enrichment.pipeline.runner import run_command
from tests.enrichment.pipeline.media.helpers import (
    CountingRunner,
    config_of,
    fake_which,
    make_cli,
    no_which,
)

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
