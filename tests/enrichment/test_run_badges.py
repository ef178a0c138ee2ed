"""A run's outcome and status badges, as every page draws them."""

from __future__ import annotations

from types import SimpleNamespace

from django.template import Context, Template


def render(source: str, **context: object) -> str:
    return Template("{% load runs %}" + source).render(Context(context))


def run(**flags: object) -> SimpleNamespace:
    return SimpleNamespace(outcome=flags.pop("outcome", "success"), **flags)


def test_a_run_without_statuses_shows_its_outcome_only():
    assert render("{% run_status r %}", r=run(outcome="error")) == (
        '<span class="run-status"><span class="badge badge-error">error</span></span>'
    )


def test_each_status_the_run_has_gets_its_badge_in_order():
    shown = render(
        "{% run_status r %}",
        r=run(has_media=True, attempts_failed=False, fallback_used=True, dns_failed=True),
    )
    assert shown.count('class="badge ') == 4
    assert "badge-attempts-failed" not in shown
    assert (
        shown.index("badge-media")
        < shown.index("badge-fallback")
        < shown.index("badge-dns-failure")
    )
    assert '<span class="badge badge-dns-failure" title="A link&#x27;s host did not resolve' in (
        shown
    )
    assert ">fallback succeeded</span>" in shown


def test_a_hostile_outcome_is_escaped_in_the_class_and_the_text():
    shown = render("{% outcome_badge o %}", o='x"><script>alert(1)</script>')
    assert "<script>" not in shown
    assert shown == (
        '<span class="badge badge-x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">'
        "x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</span>"
    )
