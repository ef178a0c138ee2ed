"""The partitioned pass of .ci/run keeps exactly the tests that reach the test database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATABASE_TESTS = "tests/enrichment/services/test_runs.py"
PURE_TESTS = "tests/richoutput/canvas/test_render.py"


def collected(**environment: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTROLUI_TEST_STORAGE"}
    env.update(environment)
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
         "-p", "no:cacheprovider", DATABASE_TESTS, PURE_TESTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    return [line for line in listing.splitlines() if "::" in line]


def test_the_partitioned_pass_runs_only_the_tests_that_reach_the_test_database() -> None:
    everything = collected()
    partitioned = collected(CONTROLUI_TEST_STORAGE="partitioned")

    assert any(test.startswith(PURE_TESTS) for test in everything)
    assert not any(test.startswith(PURE_TESTS) for test in partitioned)
    database_tests = [test for test in everything if test.startswith(DATABASE_TESTS)]
    assert database_tests
    assert [test for test in partitioned if test.startswith(DATABASE_TESTS)] == database_tests
