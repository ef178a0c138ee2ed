"""The real OpenClaw 2026.9.6 judges our exports and runs ``link-understand`` as its link model.

Node 24 and OpenClaw are installed from npm into a cache outside the repository
(``~/.cache/controlui-openclaw/`` or ``$CONTROLUI_OPENCLAW_CACHE``; see ``real_openclaw``),
once, and reused. The tests skip, saying so, only when npm or its registry cannot be reached;
a broken install fails them.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from enrichment.config.changes import config_replace
from enrichment.config.openclaw import openclaw_to_config
from enrichment.config.openclaw_export import export_openclaw, names_link_url
from enrichment.config.store import config_document
from enrichment.management.commands.seed_demo import PAGES_DIR, demo_document
from tests.enrichment.cli.test_link_understand_stdin import FINAL_URL, LINK_URL, PAGE
from tests.enrichment.config.openclaw.real_openclaw import (
    FIXTURES,
    NpmUnreachable,
    OpenClaw,
    ensure_openclaw,
)

pytestmark = pytest.mark.slow
SCRIPTS = Path(sys.executable).parent
RUN_LIKE_OPENCLAW = Path(__file__).with_name("run_like_openclaw.mjs")


@pytest.fixture(scope="module")
def openclaw() -> Iterator[OpenClaw]:
    try:
        yield ensure_openclaw()
    except NpmUnreachable as reason:
        pytest.skip(f"real OpenClaw not installed: {reason}")


def exported(target: str, tmp_path: Path) -> tuple[str, list[str]]:
    """The stored config as ``manage.py export_openclaw_config --target TARGET -o FILE``
    writes it, and the notes it printed."""
    path = tmp_path / f"openclaw-{target}.json"
    err = io.StringIO()
    call_command("export_openclaw_config", "--target", target, "-o", str(path),
                 stdout=io.StringIO(), stderr=err)  # fmt: skip
    notes = [line[6:] for line in err.getvalue().splitlines() if line.startswith("note: ")]
    return path.read_text(encoding="utf-8"), notes


def report(name: str, verdict: dict[str, Any]) -> None:
    """Shown with ``-s``: what the real validator said."""
    print(f"\nopenclaw config validate --json ({name}):\n{json.dumps(verdict, indent=2)}")


@pytest.mark.django_db
def test_the_current_export_of_the_demo_config_is_valid_for_openclaw(
    openclaw: OpenClaw, tmp_path: Path
) -> None:
    config_replace(document=demo_document(PAGES_DIR))
    text, notes = exported("current", tmp_path)
    verdict = openclaw.validate(text, home=tmp_path / "home")
    report("demo, current", verdict)
    assert verdict["valid"] is True, verdict
    assert verdict.get("issues", []) == []
    assert any("agents.list[1].tools.links" in note for note in notes)  # named, not dropped


@pytest.mark.django_db
def test_the_legacy_export_is_refused_only_for_the_keys_its_notes_name(
    openclaw: OpenClaw, tmp_path: Path
) -> None:
    document = demo_document(PAGES_DIR)
    config_replace(document=document)
    text, notes = exported("legacy", tmp_path)
    verdict = openclaw.validate(text, home=tmp_path / "home")
    report("demo, legacy", verdict)
    assert verdict["valid"] is False
    ids = [agent["id"] for agent in config_document()["agents"]["list"]]
    predicted = set()
    for note in notes:
        path = note.split(":", 1)[0]
        if path.startswith("agents.list[") and path.endswith(("tools.links", "tools.media")):
            index = int(path.split("[", 1)[1].split("]", 1)[0])
            key = path.rsplit(".", 1)[1]
            predicted.add((f"agents.entries.{ids[index]}.tools", f'Unrecognized key: "{key}"'))
        elif path.startswith("tools.media.") and path.endswith(".models"):
            predicted.add((path.rsplit(".", 1)[0], 'Unrecognized key: "models"'))
        elif path == "agents.list":
            predicted.add(("agents.ownership", "multi-agent rosters"))
    found = {
        (issue["path"], issue["message"][: len("multi-agent rosters")])
        if issue["path"] == "agents.ownership"
        else (issue["path"], issue["message"])
        for issue in verdict["issues"]
    }
    assert found == predicted


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["written-by-patch.json", "written-by-set.json"])
def test_a_config_written_by_openclaw_goes_back_valid(
    openclaw: OpenClaw, tmp_path: Path, name: str
) -> None:
    document, _notes = openclaw_to_config(json.loads((FIXTURES / name).read_text()))
    config_replace(document=document)
    text, _export_notes = exported("current", tmp_path)
    verdict = openclaw.validate(text, home=tmp_path / "home")
    assert verdict["valid"] is True, verdict


def run_like_openclaw(openclaw: OpenClaw, args: list[str], page: Path) -> dict[str, Any]:
    """One link-model run through OpenClaw's own exec function, as its link runner does it."""
    module, name = openclaw.link_runner_exec()
    argv = ["link-understand", *(arg for arg in args if not names_link_url(arg))]
    env = {**os.environ, "PATH": f"{SCRIPTS}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(Path(__file__).resolve().parents[4])}  # fmt: skip
    env = {k: v for k, v in env.items() if not k.startswith(("DJANGO_", "LINK_"))}
    done = subprocess.run(
        [str(openclaw.node_bin / "node"), str(RUN_LIKE_OPENCLAW), str(module), name, str(page),
         json.dumps(argv), LINK_URL, FINAL_URL],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_openclaws_own_runner_gets_the_main_content_from_link_understand(
    openclaw: OpenClaw, tmp_path: Path
) -> None:
    model = export_openclaw({"tools": {"links": {"models": [
        {"command": "link-understand", "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}
    ]}}}).document["tools"]["links"]["models"][0]  # fmt: skip
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    result = run_like_openclaw(openclaw, model["args"], page)
    assert result.get("code") == 0, result
    assert "Engineers replaced more than two hundred steel plates" in result["stdout"]
    assert "Weather forecast" not in result["stdout"]
    assert "(https://news.example/reports/bridge.pdf)" in result["stdout"]


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("", "stdin: no page (empty input)"),
        ("<p>x</p>" * 400_000, "stdin: the page is larger than maxResponseBytes (2000000 bytes)"),
    ],
    ids=["empty", "huge"],
)
def test_openclaws_runner_gets_a_clear_failure_for_a_page_we_refuse(
    openclaw: OpenClaw, tmp_path: Path, content: str, line: str
) -> None:
    """A non-zero exit (OpenClaw then falls back to the raw page) and one line; stopping
    early on a huge page does not break OpenClaw's writer."""
    page = tmp_path / "page.html"
    page.write_text(content, encoding="utf-8")
    result = run_like_openclaw(openclaw, ["--format", "markdown"], page)
    assert result.get("code") == 1, result
    assert result["stderr"].startswith(line) and result["stderr"].count("\n") == 1
