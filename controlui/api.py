"""The one NinjaAPI: routers are mounted here, domain errors mapped to HTTP here."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI
from ninja.errors import AuthenticationError

from accounts.auth import api_auth
from common.errors import DomainError, InvalidInput
from controlui.api_docs import LocalSwagger
from controlui.health import router as health_router
from controlui.openapi_errors import add_error_responses
from enrichment.api import config, enrich, explain, files, history, problems, tools, versions
from richoutput.api import router as canvas_router
from server.uploads import UploadTooLarge

logger = logging.getLogger(__name__)


class ControlApi(NinjaAPI):
    def get_openapi_schema(self, **kwargs: Any) -> Any:
        return add_error_responses(super().get_openapi_schema(**kwargs))


api = ControlApi(
    title="Control UI API",
    version="1.0",
    description=(
        "Enrichment, decision history and rich-output rendering for the assistant gateway. "
        "Authenticate with a session cookie or `Authorization: Bearer <token>`."
    ),
    auth=api_auth,
    docs=LocalSwagger(),
    docs_url="/docs",
    docs_decorator=login_required,
    urls_namespace="api",
)


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    body: dict[str, object] = {"detail": exc.detail}
    if isinstance(exc, InvalidInput) and exc.errors:
        body["errors"] = exc.errors
    return api.create_response(request, body, status=exc.status)


@api.exception_handler(AuthenticationError)
def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(
        request,
        {"detail": "Authentication required: log in or send Authorization: Bearer <token>."},
        status=401,
    )


@api.exception_handler(RequestDataTooBig)
def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    if isinstance(exc, UploadTooLarge):  # one file over the upload cap: the text names it
        return api.create_response(request, {"detail": str(exc)}, status=413)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(
        request, {"detail": f"Request body too large (limit {limit} bytes)."}, status=413
    )


@api.exception_handler(MultiPartParserError)
@api.exception_handler(BadRequest)
def malformed_body(request: HttpRequest, exc: Exception) -> HttpResponse:
    # e.g. multipart/form-data without a boundary: Django refuses to parse the body.
    return api.create_response(request, {"detail": f"Malformed request body: {exc}"}, status=400)


@api.exception_handler(SuspiciousOperation)
def suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    # Too many fields or files, a bad header...: Django's own limits; the text names which.
    return api.create_response(request, {"detail": f"Request refused: {exc}"}, status=400)


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Replaces ninja's default, which sends the traceback to the client when DEBUG is on.
    logger.error("API %s %s failed", request.method, request.path, exc_info=exc)
    return api.create_response(request, {"detail": "Internal error (logged)."}, status=500)


api.add_router("/", health_router)
for area in (explain, enrich, history, problems, config, versions, files, tools):
    api.add_router("/", area.router)
api.add_router("/", canvas_router)
