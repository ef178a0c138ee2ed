"""The stage registry: which stages a run has, in which order, and where their records go.

``STAGES`` is the one list ``services`` runs (through the core's ``run_stages``), ``run_finish``
stores, the API serves (``stage_json`` / ``stage_records_load``) and the run page shows
(``stage_sections``). The order is the reference's: media first — a voice note's transcript
may carry a URL — then links. A new stage is a core module, its config section, a record
template and one ``StageSpec`` here (see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from enrichment.models import Run
from enrichment.pipeline.stages import Stage
from enrichment.stage_specs import links, media
from enrichment.stage_specs.spec import RecordWrites, StageEnv, StageSpec

STAGES: list[StageSpec] = [media.SPEC, links.SPEC]

__all__ = ["STAGES", "RecordWrites", "StageEnv", "StageSpec", "stages_build", "stages_store"]


def stages_build(env: StageEnv) -> list[Stage]:
    return [spec.build(env) for spec in STAGES]


def stages_store(run: Run, records: Mapping[str, Any]) -> RecordWrites:
    """Put every stage's record on ``run``: the Run fields to save and the rows to insert."""
    fields: tuple[str, ...] = ()
    rows: tuple[Any, ...] = ()
    for spec in STAGES:
        if spec.name in records:
            writes = spec.store_record(run, records[spec.name])
            fields, rows = fields + writes.fields, rows + writes.rows
    return RecordWrites(fields, rows)


def stage_json(records: Mapping[str, Any]) -> dict[str, Any]:
    """The records of a finished run as the API returns them, keyed by stage name."""
    return {spec.name: spec.to_json(records[spec.name]) for spec in STAGES if spec.name in records}


def stage_records_load(run: Run) -> dict[str, Any]:
    """The stored records of ``run`` as the API returns them, keyed by stage name."""
    return {spec.name: spec.load_record(run) for spec in STAGES}


@dataclass(frozen=True)
class StageSection:
    name: str
    title: str
    template: str
    context: Mapping[str, Any]


def stage_sections(run: Run) -> list[StageSection]:
    """One section of the run page per stage, in run order."""
    return [
        StageSection(spec.name, spec.title or spec.name, spec.template, spec.view_context(run))
        for spec in STAGES
    ]
