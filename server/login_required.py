from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest, HttpResponseBase


class LoginRequiredEverywhere(LoginRequiredMiddleware):
    """Every page needs a logged-in user; the API answers 401 itself instead of redirecting.

    Views opt out with ``django.contrib.auth.decorators.login_not_required`` (login page,
    health check). Static files never reach here: whitenoise answers them earlier.
    """

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        if request.path_info.startswith("/api/"):
            return None
        if request.path_info.startswith("/" + settings.STATIC_URL.lstrip("/")):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
