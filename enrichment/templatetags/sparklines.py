"""``{% sparkline line "label" %}``: a problem's trend as a small inline SVG bar chart.

Built with ``format_html`` from numbers and our own label (nothing from a message), in one
call per chart: the problem list draws two per row, and an ``{% include %}`` per chart cost
more than the rest of the page.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from enrichment.pipeline.problems.trend import Sparkline

register = template.Library()
EMPTY = mark_safe(' class="empty"')  # a constant of ours


@register.simple_tag
def sparkline(line: Sparkline, label: str) -> SafeString:
    title = f"{label}: {line.total} in total, peak {line.peak}"
    bars = format_html_join(
        "",
        '<rect x="{}" y="{}" width="{}" height="{}"{}/>',
        (
            (
                bar.x,
                bar.y,
                bar.width,
                bar.height,
                EMPTY if not bar.count else "",
            )
            for bar in line.bars
        ),
    )
    return format_html(
        '<svg class="sparkline" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
        'aria-label="{t}"><title>{t}</title>{bars}</svg>',
        w=line.width,
        h=line.height,
        t=title,
        bars=bars,
    )
