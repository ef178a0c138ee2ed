"""Media understanding: turn attached images, audio and video into text for the agent.

One run (notes §3): the three capabilities (image → audio → video) run through a pool of at
most ``concurrency`` workers; each picks its attachments, checks its scope, then tries model
entries in order until one answers. Outputs become an envelope that replaces the body::

    [Audio]
    User text:
    what did she say?
    Transcript:
    call me back after five

Then every other attachment goes through file extraction and its ``<file>`` block is appended.
Each capability leaves a ``MediaDecision`` and each attachment a ``FileOutcome`` — also when
nothing happened, with the reason why.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from enrichment.pipeline.config.media import (
    CAPABILITIES,
    Capability,
    MediaConfig,
    MediaModelEntry,
    clamp_concurrency,
)
from enrichment.pipeline.config.scope import evaluate_scope
from enrichment.pipeline.files.extraction import FileLimits
from enrichment.pipeline.media.attachments import (
    Attachment,
    AttachmentCache,
    FetchBytes,
    FileExtractor,
    FileOutcome,
    attachment_kind,
    extract_attachment_files,
    extract_in_thread,
    select_attachments,
)
from enrichment.pipeline.media.envelope import (
    OUTPUT_KIND,
    MediaOutput,
    extract_media_user_text,
    format_media_body,
    format_transcripts,
)
from enrichment.pipeline.media.providers import (
    EntryJob,
    HttpPost,
    LocalTools,
    ModelAttempt,
    ProviderAccess,
    active_vision_skip,
    model_entries,
    normalize_provider_id,
    provider_post,
    run_entry,
)
from enrichment.pipeline.runner import CommandRunner, run_command
from enrichment.pipeline.stages import SpanOpener, no_span

# Attachments and the envelope live in their own modules; callers import them from here.
__all__ = [
    "OUTPUT_KIND",
    "ActiveModel",
    "Attachment",
    "AttachmentCache",
    "AttachmentDecision",
    "FetchBytes",
    "FileOutcome",
    "MediaDecision",
    "MediaOutput",
    "MediaProgress",
    "MediaResult",
    "Outcome",
    "ProgressCallback",
    "attachment_kind",
    "extract_media_user_text",
    "format_media_body",
    "format_transcripts",
    "run_media_understanding",
    "select_attachments",
]

logger = logging.getLogger(__name__)

Outcome = Literal["success", "skipped", "disabled", "no-attachment", "scope-deny"]
_PROGRESS_VERB: Mapping[Capability, str] = {
    "image": "Describing image",
    "audio": "Transcribing audio",
    "video": "Describing video",
}


@dataclass(frozen=True)
class AttachmentDecision:
    attachment_index: int
    attempts: tuple[ModelAttempt, ...] = ()
    chosen: ModelAttempt | None = None

    def to_dict(self) -> dict[str, object]:
        result: dict[str, object] = {
            "attachmentIndex": self.attachment_index,
            "attempts": [attempt.to_dict() for attempt in self.attempts],
        }
        if self.chosen is not None:
            result["chosen"] = self.chosen.to_dict()
        return result


@dataclass(frozen=True)
class MediaDecision:
    capability: Capability
    outcome: Outcome
    attachments: tuple[AttachmentDecision, ...] = ()
    matched_rule: int | None = None  # scope rule that decided, when one did

    def to_dict(self) -> dict[str, object]:
        result: dict[str, object] = {
            "capability": self.capability,
            "outcome": self.outcome,
            "attachments": [decision.to_dict() for decision in self.attachments],
        }
        if self.matched_rule is not None:
            result["matchedRule"] = self.matched_rule
        return result


@dataclass(frozen=True)
class MediaProgress:
    capability: Capability
    attachment_index: int
    text: str
    stage: str = "media"

    def to_dict(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "capability": self.capability,
            "attachmentIndex": self.attachment_index,
            "text": self.text,
        }


@dataclass(frozen=True)
class ActiveModel:
    """The agent's reply model; ``supports_vision`` comes from the glue's model catalog."""

    provider: str
    model: str | None = None
    supports_vision: bool = False


@dataclass(frozen=True)
class MediaResult:
    body: str
    decisions: tuple[MediaDecision, ...]
    outputs: tuple[MediaOutput, ...] = ()
    files: tuple[FileOutcome, ...] = ()
    transcript: str | None = None


ProgressCallback = Callable[[MediaProgress], Awaitable[None] | None]


# --- the run ------------------------------------------------------------------------------


@dataclass
class _Run:
    config: MediaConfig
    attachments: Sequence[Attachment]
    channel: str | None
    chat_type: str | None
    session_key: str | None
    cache: AttachmentCache
    runner: CommandRunner
    http: HttpPost
    which: Callable[[str], str | None]
    on_progress: ProgressCallback | None
    providers: Mapping[str, ProviderAccess]
    active_model: ActiveModel | None
    local_tools: LocalTools
    variables: Mapping[str, str] = field(default_factory=dict)
    span: SpanOpener = no_span


async def run_media_understanding(
    config: MediaConfig,
    context_body: str,
    attachments: Sequence[Attachment],
    *,
    channel: str | None,
    chat_type: str | None,
    session_key: str | None,
    fetch_bytes: FetchBytes,
    runner: CommandRunner = run_command,
    http: HttpPost | None = None,
    which: Callable[[str], str | None] = shutil.which,
    on_progress: ProgressCallback | None = None,
    providers: Mapping[str, ProviderAccess] | None = None,
    active_model: ActiveModel | None = None,
    local_tools: LocalTools = LocalTools(),  # noqa: B008 - frozen value
    template_variables: Mapping[str, str] | None = None,
    file_limits: FileLimits | None = FileLimits(),  # noqa: B008 - None turns files off
    file_extractor: FileExtractor = extract_in_thread,
    span: SpanOpener = no_span,
) -> MediaResult:
    """Run image, audio and video understanding, then file extraction, for one message
    (each model attempt inside a ``media.attempt`` span of ``span``)."""
    cache = AttachmentCache(fetch_bytes)
    variables = {
        "Body": context_body,
        "SessionKey": session_key or "",
        "ChatType": chat_type or "",
        "Surface": channel or "",
        "Provider": channel or "",
        **(template_variables or {}),
    }
    run = _Run(
        config,
        attachments,
        channel,
        chat_type,
        session_key,
        cache,
        runner,
        http or provider_post,
        which,
        on_progress,
        {normalize_provider_id(k): v for k, v in (providers or {}).items()},
        active_model,
        local_tools,
        variables,
        span,
    )
    try:
        results = await _run_capabilities(run)
        decisions = tuple(decision for decision, _ in results)
        outputs = tuple(output for _, found in results for output in found)
        body = context_body
        if outputs:
            body = format_media_body(outputs, extract_media_user_text(context_body))
        files: tuple[FileOutcome, ...] = ()
        if file_limits is not None:
            transcribed = {o.attachment_index for o in outputs if o.kind == "audio.transcription"}
            files, blocks = await extract_attachment_files(
                run.attachments, run.cache, file_limits, transcribed, file_extractor
            )
            if blocks:
                body = "\n\n".join([body.strip(), *blocks]) if body.strip() else "\n\n".join(blocks)
        transcript = format_transcripts(outputs)
        return MediaResult(body, decisions, outputs, files, transcript)
    finally:
        await cache.cleanup()


async def _run_capabilities(run: _Run) -> list[tuple[MediaDecision, list[MediaOutput]]]:
    semaphore = asyncio.Semaphore(clamp_concurrency(run.config.concurrency))

    async def limited(capability: Capability) -> tuple[MediaDecision, list[MediaOutput]]:
        async with semaphore:
            return await _run_capability(run, capability)

    gathered = await asyncio.gather(*(limited(c) for c in CAPABILITIES), return_exceptions=True)
    results = []
    for capability, result in zip(CAPABILITIES, gathered, strict=True):
        if isinstance(result, BaseException):
            # As upstream: a capability that crashes leaves a hole, the others still count.
            logger.warning("media capability %s failed", capability, exc_info=result)
            continue
        results.append(result)
    return results


async def _run_capability(
    run: _Run, capability: Capability
) -> tuple[MediaDecision, list[MediaOutput]]:
    settings = run.config.capability(capability)
    if settings.enabled is False:
        return MediaDecision(capability, "disabled"), []
    selected = select_attachments(run.attachments, capability, settings.attachments)
    if not selected:
        return MediaDecision(capability, "no-attachment"), []
    scope = evaluate_scope(settings.scope, run.channel, run.chat_type, run.session_key)
    rule = scope.matched_rule
    if scope.decision == "deny":
        denied = tuple(AttachmentDecision(a.index) for a in selected)
        return MediaDecision(capability, "scope-deny", denied, rule), []
    if capability == "image" and run.active_model and run.active_model.supports_vision:
        skip = active_vision_skip(run.active_model.provider, run.active_model.model)
        natives = tuple(AttachmentDecision(a.index, (skip,), skip) for a in selected)
        return MediaDecision(capability, "skipped", natives, rule), []
    entries = await model_entries(
        run.config,
        capability,
        which=run.which,
        runner=run.runner,
        providers=run.providers,
        active_provider=run.active_model.provider if run.active_model else None,
        active_model=run.active_model.model if run.active_model else None,
        local_tools=run.local_tools,
    )
    decisions, outputs = [], []
    for attachment in selected:
        if entries:
            await _report(run, capability, attachment)
        decision, output = await _run_attachment(run, capability, attachment, entries)
        decisions.append(decision)
        outputs.extend([output] if output else [])
    outcome: Outcome = "success" if outputs else "skipped"
    return MediaDecision(capability, outcome, tuple(decisions), rule), outputs


async def _run_attachment(
    run: _Run, capability: Capability, attachment: Attachment, entries: Sequence[MediaModelEntry]
) -> tuple[AttachmentDecision, MediaOutput | None]:
    attempts: list[ModelAttempt] = []
    settings = run.config.capability(capability)
    for entry in entries:
        job = EntryJob(
            capability,
            entry,
            settings,
            attachment.index,
            attachment.url,
            run.variables,
            load=lambda max_bytes: run.cache.get(attachment, max_bytes),
        )
        attributes = {"capability": capability, "attachment": attachment.index}
        with run.span("media.attempt", attributes) as set_attribute:
            attempt, text = await run_entry(
                job, runner=run.runner, http=run.http, providers=run.providers
            )
            set_attribute("type", attempt.type)
            set_attribute("command", attempt.provider or (attempt.argv or ("",))[0])
            set_attribute("outcome", attempt.outcome)
            if attempt.reason:
                set_attribute("reason", attempt.reason[:200])
        attempts.append(attempt)
        if text:
            output = MediaOutput(
                OUTPUT_KIND[capability], attachment.index, text, attempt.provider, attempt.model
            )
            return AttachmentDecision(attachment.index, tuple(attempts), attempt), output
    return AttachmentDecision(attachment.index, tuple(attempts)), None


async def _report(run: _Run, capability: Capability, attachment: Attachment) -> None:
    if run.on_progress is None:
        return
    text = f"{_PROGRESS_VERB[capability]} attachment {attachment.index + 1}..."
    returned = run.on_progress(MediaProgress(capability, attachment.index, text))
    if inspect.isawaitable(returned):
        await returned
