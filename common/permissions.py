from __future__ import annotations

from django.http import HttpRequest

from common.errors import PermissionDenied


def require_staff(request: HttpRequest) -> None:
    if not getattr(request.user, "is_staff", False):
        raise PermissionDenied("Staff access required to change the configuration.")
