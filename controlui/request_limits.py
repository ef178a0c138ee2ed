"""The request-body limit of every route, for the server edge (``server.body_limits``).

The upload endpoints accept what they read plus room for the multipart framing; everything
else (login, admin forms, the JSON API) ``DATA_UPLOAD_MAX_MEMORY_SIZE``::

    body_limit_for("POST", "/api/files/extract")  -> 6 MiB (a 5 MiB file + 1 MiB of framing)
    body_limit_for("POST", "/login/")             -> DATA_UPLOAD_MAX_MEMORY_SIZE

and what each route asks of a request's credentials before its body is read
(``credential_need_for``): API writes must carry a session cookie or a bearer token, and the
upload routes' must belong to an active user (checked off the event loop), so an anonymous
200 MiB upload is a 401 without its body being stored.
"""

from __future__ import annotations

from django.conf import settings

from enrichment.api.enrich import MAX_UPLOAD_FILES
from enrichment.api.files import UPLOAD_LIMITS
from enrichment.services.media import MAX_UPLOAD_BYTES
from server.body_limits import MIB
from server.daphne_body import CredentialNeed

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

MULTIPART_ROOM = MIB  # form fields, part headers and boundaries around the files
UPLOAD_ROUTES = {
    "/api/files/extract": UPLOAD_LIMITS.max_bytes + MULTIPART_ROOM,
    "/api/enrich/upload": MAX_UPLOAD_FILES * MAX_UPLOAD_BYTES + MULTIPART_ROOM,
}


def body_limit_for(method: str, path: str) -> int:
    """The most bytes of request body ``method path`` may carry."""
    if method.upper() == "POST" and path in UPLOAD_ROUTES:
        return UPLOAD_ROUTES[path]
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def credential_need_for(method: str, path: str) -> CredentialNeed:
    """What ``method path`` asks of the request's credentials before its body is read."""
    if method.upper() in SAFE_METHODS or not path.startswith("/api/"):
        return "none"  # pages redirect to the login themselves; their bodies are small
    if method.upper() == "POST" and path in UPLOAD_ROUTES:
        return "verified"
    return "present"
