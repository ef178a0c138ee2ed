"""JSON log lines and the context they carry (run id, session key, job id, trace)."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest
from asgiref.sync import sync_to_async
from opentelemetry.sdk.trace import TracerProvider

from common.logs import JsonFormatter, LogContextFilter, current_log_context, log_context


def test_a_line_is_one_json_object_with_level_logger_and_message() -> None:
    record = logging.LogRecord("tests.json", logging.INFO, __file__, 1, "hi %s", ("there",), None)
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "INFO" and line["logger"] == "tests.json"
    assert line["message"] == "hi there" and line["time"].endswith("+00:00")
    assert "run_id" not in line


def test_hostile_text_stays_one_line_of_valid_json() -> None:
    message = 'quote " newline \n NUL \x00 surrogate \ud800 {"run_id": 1}'
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, message, None, None)
    text = JsonFormatter().format(record)
    assert "\n" not in text
    assert json.loads(text)["message"] == message


def test_lines_carry_the_context_and_nested_contexts_add_to_it() -> None:
    logger = logging.getLogger("tests.json.context")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(LogContextFilter())
    logger.addHandler(handler)
    try:
        with log_context(session_key="agent:main:slack:c1"):
            with log_context(run_id=42, job_id="1712-0"):
                logger.warning("inside")
            logger.warning("outer")
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    inside, outer, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert (inside["run_id"], inside["session_key"], inside["job_id"]) == (
        42,
        "agent:main:slack:c1",
        "1712-0",
    )
    assert "run_id" not in outer and outer["session_key"] == "agent:main:slack:c1"
    assert "session_key" not in outside


def test_an_exception_is_formatted_into_the_line() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    line = json.loads(JsonFormatter().format(record))
    assert "RuntimeError: boom" in line["exception"]


def test_unknown_context_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown log context keys"), log_context(user="bob"):
        pass


async def test_the_context_follows_the_task_into_sync_threads_and_not_into_other_tasks() -> None:
    async def run(number: int) -> tuple[dict, dict]:
        with log_context(run_id=number):
            await asyncio.sleep(0)
            in_thread = await sync_to_async(current_log_context)()
            return current_log_context(), in_thread

    results = await asyncio.gather(run(1), run(2))
    assert results == [({"run_id": 1}, {"run_id": 1}), ({"run_id": 2}, {"run_id": 2})]
    assert current_log_context() == {}


def test_a_line_logged_inside_a_span_carries_the_trace_and_span_ids() -> None:
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("work") as span:
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "in span", None, None)
        LogContextFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["trace_id"] == format(span.get_span_context().trace_id, "032x")
    assert len(line["span_id"]) == 16
