"""Site-wide pages: error pages in the site's layout, API docs served from our own files."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory
from django.views import defaults

# Any absolute URL a page would make the browser load (scripts, styles, images, frames).
LOADED_URL = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""", re.I
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path, says",
    [
        ("/decisions/99999/", "No run with id 99999."),
        ("/messages/999/", "No such message."),
        ("/no-such-page/", "There is no page at"),
        ("/__openclaw__/canvas/documents/missing/index.html", "No such canvas document."),
    ],
    ids=["unknown-run", "unknown-message", "unknown-path", "unknown-canvas"],
)
def test_unknown_ids_get_the_site_404_with_navigation(user_client, path, says) -> None:
    response = user_client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert says in html
    assert 'class="error-code">404<' in html
    # The way back: the main navigation and the overview/history buttons.
    assert 'id="mainnav"' in html and 'href="/decisions/"' in html
    # Not Django's debug page with the URL list.
    assert "URLconf" not in html and "Using the URLconf" not in html


def test_404_escapes_the_requested_path(user_client) -> None:
    response = user_client.get("/%3Cscript%3Ealert(1)%3C/script%3E/")
    assert response.status_code == 404
    assert "<script>alert(1)" not in response.content.decode()


def test_403_page_names_the_reason_in_the_site_layout(user) -> None:
    request = RequestFactory().get("/admin/whatever/")
    request.user = user
    response = defaults.permission_denied(request, PermissionDenied("Staff only."))
    html = response.content.decode()
    assert response.status_code == 403
    assert "Staff only." in html and 'class="error-code">403<' in html
    assert 'href="/decisions/"' in html


def test_500_page_renders_without_a_request_context() -> None:
    response = defaults.server_error(RequestFactory().get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in html and 'href="/"' in html


def test_api_docs_load_swagger_from_our_static_files(user_client) -> None:
    response = user_client.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in html
    assert "/static/vendor/swagger-ui/swagger-ui.css" in html
    assert 'data-openapi-url="/api/openapi.json"' in html
    assert "cdn" not in html.lower()
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "LICENSE"):
        assert finders.find(f"vendor/swagger-ui/{name}"), name


def test_api_docs_need_a_login(client) -> None:
    response = client.get("/api/docs")
    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize(
    "path",
    ["/", "/decisions/", "/explain/", "/tools/", "/render/", "/messages/", "/api/docs", "/nope/"],
)
def test_no_page_loads_anything_from_another_host(user_client, path) -> None:
    html = user_client.get(path).content.decode()
    assert not LOADED_URL.search(html), LOADED_URL.search(html)


def test_the_no_external_url_check_would_catch_a_cdn() -> None:
    assert LOADED_URL.search('<script src="https://cdn.jsdelivr.net/x.js"></script>')
    assert LOADED_URL.search("<link rel=stylesheet href=//cdn.example/x.css>")
    assert not LOADED_URL.search('<a href="https://example.com/">a link</a>')
