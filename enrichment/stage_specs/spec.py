"""What the Django shell needs to know about one enrichment stage.

A ``StageSpec`` names a stage, builds it with the outside world bound in (``StageEnv``), and
says how its record is stored with the run, served by the API and shown on the run page. Only
``name`` and ``build`` are required: a stage that gives nothing else has its record stored as
JSON in ``Run.stage_records[name]``, served under ``name`` and shown key by key by
``templates/enrichment/stages/record.html``.

Links and media keep their own storage on purpose: link decisions are rows (``UrlDecision``,
``Attempt``) because history filters, the overview's failing-CLI and blocked-host tables and
the admin query them; media records are the JSON list ``Run.media`` (SPEC §9 serves it as is).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from common.storable import storable_json
from enrichment.models import Run
from enrichment.pipeline.config.model import Config
from enrichment.pipeline.media.understanding import MediaResult
from enrichment.pipeline.net.ssrf import Resolver
from enrichment.pipeline.runner import CommandRunner
from enrichment.pipeline.stages import Stage

# Media understanding and file extraction for one message (``services.media.media_run``).
MediaRun = Callable[..., Awaitable[MediaResult]]

GENERIC_TEMPLATE = "enrichment/stages/record.html"


@dataclass(frozen=True)
class StageEnv:
    """Everything a stage may be built with for one run."""

    config: Config
    agent_id: str | None
    attachments: Sequence[Mapping[str, Any]]
    # Runs a CLI entry as a subprocess.
    runner: CommandRunner
    resolve: Resolver
    # The runner for link models: the bare ``link-understand`` in this process with the
    # stored fetch settings, any other command (the script by path too) through ``runner``.
    link_runner: CommandRunner
    # Media understanding and file extraction for one message (``services.media.media_run``).
    media_run: MediaRun


@dataclass(frozen=True)
class RecordWrites:
    """What storing one stage's record writes besides the Run: the Run fields it set and the
    new rows to insert, in order (a row may point at rows before it, never after). The
    caller inserts the rows of many runs together (``services.runs_finish``)."""

    fields: tuple[str, ...]
    rows: tuple[models.Model, ...] = ()


def _record_json(record: Any) -> Any:
    to_dict = getattr(record, "to_dict", None)
    return to_dict() if callable(to_dict) else record


@dataclass(frozen=True)
class StageSpec:
    name: str
    build: Callable[[StageEnv], Stage]
    # The record as the API returns it (the result's key ``name``).
    to_json: Callable[[Any], Any] = _record_json
    # Puts the record on the run and says what to write (``RecordWrites``, written in
    # ``run_finish``'s transaction). None: ``Run.stage_records[name]``.
    store: Callable[[Run, Any], RecordWrites] | None = None
    # The stored record as the API returns it. None: ``Run.stage_records[name]``.
    load: Callable[[Run], Any] | None = None
    template: str = GENERIC_TEMPLATE
    # The run page's context for ``template``. None: the loaded record, key by key.
    view: Callable[[Run], Mapping[str, Any]] | None = None
    title: str = field(default="")

    def store_record(self, run: Run, record: Any) -> RecordWrites:
        if self.store is not None:
            return self.store(run, record)
        stored = storable_json(self.to_json(record))
        run.stage_records = {**(run.stage_records or {}), self.name: stored}
        return RecordWrites(("stage_records",))

    def load_record(self, run: Run) -> Any:
        if self.load is not None:
            return self.load(run)
        return (run.stage_records or {}).get(self.name)

    def view_context(self, run: Run) -> Mapping[str, Any]:
        if self.view is not None:
            return self.view(run)
        record = self.load_record(run)
        items = record.items() if isinstance(record, dict) else []
        return {
            "record": record,
            "rows": [
                (str(key), value if isinstance(value, str) else json.dumps(value))
                for key, value in items
            ],
        }
