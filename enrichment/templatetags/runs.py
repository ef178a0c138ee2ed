"""A run's outcome and status badges: ``{% outcome_badge outcome %}``, ``{% run_status run %}``.

The one place for their markup (the history, the overview, a run's page, the media stage).
Tags rather than ``{% include %}``s: the history draws fifty rows, and two nested includes
per row cost a sixth of its rendering. Every text is escaped; the titles are our own.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from enrichment.selectors.status import DESCRIPTIONS, FLAGS, STATUSES

register = template.Library()


def _outcome_badge(outcome: object) -> str:
    text = escape(outcome)
    return f'<span class="badge badge-{text}">{text}</span>'


@register.simple_tag
def outcome_badge(outcome: object) -> SafeString:
    return mark_safe(_outcome_badge(outcome))  # noqa: S308 - escaped


@register.simple_tag
def run_status(run: Any) -> SafeString:
    """The outcome, then a badge for each of the run's derived statuses it has."""
    badges = "".join(
        f' <span class="badge badge-{status}" title="{escape(DESCRIPTIONS[status])}">'
        f"{escape(STATUSES[status])}</span>"
        for status, flag in FLAGS.items()
        if getattr(run, flag, False)
    )
    return mark_safe(  # noqa: S308 - escaped outcome, our own badges
        f'<span class="run-status">{_outcome_badge(run.outcome)}{badges}</span>'
    )
