"""The dry-run report: counts by kind of change, the affected runs with before/after, and
the sentence each kind reads as (``"41 runs would become scope-deny"``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from enrichment.pipeline.dryrun.decisions import RunDecision


@dataclass(frozen=True)
class AffectedRun:
    run_id: int
    changes: tuple[str, ...]
    before: RunDecision
    after: RunDecision

    def to_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "changes": [
                describe(kind, 1).removeprefix("1 run ") for kind in dict.fromkeys(self.changes)
            ],
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


@dataclass
class DryRunReport:
    evaluated: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    affected_runs: int = 0
    affected: list[AffectedRun] = field(default_factory=list)

    def to_dict(self, affected_limit: int) -> dict[str, Any]:
        return {
            "evaluated": self.evaluated,
            "affectedRuns": self.affected_runs,
            "counts": [
                {"change": kind, "count": count, "text": describe(kind, count)}
                for kind, count in sorted(self.counts.items(), key=lambda item: -item[1])
            ],
            "affected": [run.to_dict() for run in self.affected[:affected_limit]],
            "affectedTruncated": len(self.affected) > affected_limit,
        }


def describe(kind: str, count: int) -> str:
    """``"41 runs would become scope-deny"`` for ``("outcome:scope-deny", 41)``."""
    runs = "run" if count == 1 else "runs"
    urls = "URL" if count == 1 else "URLs"
    if kind == "outcome:unknown":
        return f"{count} {runs} cannot be judged without a DNS lookup"
    if kind.startswith("outcome:"):
        return f"{count} {runs} would become {kind.removeprefix('outcome:')}"
    if kind.startswith("media:"):
        _, capability, gate = kind.split(":")
        return f"{count} {capability} decisions would become {gate}"
    texts = {
        "matched-rule": f"{count} {runs} would match a different scope rule",
        "url:newly-blocked": f"{count} {urls} newly blocked",
        "url:now-allowed": f"{count} {urls} now allowed",
        "url:unknown": f"{count} {urls} not judged (no recorded DNS answer)",
        "url:newly-checked": f"{count} {urls} newly checked",
        "url:no-longer-checked": f"{count} {urls} no longer checked",
        "url:argv-changed": f"{count} {urls} would get a different CLI chain or argv",
    }
    return texts.get(kind, f"{count} × {kind}")
