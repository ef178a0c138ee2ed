"""The OpenClaw plugin's own unit tests (``npm ci && npm test`` in ``integrations/openclaw``,
node's built-in runner) on the Node 24 of the OpenClaw cache: the system Node is 20.

Part of the Python suite so that ``make test`` (and so ``.ci/run``) runs them too; skipped,
saying why, only when npm cannot be reached to fill a cold cache."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integrations.openclaw_harness import NpmUnreachable, ensure_openclaw
from tests.live import ROOT

pytestmark = pytest.mark.openclaw

PLUGIN_DIR = ROOT / "integrations" / "openclaw"


def test_npm_ci_and_npm_test_pass() -> None:
    try:
        install = ensure_openclaw()
    except NpmUnreachable as exc:
        pytest.skip(f"npm cannot be reached to install Node 24: {exc}")
    env = {**os.environ, "PATH": f"{install.node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in (["npm", "ci", "--no-audit", "--no-fund"], ["npm", "test"]):
        done = subprocess.run(
            command, cwd=PLUGIN_DIR, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-6000:]}\n"
            f"{done.stderr[-3000:]}"
        )
    assert "ℹ fail 0" in done.stdout, done.stdout[-3000:]


def test_the_plugin_type_checks_against_openclaws_sdk(tmp_path: Path) -> None:
    """``// @ts-check`` made real: TypeScript (strict) over the plugin's modules, with the
    types of the installed OpenClaw's plugin SDK (a changed hook API fails here first)."""
    try:
        install = ensure_openclaw()
    except NpmUnreachable as exc:
        pytest.skip(f"npm cannot be reached to install OpenClaw: {exc}")
    packages = install.root / "node_modules"
    # A copy beside a node_modules of links: module resolution walks up from each file.
    shutil.copytree(PLUGIN_DIR / "src", tmp_path / "src")
    shutil.copy(PLUGIN_DIR / "index.js", tmp_path)
    (tmp_path / "node_modules" / "@types").mkdir(parents=True)
    (tmp_path / "node_modules" / "openclaw").symlink_to(packages / "openclaw")
    (tmp_path / "node_modules" / "@types" / "node").symlink_to(packages / "@types" / "node")
    done = subprocess.run(
        [
            str(install.node_bin / "node"),
            str(packages / "typescript" / "bin" / "tsc"),
            *("--noEmit", "--allowJs", "--checkJs", "--strict", "--skipLibCheck"),
            *("--module", "nodenext", "--target", "es2022", "--types", "node"),
            "index.js",
            *sorted(str(path.relative_to(tmp_path)) for path in (tmp_path / "src").glob("*.js")),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
