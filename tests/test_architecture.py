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
