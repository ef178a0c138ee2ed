"""Interactive API docs served from our own static files (no CDN, no inline script).

django-ninja's default ``Swagger`` page loads Swagger UI from a CDN unless ``ninja`` is an
installed app; either way its page stands outside the dashboard. This one renders
``api/docs.html`` in the site's layout with the vendored ``swagger-ui-dist`` under
``static/vendor/swagger-ui/`` and starts it from ``static/js/api-docs.js``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja.openapi.docs import DocsBase

if TYPE_CHECKING:
    from ninja import NinjaAPI


class LocalSwagger(DocsBase):
    template = "api/docs.html"

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        # Swagger UI renders its own <main id="operations">: the page's wrapper then must not
        # be a second main landmark around it (base.html).
        context = {
            "api": api,
            "openapi_url": self.get_openapi_url(api, kwargs),
            "page_has_own_main": True,
        }
        return render(request, self.template, context)
