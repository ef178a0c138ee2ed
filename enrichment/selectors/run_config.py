"""The run page's "configuration this run used" panel: the snapshot and what changed since."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from enrichment.config.store import config_document
from enrichment.models import Run
from enrichment.pipeline.config.diff import diff_documents


@dataclass(frozen=True)
class ChangeRow:
    path: str
    kind: str
    before: str
    after: str
    label: str | None = None  # "global rule 2" for a scope rule (numbers from 1)


@dataclass(frozen=True)
class RunConfig:
    snapshot_json: str
    recorded: bool
    changes: list[ChangeRow]


def _show(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def run_config_compare(*, run: Run) -> RunConfig:
    """The run's snapshot against today's stored config (one query set, read only)."""
    snapshot = run.config_snapshot or {}
    changes = [
        ChangeRow(
            change.path,
            change.kind
            if change.kind != "moved"
            else f"moved from {change.moved_from_label or change.moved_from}",
            _show(change.old),
            _show(change.new),
            change.label,
        )
        for change in diff_documents(snapshot, config_document())
    ]
    return RunConfig(
        snapshot_json=json.dumps(snapshot, indent=2, ensure_ascii=False, sort_keys=True),
        recorded=bool(snapshot),
        changes=changes,
    )
