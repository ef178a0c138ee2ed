"""The one NinjaAPI: routers are mounted here, domain errors mapped to HTTP here."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError

from controlui.api_docs import LocalSwagger
from controlui.auth import api_auth
from controlui.canvas_api import router as canvas_router
from controlui.errors import DomainError, InvalidInput
from controlui.health import router as health_router
from enrichment.api import router as enrichment_router
from enrichment.files_api import router as files_router

api = NinjaAPI(
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
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(
        request, {"detail": f"Request body too large (limit {limit} bytes)."}, status=413
    )


api.add_router("/", health_router)
api.add_router("/", enrichment_router)
api.add_router("/", canvas_router)
api.add_router("/", files_router)
api.add_router("/", "enrichment.tools_api.router")
