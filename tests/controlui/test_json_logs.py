"""``LOG_FORMAT=json``: the process logs one JSON object per line, and what a run logs says
which run, session and job it is about."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.logs import JsonFormatter, LogContextFilter
from enrichment.models import Run
from enrichment.services import runs

ROOT = Path(__file__).resolve().parents[2]


def test_a_failing_run_logs_its_run_id_and_session_key(user_client, monkeypatch) -> None:
    async def broken_stages(*args, **kwargs):
        raise RuntimeError("stage exploded")

    monkeypatch.setattr(runs, "run_stages", broken_stages)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(LogContextFilter())
    logging.getLogger("enrichment.services.runs").addHandler(handler)
    try:
        response = user_client.post(
            "/api/enrich",
            {"body": "hello", "sessionKey": "agent:main:slack:c9"},
            content_type="application/json",
        )
    finally:
        logging.getLogger("enrichment.services.runs").removeHandler(handler)
    assert response.status_code >= 400
    run = Run.objects.get()
    (line,) = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert line["level"] == "ERROR" and line["message"] == f"enrichment run {run.pk} failed"
    assert line["run_id"] == run.pk
    assert line["session_key"] == "agent:main:slack:c9"
    assert "RuntimeError: stage exploded" in line["exception"]


LOG_SOMETHING = """
import django, logging
django.setup()
logging.getLogger("enrichment.demo").warning("disk %s", "full")
"""


def _python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "controlui.settings",
        "CONTROLUI_VAR_DIR": str(tmp_path),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        env=environ,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_log_format_json_makes_every_line_json(tmp_path) -> None:
    done = _python(LOG_SOMETHING, tmp_path, LOG_FORMAT="json")
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(text) for text in done.stderr.splitlines()]
    assert line["message"] == "disk full" and line["logger"] == "enrichment.demo"


def test_the_default_stays_plain_text(tmp_path) -> None:
    done = _python(LOG_SOMETHING, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "WARNING enrichment.demo: disk full" in done.stderr


@pytest.mark.parametrize("value", ["xml", "JSONL"])
def test_an_unknown_log_format_fails_at_start_naming_the_variable(tmp_path, value) -> None:
    done = _python(LOG_SOMETHING, tmp_path, LOG_FORMAT=value)
    assert done.returncode != 0
    assert "LOG_FORMAT: expected plain or json" in done.stderr
