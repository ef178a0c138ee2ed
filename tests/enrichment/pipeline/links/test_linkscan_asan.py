"""The C fast path under AddressSanitizer and UndefinedBehaviorSanitizer.

It reads untrusted chat text, so every out-of-bounds read or undefined operation must
be found by a test, not by a user: the module is rebuilt with both sanitizers (fatal on
the first report) and fuzzed against the full scan in a child Python that preloads them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
SOURCE = ROOT / "enrichment" / "pipeline" / "links" / "_linkscan.c"
EXAMPLES = 3000

pytestmark = pytest.mark.slow


def runtime(name: str) -> str:
    """gcc's path to a sanitizer runtime (gcc prints the bare name when it has none)."""
    found = subprocess.run(
        ["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return found if os.path.isabs(found) else ""


@pytest.fixture(scope="module")
def sanitized_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None or not runtime("libasan.so"):
        pytest.skip("gcc with libasan is needed to build the sanitized module")
    target = tmp_path_factory.mktemp("asan") / "_linkscan.so"
    subprocess.run(
        [
            "gcc",
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
            "-shared",
            "-fPIC",
            f"-I{sysconfig.get_paths()['include']}",
            str(SOURCE),
            "-o",
            str(target),
        ],
        check=True,
        capture_output=True,
    )
    return target


def test_no_memory_error_or_undefined_behaviour_on_hostile_and_fuzzed_text(
    sanitized_build: Path,
) -> None:
    preload = " ".join(path for path in (runtime("libasan.so"), runtime("libubsan.so")) if path)
    env = {
        **os.environ,
        "LD_PRELOAD": preload,
        # CPython keeps its interned strings for the process lifetime: not our leaks.
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1",
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.enrichment.pipeline.links.linkscan_fuzz",
            str(sanitized_build),
            str(EXAMPLES),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"ok: {EXAMPLES} generated messages" in result.stdout
