"""Which model entries run for a capability: configured ones, else discovered (notes §7).

Discovery order (generation B): the active reply model when its provider has a key, local
audio CLIs (sherpa-onnx, whisper.cpp, whisper), a working Gemini CLI, then any provider with a
key. ``which`` and the process runner are parameters, so tests choose what is "installed".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from enrichment.pipeline.config.media import Capability, MediaConfig, MediaModelEntry
from enrichment.pipeline.media.cli import gemini_response
from enrichment.pipeline.media.entry import (
    CLI_OUTPUT_MAX_BYTES,
    ModelAttempt,
    ProviderAccess,
    normalize_provider_id,
)
from enrichment.pipeline.runner import CommandRunner

GEMINI_PROBE_TIMEOUT_SECONDS = 8.0
PROVIDER_CAPABILITIES: Mapping[str, tuple[Capability, ...]] = {
    "groq": ("audio",),
    "openai": ("image", "audio"),
    "google": ("image", "audio", "video"),
    "anthropic": ("image",),
    "minimax": ("image",),
    "minimax-portal": ("image",),
    "moonshot": ("image", "video"),
    "mistral": ("audio",),
    "zai": ("image", "audio"),
    "deepgram": ("audio",),
}
KEY_PROVIDER_ORDER: Mapping[Capability, tuple[str, ...]] = {
    "audio": ("openai", "groq", "deepgram", "google", "mistral"),
    "image": ("openai", "anthropic", "google", "minimax", "zai"),
    "video": ("google", "moonshot"),
}
WHISPER_CPP_FALLBACK_MODEL = "/opt/homebrew/share/whisper-cpp/for-tests-ggml-tiny.bin"


@dataclass(frozen=True)
class LocalTools:
    """Model files for local CLIs (the glue fills these from ``SHERPA_ONNX_MODEL_DIR`` and
    ``WHISPER_CPP_MODEL``); ``is_file`` is injectable so tests need no real models."""

    sherpa_model_dir: str | None = None
    whisper_cpp_model: str | None = None
    is_file: Callable[[str], bool] = os.path.isfile


# Probed once per process per binary, as upstream: the probe costs a model call.
_GEMINI_PROBES: dict[str, bool] = {}


def active_vision_skip(provider: str, model: str | None) -> ModelAttempt:
    reason = "primary model supports vision natively"
    return ModelAttempt("provider", provider, model, "skipped", reason)


def configured_entries(config: MediaConfig, capability: Capability) -> list[MediaModelEntry]:
    """Capability models, then shared models that apply to this capability (notes §7.1)."""
    kept = list(config.capability(capability).models)
    kept = [e for e in kept if not e.capabilities or capability in e.capabilities]
    for entry in config.models:
        if entry.capabilities:
            inherited: tuple[Capability, ...] = entry.capabilities
        elif entry.type == "provider":
            inherited = PROVIDER_CAPABILITIES.get(normalize_provider_id(entry.provider), ())
        else:
            inherited = ()  # a shared CLI must say which capabilities it serves
        if capability in inherited:
            kept.append(entry)
    return kept


async def model_entries(
    config: MediaConfig,
    capability: Capability,
    *,
    which: Callable[[str], str | None],
    runner: CommandRunner,
    providers: Mapping[str, ProviderAccess],
    active_provider: str | None,
    active_model: str | None,
    local_tools: LocalTools,
) -> list[MediaModelEntry]:
    entries = configured_entries(config, capability)
    if entries:
        return entries
    return await auto_entries(
        capability, which, runner, providers, active_provider, active_model, local_tools
    )


async def auto_entries(
    capability: Capability,
    which: Callable[[str], str | None],
    runner: CommandRunner,
    providers: Mapping[str, ProviderAccess],
    active_provider: str | None,
    active_model: str | None,
    local_tools: LocalTools,
) -> list[MediaModelEntry]:
    """Generation B order: active model, local audio CLIs, Gemini CLI, provider keys."""
    active = normalize_provider_id(active_provider)
    if active and _has_key(active, capability, providers) and active_model:
        return [MediaModelEntry(type="provider", provider=active, model=active_model)]
    if capability == "audio":
        local = _local_audio_entry(which, local_tools)
        if local is not None:
            return [local]
    gemini = which("gemini")
    if gemini and await _gemini_works(gemini, runner):
        return [MediaModelEntry(type="cli", command=gemini, args=GEMINI_ARGS)]
    # The notes' fixed order decides between several keys, never the order (or the names)
    # of the environment; providers outside that list come after it, by name.
    order = [active] if active else []
    order += [p for p in KEY_PROVIDER_ORDER[capability] if p not in order]
    order += sorted(p for p in providers if p not in order)
    for provider in order:
        if _has_key(provider, capability, providers):
            return [MediaModelEntry(type="provider", provider=provider)]
    return []


GEMINI_ARGS = (
    "--output-format",
    "json",
    "--allowed-tools",
    "read_many_files",
    "--include-directories",
    "{{MediaDir}}",
    "{{Prompt}}",
    "Use read_many_files to read {{MediaPath}} and respond with only the text output.",
)


def _has_key(
    provider: str, capability: Capability, providers: Mapping[str, ProviderAccess]
) -> bool:
    access = providers.get(provider)
    capable = capability in PROVIDER_CAPABILITIES.get(provider, ())
    return capable and access is not None and bool(access.api_key)


def _local_audio_entry(
    which: Callable[[str], str | None], tools: LocalTools
) -> MediaModelEntry | None:
    sherpa = which("sherpa-onnx-offline")
    if sherpa and tools.sherpa_model_dir:
        parts = ("tokens.txt", "encoder.onnx", "decoder.onnx", "joiner.onnx")
        paths = [os.path.join(tools.sherpa_model_dir, part) for part in parts]
        if all(tools.is_file(path) for path in paths):
            flags = [
                f"--{part.split('.')[0]}={path}" for part, path in zip(parts, paths, strict=True)
            ]
            return MediaModelEntry(type="cli", command=sherpa, args=(*flags, "{{MediaPath}}"))
    whisper_cpp = which("whisper-cli")
    if whisper_cpp:
        candidates = [tools.whisper_cpp_model, WHISPER_CPP_FALLBACK_MODEL]
        model = next((c for c in candidates if c and tools.is_file(c)), None)
        if model:
            cpp_args = (
                "-m",
                model,
                "-otxt",
                "-of",
                "{{OutputBase}}",
                "-np",
                "-nt",
                "{{MediaPath}}",
            )
            return MediaModelEntry(type="cli", command=whisper_cpp, args=cpp_args)
    whisper = which("whisper")
    if whisper:
        args = (
            *("--model", "turbo", "--output_format", "txt", "--output_dir", "{{OutputDir}}"),
            *("--verbose", "False", "{{MediaPath}}"),
        )
        return MediaModelEntry(type="cli", command=whisper, args=args)
    return None


async def _gemini_works(command: str, runner: CommandRunner) -> bool:
    if command not in _GEMINI_PROBES:
        result = await runner(
            (command, "--output-format", "json", "ok"),
            timeout_seconds=GEMINI_PROBE_TIMEOUT_SECONDS,
            max_stdout_bytes=CLI_OUTPUT_MAX_BYTES,
        )
        stdout = result.stdout_text
        works = result.outcome == "success" and (
            gemini_response(stdout) is not None or "ok" in stdout.lower()
        )
        _GEMINI_PROBES[command] = works
    return _GEMINI_PROBES[command]
