"""Navigation shared by every dashboard page."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

# (label, url name); pages register here as they are added.
NAVIGATION: tuple[tuple[str, str], ...] = (
    ("History", "decisions"),
    ("Problems", "problems"),
    ("Explain", "explain"),
    ("Tool access", "tool-access"),
    ("Rich preview", "render-preview"),
    ("Messages", "messages"),
    ("Config history", "config-history"),
)


def navigation(request: HttpRequest) -> dict[str, object]:
    items = []
    for label, name in NAVIGATION:
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        items.append({"label": label, "url": url, "active": request.path.startswith(url)})
    return {"nav_items": items}
