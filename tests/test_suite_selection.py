"""The partitioned pass of .ci/run keeps exactly the tests that reach the test database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATABASE_TESTS = "tests/enrichment/services/test_runs.py"
PURE_TESTS = "tests/richoutput/canvas/test_render.py"
BENCH_SMOKE = "tests/test_bench_smoke.py"


def collected(paths: list[str] | None = None, marks: str = "", **environment: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTROLUI_TEST_STORAGE"}
    env.update(environment)
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
         "-p", "no:cacheprovider", *(["-m", marks] if marks else []),
         *(paths or [DATABASE_TESTS, PURE_TESTS])],
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


def ci_pass_selection() -> str:
    """The marker expression .ci/run's PostgreSQL and Redis pass gives pytest."""
    [expression] = re.findall(r'pytest -m "([^"]+)"', (ROOT / ".ci" / "run").read_text())
    return expression


def test_the_postgres_and_redis_pass_leaves_out_only_repeats_and_still_sweeps_every_page() -> None:
    sweeps = ["tests/controlui/test_every_page_browser.py", "tests/controlui/test_pages_browser.py"]
    everything = collected(paths=[BENCH_SMOKE, *sweeps])
    backends = collected(paths=[BENCH_SMOKE, *sweeps], marks=ci_pass_selection())

    assert any(test.startswith(BENCH_SMOKE) for test in everything)
    assert not any(test.startswith(BENCH_SMOKE) for test in backends)
    for sweep, test in [
        (sweeps[0], "test_every_page_fits_has_no_errors"),
        (sweeps[1], "test_every_page_fits_and_is_clean"),
    ]:
        variants = [name for name in everything if name.startswith(sweep) and test in name]
        kept = [name for name in backends if name.startswith(sweep) and test in name]
        assert len(variants) >= 3 and len(kept) == 1, (variants, kept)
    # Nothing else of those modules is left out (the navigation and theme tests).
    others = {
        name for name in everything if not name.startswith(BENCH_SMOKE) and "fits" not in name
    }
    assert others and others <= set(backends)
