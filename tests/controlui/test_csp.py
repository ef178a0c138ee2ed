"""Dashboard pages send a Content-Security-Policy and carry no inline script (issue 17, item 12)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from enrichment.models import Run
from richoutput import services as canvas_services

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/decisions/",
    "/explain/",
    "/tools/",
    "/render/",
    "/messages/",
    "/admin/",
    "/admin/enrichment/enrichmentconfig/",
    "/api/docs",
]


class InlineCode(HTMLParser):
    """Collects every piece of markup a strict CSP would refuse to run or apply."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        for name in attributes:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=…>")
        if "style" in attributes:
            self.found.append(f"<{tag} style=…>")
        if tag == "script":
            self._in_script = attributes
        href = attributes.get("href") or ""
        if href.strip().lower().startswith("javascript:"):
            self.found.append(f"<{tag} href=javascript:…>")

    def handle_data(self, data: str) -> None:
        script = self._in_script
        executable = script is not None and script.get("type") not in ("application/json",)
        if executable and data.strip() and "src" not in script:
            self.found.append(f"inline <script>{data.strip()[:40]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    return parser.found


def test_the_checker_finds_what_it_looks_for() -> None:
    html = (
        '<script>alert(1)</script><a onclick="x()">a</a><div style="color:red"></div>'
        '<a href="javascript:x()">b</a><script src="/s.js"></script>'
        '<script type="application/json">{"a": 1}</script>'
    )
    assert inline_code(html) == [
        "inline <script>alert(1)",
        "<a onclick=…>",
        "<div style=…>",
        "<a href=javascript:…>",
    ]


@pytest.mark.parametrize("path", PAGES, ids=PAGES)
def test_page_sends_a_strict_policy_and_has_no_inline_code(staff_client, path) -> None:
    Run.objects.create(channel="slack", outcome="success")
    response = staff_client.get(path)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    if not path.startswith(("/admin/", "/api/docs")):  # Django's and ninja's own templates
        assert inline_code(response.content.decode()) == []


def test_run_and_message_pages_have_no_inline_code(staff_client) -> None:
    run = Run.objects.create(channel="slack", outcome="success", original_body="hi")
    message = canvas_services.message_store(text='[embed ref="cv_a" height="300" /] hello')
    for path in (f"/decisions/{run.pk}/", f"/messages/{message.pk}/"):
        response = staff_client.get(path)
        assert response.status_code == 200, path
        assert "script-src 'self'" in response["Content-Security-Policy"]
        assert inline_code(response.content.decode()) == [], path


def test_login_page_sends_the_policy_to_anonymous_visitors(client) -> None:
    response = client.get("/login/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert inline_code(response.content.decode()) == []
