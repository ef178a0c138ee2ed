"""schemathesis over ``/api/openapi.json`` against a real daphne (issue 17, acceptance).

Every operation of the API gets generated requests, valid ones and invalid ones (wrong
types, missing fields, out-of-range numbers, odd strings), sent with a bearer token to a
dedicated server (its own SQLite file, or ``SCHEMATHESIS_DATABASE_URL`` for PostgreSQL).
Checked: no 5xx, every status documented, and every body matches its documented schema.
The number of examples per operation is bounded (``SCHEMATHESIS_MAX_EXAMPLES``, default 20)
so the whole file runs in about a minute.

One thing is outside the application: daphne's HTTP layer (Twisted) parses every
``multipart/form-data`` POST itself and answers a body it cannot parse with a bare 400
(no Content-Type, no body) before Django sees the request. Such answers are still required
to be 400s, but are not held to the JSON schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.live import LiveServer, live_server

pytestmark = [pytest.mark.slow]

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "20"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    extra = {}
    if os.environ.get("SCHEMATHESIS_DATABASE_URL"):
        extra["DATABASE_URL"] = os.environ["SCHEMATHESIS_DATABASE_URL"]
    with live_server(tmp_path_factory.mktemp("schemathesis"), extra) as server:
        token = server.manage("create_api_token", "live-admin").stdout.strip()
        yield server, token


def operations() -> list[tuple[str, str, GenerationMode]]:
    """(method, path, mode) for every operation, read from the in-process API (the server runs
    the same code), so each is a test of its own. Invalid requests are generated only for
    operations that take some input to make invalid."""
    from controlui.api import api

    paths = api.get_openapi_schema(path_prefix="/api/")["paths"]
    cases = []
    for path, items in paths.items():
        for method, operation in items.items():
            cases.append((method.upper(), path, GenerationMode.POSITIVE))
            if operation.get("parameters") or operation.get("requestBody"):
                cases.append((method.upper(), path, GenerationMode.NEGATIVE))
    return sorted(cases)


@pytest.fixture(scope="module")
def api_schema(api_server: tuple[LiveServer, str]) -> Any:
    server, _token = api_server
    raw = httpx.get(server.base_url + "/api/openapi.json", cookies=server.login_cookies())
    raw.raise_for_status()
    return schemathesis.openapi.from_dict(raw.json())


def refused_by_daphne_before_django(case: Any, response: Any) -> bool:
    media_type = (case.media_type or "").split(";")[0]
    return (
        media_type == "multipart/form-data"
        and response.status_code == 400
        and not (response.content)
    )


@pytest.mark.parametrize(("method", "path", "mode"), operations(), ids=str)
def test_api_answers_generated_requests_without_5xx_and_as_documented(
    api_server: tuple[LiveServer, str], api_schema: Any, method: str, path: str, mode: Any
) -> None:
    server, token = api_server
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def answered_as_documented(case: Any) -> None:
        response = case.call(
            base_url=server.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        if refused_by_daphne_before_django(case, response):
            return
        case.validate_response(response, checks=CHECKS)

    answered_as_documented()
