"""``{% run_config_version run %}``: "ran under v12 — 3 changes since" on a run page."""

from __future__ import annotations

from typing import Any

from django import template

from enrichment.config.versions import latest_number
from enrichment.models import Run
from enrichment.pipeline.config.diff import canonical

register = template.Library()


@register.inclusion_tag("enrichment/_run_config_version.html")
def run_config_version(run: Run) -> dict[str, Any]:
    latest = latest_number()
    number = run.config_version
    return {
        "number": number,
        "latest": latest,
        "since": latest - number if number is not None else None,
    }


@register.filter
def json_script_safe(value: Any) -> str:
    """A JSON value as compact text (autoescaped by the template like any string)."""
    return canonical(value)
