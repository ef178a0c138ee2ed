"""The pure cores import nothing from the web framework (STYLE: functional core, Django shell)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ("enrichment/pipeline", "controlui/canvas")
FORBIDDEN = ("django", "channels", "asgiref", "ninja")


def imported_modules(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.extend(arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant))
    return names


def forbidden_imports(source: str) -> list[str]:
    return [name for name in imported_modules(source) if name.split(".")[0] in FORBIDDEN]


def pure_files() -> list[Path]:
    return sorted(path for package in PURE_PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_pure_packages_exist() -> None:
    for package in PURE_PACKAGES:
        assert (ROOT / package / "__init__.py").is_file(), package


@pytest.mark.parametrize("path", pure_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_module_imports_no_framework(path: Path) -> None:
    assert forbidden_imports(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        "import django",
        "from django.db import models",
        "import channels.layers",
        "from asgiref.sync import async_to_sync",
        "from ninja import Router",
        "def f():\n    import django.conf\n",
        "__import__('django')",
    ],
)
def test_checker_catches_forbidden_imports(source: str) -> None:
    assert forbidden_imports(source) != []


def test_checker_allows_stdlib_and_relative_imports() -> None:
    assert forbidden_imports("import json\nfrom . import links\nfrom .ssrf import check_url") == []


# --- Import direction: project -> apps -> plumbing -> (nothing of ours) ---------------------
# Everything else in ``controlui/`` (settings, urls, asgi, the NinjaAPI, middleware, health, the
# ASGI body limits, ...) assembles the project: apps and plumbing may import only these parts.
IMPORTABLE_FROM_CONTROLUI = (
    "controlui.plumbing",
    "controlui.canvas",
    "controlui.rich",
    "controlui.models",
)
APP_PACKAGES = ("enrichment", "controlui/rich")
PLUMBING = "controlui/plumbing"


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _ours(names: list[str]) -> list[str]:
    return [name for name in names if name.split(".")[0] in ("controlui", "enrichment")]


def upward_imports(module: str, source: str) -> list[str]:
    """Imports of ``module`` that point against the layers' direction."""
    wrong = []
    for name in _ours(imported_modules(source)):
        if name.startswith("controlui") and not any(
            name == part or name.startswith(part + ".") for part in IMPORTABLE_FROM_CONTROLUI
        ):
            wrong.append(name)  # only the project assembles; apps and plumbing never reach up
        elif module.startswith("controlui.plumbing") and not name.startswith("controlui.plumbing"):
            wrong.append(name)  # plumbing knows no app
        elif module.startswith("enrichment.pipeline") and not name.startswith(
            "enrichment.pipeline"
        ):
            wrong.append(name)  # the pure core knows no shell
        elif module.startswith("controlui.canvas") and not name.startswith(
            ("controlui.canvas", "enrichment.pipeline")
        ):
            wrong.append(name)  # pure cores may share each other (the SSRF classifier)
    return wrong


def layered_files() -> list[Path]:
    packages = (*APP_PACKAGES, PLUMBING, *PURE_PACKAGES)
    return sorted(
        path
        for package in packages
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    )


@pytest.mark.parametrize("path", layered_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_point_down_the_layers(path: Path) -> None:
    assert upward_imports(_module_name(path), path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("enrichment.views", "from controlui.settings import DEBUG"),
        ("enrichment.api", "from controlui.api import api"),
        ("controlui.rich.views", "import controlui.urls"),
        ("controlui.plumbing.errors", "from enrichment.models import Run"),
        ("controlui.plumbing.keyset", "from controlui.rich import selectors"),
        ("enrichment.pipeline.links.stage", "from enrichment.services import run_summary"),
        ("enrichment.pipeline.stages", "from enrichment.stages import STAGES"),
        ("controlui.canvas.render", "from controlui.models import CanvasDocument"),
        ("controlui.canvas.render", "from enrichment.services import run_summary"),
        ("enrichment.api", "from controlui.body_limits import body_limit_for"),
        ("enrichment.consumers", "import controlui"),
    ],
)
def test_checker_catches_upward_imports(module: str, source: str) -> None:
    assert upward_imports(module, source) != []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("enrichment.views", "from controlui.plumbing.errors import NotFound"),
        ("enrichment.services", "from enrichment.pipeline.stages import run_stages"),
        ("controlui.rich.api", "from controlui.canvas.render import render_assistant_text"),
        ("controlui.plumbing.keyset", "from controlui.plumbing.errors import InvalidInput"),
        ("enrichment.pipeline.links.stage", "from enrichment.pipeline.fetch.ssrf import check_url"),
        (
            "controlui.canvas.media_validation",
            "from enrichment.pipeline.fetch.ssrf import check_url",
        ),
    ],
)
def test_checker_allows_downward_imports(module: str, source: str) -> None:
    assert upward_imports(module, source) == []


def test_pipeline_is_grouped_by_concern() -> None:
    """The pure core is packages per concern, with a few shared primitives beside them."""
    top = sorted(p.stem for p in (ROOT / "enrichment/pipeline").glob("*.py"))
    assert top == ["__init__", "runner", "scope", "stages", "templates"]
