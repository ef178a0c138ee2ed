"""Run a media model entry that is a local CLI (notes §8).

The CLI gets its media through templated args (``{{MediaPath}}``, ``{{OutputDir}}``…) and may
answer through a transcript file, a JSON ``response`` field or plain stdout (notes §8.3):

    resolve_cli_output("whisper", ["--output_dir", "/tmp/o", "--output_format", "txt", "a.ogg"],
                       stdout="", media_path="/m/a.ogg")
    # reads /tmp/o/a.txt when it exists and is not blank, else falls back to stdout
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from typing import Literal

from enrichment.pipeline.config.media import (
    MediaModelEntry,
    resolve_max_bytes,
    resolve_max_chars,
    resolve_prompt,
    resolve_timeout_seconds,
    trim_output,
)
from enrichment.pipeline.media.entry import (
    CLI_OUTPUT_MAX_BYTES,
    EntryJob,
    EntryResult,
    ModelAttempt,
    check_audio_size,
    command_id,
)
from enrichment.pipeline.runner import CommandResult, CommandRunner
from enrichment.pipeline.templates import render_template


async def run_cli_entry(job: EntryJob, runner: CommandRunner) -> EntryResult:
    command = (job.entry.command or "").strip()
    if not command:
        return ModelAttempt("cli", None, None, "failed", "cli entry has no command"), None
    file = await job.load(resolve_max_bytes(job.entry, job.config, job.capability))
    check_audio_size(job, file)
    timeout = resolve_timeout_seconds(job.entry, job.config, job.capability)
    max_chars = resolve_max_chars(job.entry, job.config, job.capability)
    scratch = tempfile.mkdtemp(prefix="controlui-media-cli-")
    try:
        media_path = file.path
        if job.capability == "audio" and command_id(command) == "whisper-cli":
            media_path = await _convert_to_wav(file.path, scratch, runner, timeout)
        variables = {
            **job.variables,
            **media_variables(job, media_path, file.mime or ""),
            "OutputDir": scratch,
            "OutputBase": os.path.join(scratch, _stem(media_path)),
            "Prompt": resolve_prompt(job.entry, job.config, job.capability),
            "MaxChars": "" if max_chars is None else str(max_chars),
        }
        args = [render_template(arg, variables) for arg in job.entry.args]
        argv = (command, *args)
        result = await runner(
            argv, timeout_seconds=timeout, max_stdout_bytes=CLI_OUTPUT_MAX_BYTES, cwd=scratch
        )
        text = None
        if result.outcome != "failed":
            text = trim_output(
                resolve_cli_output(command, args, result.stdout_text, media_path), max_chars
            )
        label = cli_provider_label(job.entry)
        return _cli_attempt(command, argv, result, text, label), text or None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def media_variables(job: EntryJob, media_path: str, mime: str) -> dict[str, str]:
    """The attachment's template variables. OpenClaw 2026.9 names them twice (``Media*`` and
    ``Attachment*``; its own examples use ``{{AttachmentPath}}``) and adds ``Language`` for
    audio, so an entry written for it runs here unchanged. ``MediaUrl`` falls back to the
    local path when the attachment came without a URL, as there."""
    directory = os.path.dirname(media_path)
    url = job.media_url or media_path
    variables = {
        "MediaPath": media_path,
        "MediaDir": directory,
        "MediaUrl": url,
        "MediaType": mime,
        "AttachmentPath": media_path,
        "AttachmentDir": directory,
        "AttachmentUrl": url,
        "AttachmentContentType": mime,
        "AttachmentIndex": str(job.attachment_index),
    }
    language = job.entry.language or job.config.language
    if job.capability == "audio" and language:
        variables["Language"] = language
    return variables


def cli_provider_label(entry: MediaModelEntry) -> str | None:
    """The ``provider`` a CLI entry's skipped or failed attempt shows: the label configured
    on the entry (``{"type": "cli", "provider": "local-whisper", ...}``), else none. A success
    always says ``cli`` (notes §4)."""
    return (entry.provider or "").strip() or None


def _cli_attempt(
    command: str,
    argv: tuple[str, ...],
    result: CommandResult,
    text: str | None,
    label: str | None,
) -> ModelAttempt:
    if result.outcome == "failed":
        outcome: Literal["success", "skipped", "failed"] = "failed"
        reason = result.reason
    elif text:
        outcome, reason = "success", None
    else:
        outcome, reason = "skipped", "empty output"
    return ModelAttempt(
        type="cli",
        provider="cli" if outcome == "success" else label,
        model=command,
        outcome=outcome,
        reason=reason,
        argv=argv,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        stderr_tail=result.stderr_tail or None,
    )


async def _convert_to_wav(path: str, scratch: str, runner: CommandRunner, timeout: float) -> str:
    """whisper.cpp reads only 16 kHz mono PCM WAV; other inputs go through ffmpeg first."""
    if path.lower().endswith(".wav"):
        return path
    target = os.path.join(scratch, _stem(path) + ".wav")
    argv = ("ffmpeg", "-y", "-i", path, "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", target)
    result = await runner(argv, timeout_seconds=timeout, max_stdout_bytes=CLI_OUTPUT_MAX_BYTES)
    if result.exit_code != 0:
        raise RuntimeError(f"ffmpeg conversion failed: {result.reason}")
    return target


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _value_after(args: Sequence[str], *flags: str) -> str | None:
    for index, arg in enumerate(args[:-1]):
        if arg in flags and args[index + 1]:
            return args[index + 1]
    return None


def transcript_file(command: str, args: Sequence[str], media_path: str) -> str | None:
    """Where a known CLI writes its transcript, when its args ask for a .txt file."""
    name = command_id(command)
    if name == "whisper-cli":
        base = _value_after(args, "-of", "--output-file")
        wants_txt = "-otxt" in args or "--output-txt" in args
        return f"{base}.txt" if wants_txt and base else None
    if name == "whisper":
        directory = _value_after(args, "--output_dir", "-o")
        formats = _value_after(args, "--output_format")
        if directory and formats and "txt" in [f.strip() for f in formats.split(",")]:
            return os.path.join(directory, _stem(media_path) + ".txt")
        return None
    if name == "parakeet-mlx":
        directory = _value_after(args, "--output-dir")
        output_format = _value_after(args, "--output-format")
        if directory and output_format in (None, "txt"):
            return os.path.join(directory, _stem(media_path) + ".txt")
    return None


def resolve_cli_output(command: str, args: Sequence[str], stdout: str, media_path: str) -> str:
    """Transcript file, else a Gemini/sherpa JSON answer, else stdout (all trimmed)."""
    path = transcript_file(command, args, media_path)
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8", errors="replace") as handle:
            content = handle.read().strip()
        if content:
            return content
    name = command_id(command)
    if name == "gemini":
        found = gemini_response(stdout)
        if found:
            return found
    if name == "sherpa-onnx-offline":
        found = _sherpa_text(stdout)
        if found:
            return found
    return stdout.strip()


def gemini_response(stdout: str) -> str | None:
    # Parse from the *last* "{": naive on purpose (notes §14), nested objects fall through.
    trimmed = stdout.strip()
    start = trimmed.rfind("{")
    if start < 0:
        return None
    try:
        parsed = json.loads(trimmed[start:])
    except ValueError:
        return None
    response = parsed.get("response") if isinstance(parsed, dict) else None
    return response.strip() if isinstance(response, str) and response.strip() else None


def _sherpa_text(stdout: str) -> str | None:
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    for candidate in [stdout.strip(), *reversed(lines)]:
        found = _json_text(candidate, depth=0)
        if found:
            return found
    return None


def _json_text(value: str, depth: int) -> str | None:
    if depth > 3 or not value.startswith(("{", '"')):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if isinstance(parsed, str):
        return _json_text(parsed.strip(), depth + 1)
    text = parsed.get("text") if isinstance(parsed, dict) else None
    return text.strip() if isinstance(text, str) and text.strip() else None
