"""The media stage in the shell: attachments fetched by ``media_glue``, records kept as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from common.storable import storable_json
from enrichment.models import Run
from enrichment.pipeline.config.model import Config
from enrichment.pipeline.media import summary as media_summary
from enrichment.pipeline.media.understanding import MediaResult
from enrichment.pipeline.net.ssrf import Resolver
from enrichment.pipeline.runner import CommandRunner
from enrichment.pipeline.stages import Emit, StageResult
from enrichment.pipeline.templates import MessageContext
from enrichment.stage_specs.spec import MediaRun, RecordWrites, StageEnv, StageSpec


def media_records(result: MediaResult) -> list[dict[str, Any]]:
    """``Run.media`` / the ``media`` of a result: the capability decisions, then, when any
    attachment went through file extraction, one ``{"capability": "file"}`` record listing
    each file's outcome (its skip reason, e.g. ``"fetch-failed: ..."`` or ``"binary"``)."""
    records: list[dict[str, Any]] = [decision.to_dict() for decision in result.decisions]
    if result.files:
        appended = any(file.skipped is None for file in result.files)
        records.append(
            {
                "capability": "file",
                "outcome": "success" if appended else "skipped",
                "attachments": [],
                "files": [file.to_dict() for file in result.files],
            }
        )
    return records


@dataclass(frozen=True)
class MediaStage:
    """Media understanding and file extraction; its record is the core's ``MediaResult``."""

    config: Config
    attachments: Sequence[Mapping[str, Any]]
    runner: CommandRunner
    resolve: Resolver
    media_run: MediaRun

    @property
    def name(self) -> str:
        return "media"

    async def run(self, context: MessageContext, emit: Emit) -> StageResult:
        result = await self.media_run(
            self.config,
            body=context.body,
            attachments=self.attachments,
            agent_id=context.agent_id,
            channel=context.scope_channel,
            chat_type=context.chat_type,
            session_key=context.session_key,
            runner=self.runner,
            resolve=self.resolve,
            template_variables=context.template_variables(),
            on_progress=emit,
        )
        return StageResult(result.body, result)


def build(env: StageEnv) -> MediaStage:
    return MediaStage(env.config, env.attachments, env.runner, env.resolve, env.media_run)


def store(run: Run, result: MediaResult) -> RecordWrites:
    run.media = storable_json(media_records(result))
    return RecordWrites(("media",))


@dataclass(frozen=True)
class MediaAttachmentView:
    index: object
    attempts: list[dict[str, object]]


@dataclass(frozen=True)
class MediaCard:
    """One recorded media decision as the run page shows it; ``raw`` for a record of an
    unknown shape (shown key by key instead)."""

    capability: str = ""
    outcome: str = ""
    summary: str = ""
    matched_rule: object = None
    attachments: list[MediaAttachmentView] = field(default_factory=list)
    files: list[dict[str, object]] = field(default_factory=list)
    raw: list[tuple[str, str]] = field(default_factory=list)


def media_cards(records: object) -> list[MediaCard]:
    """``Run.media`` (capability decisions, then the file-extraction record) as cards."""
    cards = []
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, dict) or not isinstance(record.get("capability"), str):
            items = record.items() if isinstance(record, dict) else [("value", record)]
            cards.append(MediaCard(raw=[(str(key), _plain(value)) for key, value in items]))
            continue
        attachments = [
            MediaAttachmentView(item.get("attachmentIndex"), _attempt_views(item))
            for item in record.get("attachments") or []
            if isinstance(item, dict)
        ]
        files = [item for item in record.get("files") or [] if isinstance(item, dict)]
        cards.append(
            MediaCard(
                capability=record["capability"],
                outcome=str(record.get("outcome", "")),
                summary=media_summary.summary_line(record),
                matched_rule=record.get("matchedRule"),
                attachments=attachments,
                files=files,
            )
        )
    return cards


def _attempt_views(attachment: dict[str, Any]) -> list[dict[str, object]]:
    chosen = attachment.get("chosen")
    attempts = [item for item in attachment.get("attempts") or [] if isinstance(item, dict)]
    if isinstance(chosen, dict) and chosen not in attempts:
        attempts.append(chosen)  # recorded as chosen only
    return [
        {
            "outcome": str(item.get("outcome", "")),
            "label": "/".join(str(item[key]) for key in ("provider", "model") if item.get(key))
            or str(item.get("type", "")),
            "chosen": item == chosen,
            "argv": [str(arg) for arg in item.get("argv") or [] if arg is not None],
            "reason": item.get("reason"),
            "exit_code": item.get("exitCode"),
            "duration_ms": item.get("durationMs"),
            "stderr_tail": item.get("stderrTail"),
        }
        for item in attempts
    ]


def _plain(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def view(run: Run) -> dict[str, Any]:
    return {
        "media_cards": media_cards(run.media),
        "media_status": media_summary.status_line(run.media or []),
    }


SPEC = StageSpec(
    name="media",
    title="Media decisions",
    build=build,
    to_json=media_records,
    store=store,
    load=lambda run: list(run.media),
    template="enrichment/stages/media.html",
    view=view,
)
