"""Reading a media CLI's answer: output file, JSON response field, plain stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from enrichment.pipeline.media.providers import (
    command_id,
    resolve_cli_output,
)

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
