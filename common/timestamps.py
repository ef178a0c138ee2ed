"""``{% timestamp value %}``: a moment as ``<time datetime="ISO 8601">2026-12-06 09:18:15</time>``.

One place for the markup every page uses for a moment. The text is the value in the current
time zone (UTC here, as the ``date`` filter would show it) to the second, minute or day; the
``datetime`` attribute is its full ISO 8601 form, for the browser and for scripts. Written
with string formatting instead of two ``date`` filters: a history page draws fifty of them,
and the filters' general format machinery cost a third of its rendering.
"""

from __future__ import annotations

from datetime import date, datetime

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import is_aware, localtime

register = template.Library()

# As the ``date`` filter's "Y-m-d H:i:s", "Y-m-d H:i" and "Y-m-d" (the year in four digits).
PRECISIONS = {
    "seconds": "{0.year:04d}-{0.month:02d}-{0.day:02d} {0.hour:02d}:{0.minute:02d}:{0.second:02d}",
    "minutes": "{0.year:04d}-{0.month:02d}-{0.day:02d} {0.hour:02d}:{0.minute:02d}",
    "day": "{0.year:04d}-{0.month:02d}-{0.day:02d}",
}


@register.simple_tag
def timestamp(
    value: datetime | date | None, precision: str = "seconds", *, utc: bool = False, css: str = ""
) -> SafeString:
    """The ``<time>`` element for ``value`` ("" for anything but a date or datetime, as the
    ``date`` filter); ``utc`` adds " UTC" to the text, ``css`` a class attribute."""
    if not isinstance(value, date):
        return mark_safe("")  # noqa: S308 - empty
    if precision not in PRECISIONS:
        raise template.TemplateSyntaxError(
            f"timestamp: precision must be one of {', '.join(PRECISIONS)}, not {precision!r}"
        )
    moment = localtime(value) if isinstance(value, datetime) and is_aware(value) else value
    text = PRECISIONS[precision].format(moment) + (" UTC" if utc else "")
    attrs = f' class="{escape(css)}"' if css else ""
    return mark_safe(  # noqa: S308 - a datetime's own digits and an escaped class
        f'<time{attrs} datetime="{moment.isoformat()}">{text}</time>'
    )
