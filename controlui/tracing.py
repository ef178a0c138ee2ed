"""OpenTelemetry tracing, off by default, on with the standard ``OTEL_*`` variables.

Tracing is on when ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``; a
comma-separated list) or, with it unset, when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) says where to send spans; ``OTEL_SDK_DISABLED=true``
turns it off whatever else is set. The service is named by ``OTEL_SERVICE_NAME`` (default
``controlui``); the sampler, batch sizes, headers and the rest are the SDK's own variables.

What is traced: every HTTP request (Django), every run (``enrichment.run``, with a span per
stage, URL and attempt: ``common/tracing.py``), and with PostgreSQL each query (psycopg).
Outgoing page fetches are not instrumented on purpose: the aiohttp instrumentation adds a
``traceparent`` header to every request, which would hand our trace ids to every site a
message links to; the ``links.attempt`` span times the fetch instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from controlui.env import read_bool

DEFAULT_SERVICE_NAME = "controlui"
EXPORTERS = ("otlp", "console", "none")


def exporter_names(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The exporters tracing is on with, or () when it is off.

    >>> exporter_names({})
    ()
    >>> exporter_names({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    ('otlp',)
    >>> exporter_names({"OTEL_TRACES_EXPORTER": "console,otlp"})
    ('console', 'otlp')
    """
    if read_bool("OTEL_SDK_DISABLED", False, environ):
        return ()
    raw = environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not raw:
        endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        return ("otlp",) if (endpoint or "").strip() else ()
    names = tuple(name.strip().lower() for name in raw.split(","))
    unknown = [name for name in names if name not in EXPORTERS]
    if unknown:
        raise ImproperlyConfigured(
            f"OTEL_TRACES_EXPORTER: unknown exporter {unknown[0]!r} (use otlp, console or none)"
        )
    return tuple(name for name in names if name != "none")


def _exporter(name: str, environ: Mapping[str, str]) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol != "http/protobuf":
        raise ImproperlyConfigured(
            f"OTEL_EXPORTER_OTLP_PROTOCOL: {protocol!r} is not supported (use http/protobuf)"
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers, timeout: from the OTEL_EXPORTER_OTLP_* variables


def tracer_provider(
    processors: Sequence[SpanProcessor], environ: Mapping[str, str] = os.environ
) -> TracerProvider:
    service = environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


_configured = False


def tracing_configure(environ: Mapping[str, str] = os.environ) -> bool:
    """Install the SDK and the instrumentations when the variables turn tracing on (once per
    process, before Django builds its middleware). Returns whether tracing is on."""
    global _configured
    names = exporter_names(environ)
    if not names or _configured:
        return _configured
    processors = [BatchSpanProcessor(_exporter(name, environ)) for name in names]
    trace.set_tracer_provider(tracer_provider(processors, environ))
    instrument_libraries()
    _configured = True
    return True


def instrument_libraries() -> None:
    """Django's requests and psycopg's queries (no SQL comments added to the queries)."""
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

    if not DjangoInstrumentor().is_instrumented_by_opentelemetry:
        DjangoInstrumentor().instrument()
    if not PsycopgInstrumentor().is_instrumented_by_opentelemetry:
        PsycopgInstrumentor().instrument(enable_commenter=False)
