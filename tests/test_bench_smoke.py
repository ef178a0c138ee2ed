"""Every benchmark script still runs: each one under ``bench/`` is started with ``--smoke``
(tiny sizes, seconds) exactly as a person would start it, and must exit 0 having printed its
figures. A script added to ``bench/`` without a smoke mode fails here, so no bench can rot
unnoticed again (``bench/links.py`` once crashed on a renamed function for weeks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# The smoke runs pick their own databases and layers (``smoke_run`` drops DATABASE_URL and
# REDIS_URL): .ci/run's PostgreSQL and Redis pass would only repeat them exactly.
pytestmark = pytest.mark.backend_independent


def bench_scripts() -> list[Path]:
    """The runnable scripts: files with a ``__main__`` entry (``local_pages.py`` is a helper
    module the scripts import)."""
    return sorted(
        path
        for path in BENCH.glob("*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    )


def test_the_bench_folder_holds_scripts() -> None:
    names = {path.name for path in bench_scripts()}
    assert {"links.py", "render.py", "history.py", "extraction.py", "ws_load.py"} <= names


def smoke_run(script: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # The benches pick their own databases and layers; the suite's own (a test database
        # name, an xdist prefix) must not leak into them.
        if not key.startswith(("DJANGO_", "PYTEST_", "CHANNEL_LAYER_PREFIX"))
        and key not in {"DATABASE_URL", "REDIS_URL"}
    }
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"{script.name} --smoke {' '.join(extra)} exited {done.returncode}:\n{output[-3000:]}"
    )
    assert "smoke run" in done.stdout, f"{script.name} has no smoke mode:\n{output[-2000:]}"
    figures = [line for line in done.stdout.splitlines() if any(ch.isdigit() for ch in line)]
    assert len(figures) >= 2, f"{script.name} printed no figures:\n{done.stdout[-2000:]}"
    return done


@pytest.mark.parametrize("script", bench_scripts(), ids=lambda path: path.name)
def test_bench_script_runs_in_smoke_mode(script: Path) -> None:
    smoke_run(script)


def test_the_fairness_bench_runs_with_workers_too() -> None:
    """``fairness.py --redis``: the links run in two runworker processes (Redis on this
    machine's 127.0.0.1:6379, database 7, as the bench's default)."""
    redis = pytest.importorskip("redis")
    try:
        redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    done = smoke_run(BENCH / "fairness.py", "--redis")
    assert "in 2 runworker process(es)" in done.stdout
    assert "hostile link 0:" in done.stdout


def test_ws_load_compare_reads_each_run_and_sums_the_rounds() -> None:
    """``ws_load.py --compare``'s figures: a run's report read back, the options passed on
    without ``--compare``, and the medians with each target met or missed (its doctests)."""
    import doctest
    import importlib

    module = importlib.import_module("bench.ws_load")
    assert doctest.testmod(module).failed == 0
    assert module.compare_summary(
        [
            (module.RunFigures(200.0, 2.0, 3.0), module.RunFigures(190.0, 2.5, 3.0)),
            (module.RunFigures(100.0, 2.0, 3.0), module.RunFigures(80.0, 2.5, 3.0)),
        ]
    )[-1] == (
        "median: in daphne 150.0 msg/s, --redis 135.0 msg/s, ratio 0.875 (target >= 0.9: missed)"
    )
    # Just under the target: printed as itself, not rounded up to the 0.90 it missed.
    just_under = module.compare_summary(
        [(module.RunFigures(163.4, 3.7, 4.3), module.RunFigures(146.6, 7.9, 4.6))]
    )
    assert just_under[0].endswith("ratio 0.897")
    assert just_under[-1].endswith("ratio 0.897 (target >= 0.9: missed)")


def test_ws_load_compares_daphne_and_workers() -> None:
    """``ws_load.py --compare 1``: one run in daphne and one with two runworker processes,
    each round's messages/s and the ratio (Redis on 127.0.0.1:6379, as the bench's default)."""
    redis = pytest.importorskip("redis")
    try:
        redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    done = smoke_run(BENCH / "ws_load.py", "--compare", "1")
    assert "round 1, in daphne:" in done.stdout
    assert "round 1, --redis:" in done.stdout
    assert "median CPU per message --redis: outside the extraction pools" in done.stdout
    assert "ratio" in done.stdout.splitlines()[-1]


def test_extraction_bench_names_each_target_of_issue_35_met_or_missed() -> None:
    """``extraction.py``'s closing lines: overall (and its lead over trafilatura), article,
    pages far below trafilatura and page types below it, each met or missed (its doctests)."""
    import doctest
    import importlib

    module = importlib.import_module("bench.extraction")
    assert doctest.testmod(module).failed == 0
    done = smoke_run(BENCH / "extraction.py")
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("targets:")]
    for target in ("overall F1", "far below trafilatura", "page types below"):
        assert sum(target in line for line in verdicts) == 2, verdicts  # text and markdown
    assert all(line.endswith(("(met)", "(missed)")) for line in verdicts)
