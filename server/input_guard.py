"""Refuse input the database cannot hold before any view or endpoint sees it.

Every request has its query parameters checked, and every ``/api/`` request its JSON body,
by ``common.json_guard``: a NUL character, a lone surrogate or nesting beyond the limit is
a 422 (API, JSON naming the parameter or the JSON path) or a 400 (pages, plain text naming
the parameter), instead of a 500 when PostgreSQL refuses the value in a filter or halfway
through a write (SQLite would have matched or stored it, so tests on SQLite alone never see
those 500s). Form fields are Django's business: its form fields already refuse NUL.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from common.json_guard import JsonInputError, JsonProblem, parse_json, text_problem

_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def query_problem(request: HttpRequest) -> JsonProblem | None:
    for name, values in request.GET.lists():
        message = text_problem(name)
        if message is not None:
            return JsonProblem(ascii(name), f"query parameter name {message}")
        for value in values:
            message = text_problem(value)
            if message is not None:
                return JsonProblem(name, message)
    return None


def body_problem(request: HttpRequest) -> JsonProblem | None:
    if request.method not in _BODY_METHODS or request.content_type != "application/json":
        return None
    if not request.body:
        return None
    try:
        parse_json(request.body)
    except JsonInputError as exc:
        if exc.problem.message.startswith("not valid JSON"):
            return None  # the endpoint's own parser answers malformed JSON (a 400)
        return exc.problem
    return None


def refusal(problem: JsonProblem) -> JsonResponse:
    return JsonResponse(
        {"detail": f"Invalid input: {problem}", "errors": [str(problem)]}, status=422
    )


class ApiInputGuard:
    """Middleware: a 422 naming the field for unstorable API input, a 413 for a body too big."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith("/api/"):
            problem = query_problem(request)
            if problem is not None:
                return HttpResponseBadRequest(
                    f"Bad request: {problem}", content_type="text/plain; charset=utf-8"
                )
        else:
            try:
                problem = query_problem(request) or body_problem(request)
            except RequestDataTooBig:
                limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
                return JsonResponse(
                    {"detail": f"Request body too large (limit {limit} bytes)."}, status=413
                )
            if problem is not None:
                return refusal(problem)
        return self.get_response(request)
