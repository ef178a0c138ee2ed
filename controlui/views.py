from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from enrichment.views.history import overview


def home(request: HttpRequest) -> HttpResponse:
    """The dashboard's landing page is the enrichment overview."""
    return overview(request)
