"""OpenTelemetry tracing: off by default, on with the OTEL_* variables; one trace per run with
a span per stage, URL and attempt; the run page shows the trace id."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once

from controlui.tracing import exporter_names
from enrichment.models import Run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, ()),
        ({"OTEL_SERVICE_NAME": "gateway-ui"}, ()),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ("otlp",)),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, ("otlp",)),
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
        ({"OTEL_TRACES_EXPORTER": "otlp, Console"}, ("otlp", "console")),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, ()),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, ()),
    ],
    ids=[
        "nothing-set",
        "name-only",
        "endpoint",
        "traces-endpoint",
        "console",
        "two-exporters",
        "exporter-none-wins",
        "sdk-disabled",
    ],
)
def test_tracing_is_off_unless_the_variables_turn_it_on(environ, expected) -> None:
    assert exporter_names(environ) == expected


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"OTEL_TRACES_EXPORTER": "jaeger"}, "OTEL_TRACES_EXPORTER: unknown exporter 'jaeger'"),
        ({"OTEL_SDK_DISABLED": "maybe"}, "OTEL_SDK_DISABLED: expected a boolean"),
    ],
    ids=["unknown-exporter", "bad-boolean"],
)
def test_a_bad_variable_fails_at_start_naming_it(environ, message) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        exporter_names(environ)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """An SDK provider exporting to memory, for this test only (the API allows setting the
    global provider once per process, so the test puts the old state back itself)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE = None, Once()
    trace.set_tracer_provider(provider)
    yield exporter
    provider.shutdown()
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE = saved


@pytest.fixture
def summarizer(db) -> None:
    """A link model that is a local CLI (tests/enrichment/summarizer.py), 127.0.0.1 allowed."""
    from enrichment.config.changes import config_replace
    from tests.enrichment.conftest import summarizer_config

    config_replace(document=summarizer_config())


def enrich(client, body: str) -> dict:
    response = client.post(
        "/api/enrich", {"body": body, "channel": "slack"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_a_run_is_one_trace_with_a_span_per_stage_url_and_attempt(
    user_client, summarizer, spans, settings
) -> None:
    result = enrich(user_client, "look http://127.0.0.1/a and http://127.0.0.1/fail")
    finished = spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in finished}
    (root,) = [span for span in finished if span.parent is None]

    def children(span) -> list:
        return sorted(
            (s for s in finished if s.parent and s.parent.span_id == span.context.span_id),
            key=lambda s: (s.name, str(s.attributes.get("url.full", ""))),
        )

    assert root.name == "enrichment.run"
    assert root.attributes["run.id"] == result["runId"]
    assert root.attributes["run.outcome"] == "success"
    assert root.attributes["channel"] == "slack"
    assert {span.context.trace_id for span in finished} == {root.context.trace_id}
    assert [span.name for span in children(root)] == ["stage links", "stage media"]
    links = children(root)[0]
    urls = children(links)
    assert [(u.name, u.attributes["url.full"], u.attributes["outcome"]) for u in urls] == [
        ("links.url", "http://127.0.0.1/a", "success"),
        ("links.url", "http://127.0.0.1/fail", "failed"),
    ]
    (good,) = children(urls[0])
    (bad,) = children(urls[1])
    assert good.name == bad.name == "links.attempt"
    assert good.attributes["outcome"] == "success" and good.attributes["type"] == "cli"
    assert bad.attributes["outcome"] == "failed"
    assert bad.attributes["reason"] == "exited with code 3"
    assert bad.status.status_code == StatusCode.ERROR
    assert all(span.parent is None or span.parent.span_id in by_id for span in finished)

    # The run keeps its trace id, and its page shows it (linked when a trace UI is set).
    run = Run.objects.get(pk=result["runId"])
    assert run.trace_id == format(root.context.trace_id, "032x")
    settings.TRACE_URL_TEMPLATE = "https://traces.example/trace/{trace_id}"
    page = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert f'<code id="trace-id">{run.trace_id}</code>' in page
    assert f'href="https://traces.example/trace/{run.trace_id}"' in page


def test_with_tracing_off_a_run_has_no_trace_id_and_the_page_no_trace_row(
    user_client, summarizer
) -> None:
    result = enrich(user_client, "look http://127.0.0.1/a")
    run = Run.objects.get(pk=result["runId"])
    assert run.trace_id == ""
    assert 'id="trace-id"' not in user_client.get(f"/decisions/{run.pk}/").content.decode()


CONFIGURED_PROCESS = """
import django, os
from controlui.tracing import tracing_configure
assert tracing_configure() is True
django.setup()
from django.conf import settings
from django.test import Client
from opentelemetry import trace
print("middleware:", settings.MIDDLEWARE[0])
print("status:", Client().get("/api/health").status_code)
trace.get_tracer_provider().force_flush()
"""


def test_the_variables_turn_on_request_traces_in_a_real_process(tmp_path) -> None:
    env = {
        **os.environ,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_SERVICE_NAME": "control-ui-test",
        "DJANGO_SETTINGS_MODULE": "controlui.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CONTROLUI_VAR_DIR": str(tmp_path),
    }
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CONFIGURED_PROCESS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "middleware: opentelemetry.instrumentation.django" in done.stdout
    assert '"name": "GET api/health"' in done.stdout
    assert '"service.name": "control-ui-test"' in done.stdout
