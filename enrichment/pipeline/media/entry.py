"""What one media model entry gets and leaves behind: its job, the file, its attempt record.

Shared by the CLI runner (``media_cli``), the HTTP provider (``media_http``) and discovery
(``media_discovery``). ``MediaSkipError`` is the *expected* way out of an entry: the run turns it
into a ``skipped`` attempt whose reason starts with the code, e.g. ``"tooSmall: Audio attachment
1 is too small (12 bytes, minimum 1024)"``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from enrichment.pipeline.config.media import Capability, CapabilityConfig, MediaModelEntry

CLI_OUTPUT_MAX_BYTES = 5 * 1024 * 1024
MIN_AUDIO_FILE_BYTES = 1024
PROVIDER_ALIASES: Mapping[str, str] = {"z.ai": "zai", "z-ai": "zai", "gemini": "google"}


class MediaSkipError(Exception):
    """An expected reason not to use an entry (``maxBytes``, ``tooSmall``, ``timeout``…)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True)
class LocalFile:
    """An attachment on local disk; ``temporary`` files are deleted when the run ends."""

    path: str
    size: int
    mime: str | None = None
    name: str | None = None
    temporary: bool = False


@dataclass(frozen=True)
class ModelAttempt:
    type: Literal["provider", "cli"]
    provider: str | None
    model: str | None
    outcome: Literal["success", "skipped", "failed"]
    reason: str | None = None
    argv: tuple[str, ...] | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    stderr_tail: str | None = None

    def to_dict(self) -> dict[str, object]:
        result: dict[str, object] = {"type": self.type, "outcome": self.outcome}
        optional = {
            "provider": self.provider,
            "model": self.model,
            "reason": self.reason,
            "argv": list(self.argv) if self.argv is not None else None,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "stderrTail": self.stderr_tail,
        }
        result.update({key: value for key, value in optional.items() if value is not None})
        return result


@dataclass(frozen=True)
class ProviderAccess:
    """Where and how to call an OpenAI-compatible provider (the glue reads keys from env)."""

    api_key: str | None = None
    base_url: str | None = None


@dataclass(frozen=True)
class EntryJob:
    """Everything one entry needs for one attachment."""

    capability: Capability
    entry: MediaModelEntry
    config: CapabilityConfig
    attachment_index: int
    media_url: str | None
    variables: Mapping[str, str]
    load: Callable[[int], Awaitable[LocalFile]]  # max_bytes -> the file, or MediaSkipError


EntryResult = tuple[ModelAttempt, str | None]


def normalize_provider_id(provider: str | None) -> str:
    cleaned = (provider or "").strip().lower()
    return PROVIDER_ALIASES.get(cleaned, cleaned)


def command_id(command: str) -> str:
    """``/usr/bin/whisper-cli.exe`` -> ``whisper-cli``."""
    base = posixpath.basename(command.replace("\\", "/"))
    return posixpath.splitext(base)[0] if "." in base[1:] else base


def check_audio_size(job: EntryJob, file: LocalFile) -> None:
    if job.capability == "audio" and file.size < MIN_AUDIO_FILE_BYTES:
        raise MediaSkipError(
            "tooSmall",
            f"Audio attachment {job.attachment_index + 1} is too small "
            f"({file.size} bytes, minimum {MIN_AUDIO_FILE_BYTES})",
        )
