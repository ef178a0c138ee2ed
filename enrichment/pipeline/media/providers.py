"""Run one media model entry: a local CLI or an OpenAI-compatible HTTP provider.

``run_entry`` is the one place that turns whatever an entry does into a ``ModelAttempt``:
an answer, an expected ``MediaSkipError`` (``skipped``) or any other exception (``failed``,
never the end of the run). For example a provider that answers with HTML instead of JSON::

    ModelAttempt(type="provider", provider="openai", model="gpt-5-mini", outcome="failed",
                 reason="RuntimeError: provider returned invalid JSON")

The pieces live in ``media_entry`` (values), ``media_cli``, ``media_http`` and
``media_discovery``; their public names are re-exported here for callers and tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from enrichment.pipeline.media.cli import (
    cli_provider_label,
    gemini_response,
    resolve_cli_output,
    run_cli_entry,
    transcript_file,
)
from enrichment.pipeline.media.discovery import (
    _GEMINI_PROBES,
    GEMINI_ARGS,
    KEY_PROVIDER_ORDER,
    PROVIDER_CAPABILITIES,
    WHISPER_CPP_FALLBACK_MODEL,
    LocalTools,
    active_vision_skip,
    auto_entries,
    configured_entries,
    model_entries,
)
from enrichment.pipeline.media.entry import (
    CLI_OUTPUT_MAX_BYTES,
    MIN_AUDIO_FILE_BYTES,
    PROVIDER_ALIASES,
    EntryJob,
    EntryResult,
    LocalFile,
    MediaSkipError,
    ModelAttempt,
    ProviderAccess,
    command_id,
    normalize_provider_id,
)
from enrichment.pipeline.media.http import (
    DEFAULT_AUDIO_MODELS,
    DEFAULT_BASE_URLS,
    DEFAULT_IMAGE_MODELS,
    HttpPost,
    HttpRequest,
    HttpResponse,
    provider_post,
    run_provider_entry,
)
from enrichment.pipeline.runner import CommandRunner

__all__ = [
    "_GEMINI_PROBES",
    "CLI_OUTPUT_MAX_BYTES",
    "DEFAULT_AUDIO_MODELS",
    "DEFAULT_BASE_URLS",
    "DEFAULT_IMAGE_MODELS",
    "GEMINI_ARGS",
    "KEY_PROVIDER_ORDER",
    "MIN_AUDIO_FILE_BYTES",
    "PROVIDER_ALIASES",
    "PROVIDER_CAPABILITIES",
    "WHISPER_CPP_FALLBACK_MODEL",
    "EntryJob",
    "EntryResult",
    "HttpPost",
    "HttpRequest",
    "HttpResponse",
    "LocalFile",
    "LocalTools",
    "MediaSkipError",
    "ModelAttempt",
    "ProviderAccess",
    "active_vision_skip",
    "auto_entries",
    "command_id",
    "configured_entries",
    "gemini_response",
    "provider_post",
    "model_entries",
    "normalize_provider_id",
    "resolve_cli_output",
    "run_cli_entry",
    "run_entry",
    "run_provider_entry",
    "transcript_file",
]


async def run_entry(
    job: EntryJob,
    *,
    runner: CommandRunner,
    http: HttpPost,
    providers: Mapping[str, ProviderAccess],
) -> EntryResult:
    """Run ``job.entry`` for one attachment; never raises for a fault of the entry itself."""
    entry = job.entry
    is_cli = entry.type == "cli"
    provider = cli_provider_label(entry) if is_cli else normalize_provider_id(entry.provider)
    model = entry.command if is_cli else entry.model
    try:
        if is_cli:
            return await run_cli_entry(job, runner)
        return await run_provider_entry(job, http, providers)
    except MediaSkipError as error:
        return ModelAttempt(entry.type, provider, model, "skipped", str(error)), None
    except Exception as error:  # any fault of one entry is an attempt, never the run's end
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return ModelAttempt(entry.type, provider, model, "failed", reason), None
