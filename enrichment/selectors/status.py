"""Derived run status: what the stored outcome alone does not tell, without changing it.

The stored ``outcome`` describes link understanding (``success | skipped | …``), so a run
whose image was described reads ``no-links``, and a run where every CLI attempt failed reads
``skipped`` like a harmless skip. Derived flags tell them apart at a glance and as filters
(``?status=media``, ``?status=attempts-failed``, any mix of them):

- ``media``: attachments went through media understanding (the run has media records);
- ``attempts-failed``, ``fallback``, ``dns-failure``: from the run's link decisions
  (``enrichment.pipeline.links.derived``), stored on the run when it is recorded.
"""

from __future__ import annotations

from django.db.models import BooleanField, ExpressionWrapper, Q

from enrichment.models import Run, RunQuerySet

STATUSES = {
    "media": "media",
    "attempts-failed": "attempts failed",
    "fallback": "fallback succeeded",
    "dns-failure": "DNS failure",
}
# What each status means (its badge's title).
DESCRIPTIONS = {
    "media": "Attachments went through media understanding",
    "attempts-failed": "CLI attempts failed and no URL got a result",
    "fallback": "An attempt failed; a later CLI entry of the chain succeeded",
    "dns-failure": "A link's host did not resolve (not a policy refusal)",
}
# The run's field holding each status (``has_media`` is computed: ``with_media_flag``).
FLAGS = {
    "media": "has_media",
    "attempts-failed": "attempts_failed",
    "fallback": "fallback_used",
    "dns-failure": "dns_failed",
}


def status_condition(status: str) -> Q:
    if status == "media":
        return ~Q(media=[])
    if status in FLAGS:
        return Q(**{FLAGS[status]: True})
    raise ValueError(status)


def with_media_flag(runs: RunQuerySet) -> RunQuerySet:
    """``has_media`` beside the stored flags (a comparison on the run's own row)."""
    return runs.annotate(
        has_media=ExpressionWrapper(status_condition("media"), output_field=BooleanField())
    )


def derived_status_set(run: Run) -> Run:
    """``has_media`` for one run read whole (the run page): no extra query."""
    run.has_media = bool(run.media)  # type: ignore[attr-defined]
    return run


def run_statuses(run: Run) -> list[str]:
    """The derived statuses of a run read with ``with_media_flag`` (or ``derived_status_set``)."""
    return [status for status, flag in FLAGS.items() if getattr(run, flag, False)]
