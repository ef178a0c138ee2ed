"""``{% sparkline line "label" %}``: a problem's trend as a small inline SVG bar chart.

The markup is written from numbers only (each coerced with ``float``/``int``) and our own
label (escaped): nothing from a message. One string per chart, not an ``{% include %}`` or a
``format_html`` per bar: the problem list draws two charts per row, 31 bars each, and those
cost more than the rest of the page.
"""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from enrichment.pipeline.problems.trend import Sparkline

register = template.Library()


@register.simple_tag
def sparkline(line: Sparkline, label: str) -> SafeString:
    title = escape(f"{label}: {int(line.total)} in total, peak {int(line.peak)}")
    bars = "".join(
        f'<rect x="{float(bar.x):g}" y="{float(bar.y):g}" width="{float(bar.width):g}" '
        f'height="{float(bar.height):g}"{"" if bar.count else EMPTY}/>'
        for bar in line.bars
    )
    width, height = int(line.width), int(line.height)
    return mark_safe(  # noqa: S308 - numbers and an escaped title only
        f'<svg class="sparkline" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{title}">'
        f"<title>{title}</title>{bars}</svg>"
    )


EMPTY = ' class="empty"'
