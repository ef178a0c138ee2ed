"""A run's derived statuses, from its link decisions: what the stored outcome alone does not
tell (``enrichment.selectors.status`` names them and filters by them).

- ``attempts_failed``: at least one CLI attempt failed and none succeeded — the configured
  tools were tried and none worked (the outcome reads ``skipped``, like a harmless skip);
- ``fallback_used``: an attempt failed but a later entry of the chain succeeded (the outcome
  reads ``success``, yet the first choice is broken);
- ``dns_failed``: a URL's host did not resolve (not a policy refusal).

The attempt the SSRF guard records for a refused URL is not a CLI attempt. A run's decisions
never change once written, so these are computed once, when the run is stored, and kept on
its row: any mix of them is then a filter on the run table alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from enrichment.pipeline.links.decisions import SSRF_COMMAND
from enrichment.pipeline.net.ssrf import UNRESOLVED


@dataclass(frozen=True)
class DerivedStatus:
    attempts_failed: bool = False
    fallback_used: bool = False
    dns_failed: bool = False


def derived_status(
    attempts: Iterable[tuple[str, str]], blocked_reasons: Iterable[str]
) -> DerivedStatus:
    """From the run's attempts as ``(command, outcome)`` and the reasons of its blocked URLs."""
    outcomes = {outcome for command, outcome in attempts if command != SSRF_COMMAND}
    failed, succeeded = "failed" in outcomes, "success" in outcomes
    return DerivedStatus(
        attempts_failed=failed and not succeeded,
        fallback_used=failed and succeeded,
        dns_failed=UNRESOLVED in set(blocked_reasons),
    )
