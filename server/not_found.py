"""The site's own 404 page also when ``DEBUG`` is on (``make run``).

With ``DEBUG`` Django answers an ``Http404`` raised by a view with its technical page (URL
patterns, settings hints): a newcomer who opens a run that does not exist should see what
production shows, the site's 404 with its way back. Only views' ``Http404`` is handled here
(an address that matches no pattern keeps Django's debug page, which helps when adding one);
without ``DEBUG`` Django already renders ``404.html`` itself.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render


class SiteNotFoundPage:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not settings.DEBUG or not isinstance(exception, Http404):
            return None
        context = {"request_path": request.path, "exception": str(exception) or None}
        return render(request, "404.html", context, status=404)
