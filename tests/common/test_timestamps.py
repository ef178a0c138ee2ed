"""``{% timestamp %}`` shows a moment as the ``date`` filter did, in one ``<time>`` element."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.utils import timezone as django_timezone


def render(source: str, **context: object) -> str:
    return Template("{% load timestamps %}" + source).render(Context(context))


MOMENT = datetime(2026, 12, 6, 9, 8, 7, 654321, tzinfo=UTC)


@pytest.mark.parametrize(
    ("arguments", "date_format"),
    [("", "Y-m-d H:i:s"), (' "minutes"', "Y-m-d H:i"), (' "day"', "Y-m-d")],
)
def test_the_text_and_attribute_are_what_the_date_filter_gave(arguments, date_format):
    shown = render(f"{{% timestamp moment{arguments} %}}", moment=MOMENT)
    expected = render(
        f"<time datetime=\"{{{{ moment|date:'c' }}}}\">{{{{ moment|date:'{date_format}' }}}}</time>",
        moment=MOMENT,
    )
    assert shown == expected
    assert shown == (
        '<time datetime="2026-12-06T09:08:07.654321+00:00">'
        + {"Y-m-d H:i:s": "2026-12-06 09:08:07", "Y-m-d H:i": "2026-12-06 09:08"}.get(
            date_format, "2026-12-06"
        )
        + "</time>"
    )


def test_a_moment_from_another_zone_is_shown_in_the_current_one():
    elsewhere = MOMENT.astimezone(timezone(timedelta(hours=-5)))
    assert render("{% timestamp moment %}", moment=elsewhere) == render(
        "{% timestamp moment %}", moment=MOMENT
    )
    with django_timezone.override("Asia/Tokyo"):
        shown = render("{% timestamp moment utc=False %}", moment=MOMENT)
    assert shown == '<time datetime="2026-12-06T18:08:07.654321+09:00">2026-12-06 18:08:07</time>'


def test_utc_and_a_class_are_added_and_the_class_is_escaped():
    shown = render('{% timestamp moment "minutes" utc=True css=css %}', moment=MOMENT, css='a"><b')
    assert shown == (
        '<time class="a&quot;&gt;&lt;b" datetime="2026-12-06T09:08:07.654321+00:00">'
        "2026-12-06 09:08 UTC</time>"
    )


def test_a_date_and_a_missing_moment():
    assert render('{% timestamp day "day" %}', day=date(2027, 1, 31)) == (
        '<time datetime="2027-01-31">2027-01-31</time>'
    )
    assert render("[{% timestamp nothing %}]", nothing=None) == "[]"
    assert render("[{% timestamp absent %}]") == "[]"


def test_an_unknown_precision_names_the_choices():
    with pytest.raises(TemplateSyntaxError, match="seconds, minutes, day, not 'hours'"):
        render('{% timestamp moment "hours" %}', moment=MOMENT)
