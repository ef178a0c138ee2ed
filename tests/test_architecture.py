"""The import rules of the house, checked on every module (README, "Architecture").

Layers, from the top; a module imports only from its own layer's allowed set below it:

- **shell** ``controlui`` (settings, urls, asgi, the one NinjaAPI, health) assembles the rest;
  nothing imports it.
- **edge** ``server`` (request-body limits, daphne's body, input guard, WebSocket origin,
  login everywhere) sits between daphne and Django; only the shell imports it.
- **apps** ``enrichment``, ``richoutput``, ``accounts`` — models, services, selectors, API
  routers, consumers, views. An app imports the library, the pure cores, and the apps *below*
  it in ``APP_ORDER`` (enrichment's demo stores rich output; nothing goes the other way).
- **library** ``common`` (domain errors, keyset paging, batching, JSON guard, channel layers,
  process pool, migration operations) imports no app, no edge and no shell.
- **pure cores** ``enrichment.pipeline`` and ``richoutput.canvas`` import no web framework
  and nothing of ours but pure cores (the canvas parser shares the pipeline's SSRF classifier
  and markdown scanner; the pipeline never imports the canvas).

And no import cycle anywhere: between any two of our modules, imports run one way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("accounts", "common", "controlui", "enrichment", "richoutput", "server")
PURE_PACKAGES = ("enrichment.pipeline", "richoutput.canvas")
FORBIDDEN_IN_PURE = ("django", "channels", "asgiref", "ninja", "daphne", "twisted")
# Lowest first: an app may import the apps before it in this list, never those after it.
APP_ORDER = ("accounts", "richoutput", "enrichment")


# --- reading imports ------------------------------------------------------------------------
def imported_modules(source: str, module: str = "") -> list[str]:
    """Every module ``source`` imports, lazy imports inside functions included. ``from pkg
    import name`` counts as importing ``pkg.name`` (a module or a name of ``pkg``: the
    resolver below decides); relative imports are resolved against ``module``."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: -node.level]
                base = ".".join([*parts, base] if base else parts)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.extend(arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant))
    return names


def resolve(name: str, modules: Iterable[str]) -> str | None:
    """The longest of ``modules`` that ``name`` is or lies in (``pkg.func`` -> ``pkg``)."""
    known = set(modules)
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def our_sources() -> dict[str, str]:
    return {
        _module_name(path): path.read_text(encoding="utf-8")
        for package in OURS
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    }


def import_graph(sources: Mapping[str, str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, source in sources.items():
        targets = {resolve(name, sources) for name in imported_modules(source, module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


# --- the rules ------------------------------------------------------------------------------
def layer_of(module: str) -> str:
    if module.startswith(PURE_PACKAGES):
        return "pure"
    top = module.split(".")[0]
    return {"controlui": "shell", "server": "edge", "common": "library"}.get(top, "app")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def allowed(importer: str, imported: str) -> bool:
    """May ``importer`` import ``imported`` (both ours)?"""
    layer = layer_of(importer)
    target = layer_of(imported)
    if layer == "shell":
        return True
    if layer == "edge":
        return target in ("edge", "library", "pure")
    if layer == "library":
        return target in ("library", "pure")
    if layer == "pure":
        if target != "pure":
            return False
        # The pipeline never reaches into the canvas parser (one way between cores).
        return not (_within(importer, "enrichment.pipeline") and _within(imported, "richoutput"))
    # An app: the library, the pure cores, itself, and the apps below it.
    if target in ("library", "pure"):
        return True
    if target != "app":
        return False
    mine, theirs = importer.split(".")[0], imported.split(".")[0]
    return APP_ORDER.index(theirs) <= APP_ORDER.index(mine)


def wrong_imports(module: str, names: Iterable[str], modules: Iterable[str]) -> list[str]:
    known = list(modules)
    wrong = []
    for name in names:
        if name.split(".")[0] not in OURS:
            if layer_of(module) == "pure" and name.split(".")[0] in FORBIDDEN_IN_PURE:
                wrong.append(name)
            continue
        target = resolve(name, known) or name
        if not allowed(module, target):
            wrong.append(name)
    return wrong


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


# --- the checks on the code -----------------------------------------------------------------
SOURCES = our_sources()


def test_every_package_of_the_house_exists() -> None:
    for package in (*OURS, *PURE_PACKAGES):
        assert (ROOT / package.replace(".", "/") / "__init__.py").is_file(), package


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_module_imports_point_down_the_layers(module: str) -> None:
    names = imported_modules(SOURCES[module], module)
    assert wrong_imports(module, names, SOURCES) == []


def test_no_import_cycle_between_modules() -> None:
    assert import_cycles(import_graph(SOURCES)) == []


def room_of(module: str) -> str:
    """The folder (or loose module) a module lives in, one level below its package: the
    rooms of ``farm-studio look enrichment``, e.g. ``enrichment.services`` or, in a pure
    core, ``enrichment.pipeline.config``."""
    package = next((p for p in PURE_PACKAGES if _within(module, p)), module.split(".")[0])
    rest = module[len(package) :].lstrip(".").split(".")
    return f"{package}.{rest[0]}" if rest[0] else package


def room_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        room = room_of(module)
        rooms.setdefault(room, set()).update(room_of(t) for t in targets if room_of(t) != room)
    return rooms


def test_no_import_cycle_between_rooms() -> None:
    """Folders import each other one way only: services may read through selectors and
    build stages from stage_specs, never the other way round."""
    assert import_cycles(room_graph(import_graph(SOURCES))) == []


def test_rooms_are_folders_one_level_down() -> None:
    assert room_of("enrichment.services.runs") == "enrichment.services"
    assert room_of("enrichment.models") == "enrichment.models"
    assert room_of("enrichment") == "enrichment"
    assert room_of("enrichment.pipeline.config.scope") == "enrichment.pipeline.config"
    assert room_of("enrichment.pipeline") == "enrichment.pipeline"
    graph = {"a.x.one": {"a.y.two"}, "a.y.two": {"a.x.three"}, "a.x.three": set()}
    assert import_cycles(room_graph(graph)) == [["a.x", "a.y"]]


def test_pipeline_is_grouped_by_concern() -> None:
    """The pure core is packages per concern, with a few shared primitives beside them."""
    top = sorted(p.stem for p in (ROOT / "enrichment/pipeline").glob("*.py"))
    assert top == ["__init__", "runner", "stages", "templates"]


# --- the checker checks itself --------------------------------------------------------------
MODULES = (
    "controlui.settings",
    "controlui.api",
    "server.body_limits",
    "common.errors",
    "common.keyset",
    "accounts.models",
    "richoutput.models",
    "richoutput.selectors",
    "richoutput.canvas.render",
    "enrichment.models",
    "enrichment.views.history",
    "enrichment.services.runs",
    "enrichment.stage_specs",
    "enrichment.pipeline.stages",
    "enrichment.pipeline.links.stage",
    "enrichment.pipeline.net.ssrf",
)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("enrichment.views.history", "from controlui.settings import DEBUG"),
        ("enrichment.api", "from controlui.api import api"),
        ("richoutput.views", "import controlui.urls"),
        ("common.errors", "from enrichment.models import Run"),
        ("common.keyset", "from richoutput import selectors"),
        ("common.keyset", "from server.body_limits import describe_limit"),
        ("server.body_limits", "from enrichment.api.enrich import MAX_UPLOAD_FILES"),
        ("enrichment.api", "from server.body_limits import body_limit_for"),
        ("enrichment.consumers", "import controlui"),
        ("accounts.auth", "from richoutput.models import CanvasDocument"),
        ("richoutput.services", "from enrichment.services.runs import run_summary"),
        ("enrichment.pipeline.links.stage", "from enrichment.services.runs import run_summary"),
        ("enrichment.pipeline.stages", "from enrichment.stage_specs import STAGES"),
        ("enrichment.pipeline.net.ssrf", "from richoutput.canvas.render import render"),
        ("richoutput.canvas.render", "from richoutput.models import CanvasDocument"),
        ("richoutput.canvas.render", "from enrichment.services.runs import run_summary"),
        ("enrichment.pipeline.stages", "import django"),
        ("enrichment.pipeline.stages", "def f():\n    from django.db import models\n"),
        ("richoutput.canvas.render", "from channels.layers import get_channel_layer"),
        ("richoutput.canvas.render", "__import__('ninja')"),
        ("enrichment.pipeline.stages", "from ..models import Run"),
    ],
)
def test_checker_catches_wrong_imports(module: str, source: str) -> None:
    assert wrong_imports(module, imported_modules(source, module), MODULES) != []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("controlui.api", "from enrichment.api import enrich\nfrom server import daphne_body"),
        ("server.input_guard", "from common.json_guard import parse_json"),
        ("enrichment.views.history", "from common.errors import NotFound"),
        ("enrichment.services.runs", "from enrichment.pipeline.stages import run_stages"),
        ("enrichment.services.runs", "from richoutput.models import AssistantMessage"),
        ("richoutput.api", "from richoutput.canvas.render import render_assistant_text"),
        ("richoutput.api", "from accounts.models import ApiToken"),
        ("common.keyset", "from common.errors import InvalidInput"),
        ("enrichment.pipeline.links.stage", "from enrichment.pipeline.net.ssrf import check_url"),
        ("richoutput.canvas.media_refs", "from enrichment.pipeline.net.ssrf import check_url"),
        ("enrichment.pipeline.stages", "import json\nfrom . import scope\nimport lxml.html"),
    ],
)
def test_checker_allows_downward_imports(module: str, source: str) -> None:
    assert wrong_imports(module, imported_modules(source, module), MODULES) == []


def test_checker_finds_cycles_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_from_import_of_a_module_counts_as_importing_that_module() -> None:
    sources = {"pkg": "", "pkg.mod": "", "user": "from pkg import mod\nfrom pkg import name"}
    assert import_graph(sources)["user"] == {"pkg.mod", "pkg"}
