"""Structured logs: one JSON object per line (``LOG_FORMAT=json``), carrying what the line is
about — the run, its session and its worker job, and the trace when tracing is on.

The run service sets the context once per run (``log_context``); every line logged while the
run's task works (by our code or a library's) carries it, because a context variable follows
the task and the threads it hands work to (``sync_to_async`` copies the context):

    >>> import io, logging
    >>> stream = io.StringIO()
    >>> handler = logging.StreamHandler(stream)
    >>> handler.setFormatter(JsonFormatter())
    >>> handler.addFilter(LogContextFilter())
    >>> log = logging.getLogger("doctest")
    >>> log.addHandler(handler); log.propagate = False
    >>> with log_context(run_id=7, session_key="agent:main:slack:c1", job_id=""):
    ...     log.warning("fetch failed for %s", "https://example.com/")
    >>> line = json.loads(stream.getvalue())
    >>> line["message"], line["run_id"], line["session_key"], "job_id" in line
    ('fetch failed for https://example.com/', 7, 'agent:main:slack:c1', False)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

# Keys a line may carry about what it concerns; empty values are left out.
CONTEXT_KEYS = ("run_id", "session_key", "job_id")
_context: ContextVar[dict[str, Any] | None] = ContextVar("controlui_log_context", default=None)


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Lines logged inside carry ``fields`` (on top of any outer context)."""
    unknown = set(fields) - set(CONTEXT_KEYS)
    if unknown:
        raise ValueError(f"unknown log context keys: {sorted(unknown)}")
    token = _context.set({**(_context.get() or {}), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def current_log_context() -> dict[str, Any]:
    return dict(_context.get() or {})


class LogContextFilter(logging.Filter):
    """Stamps each record with the context of the code that logged it (as attributes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (_context.get() or {}).items():
            if value not in (None, "") and not hasattr(record, key):
                setattr(record, key, value)
        span = trace.get_current_span().get_span_context()
        if span.is_valid and not hasattr(record, "trace_id"):
            record.trace_id = format(span.trace_id, "032x")
            record.span_id = format(span.span_id, "016x")
        return True


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", <context>, "exception"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in (*CONTEXT_KEYS, "trace_id", "span_id"):
            value = getattr(record, key, None)
            if value not in (None, ""):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)
