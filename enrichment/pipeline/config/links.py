"""The ``tools.links`` section (and an agent's ``tools.links`` override)."""

from __future__ import annotations

from typing import Any

from enrichment.pipeline.config.model import LINKS_FIELDS, LinkModel
from enrichment.pipeline.config.readers import ConfigReader
from enrichment.pipeline.config.scope import ScopeConfig, parse_scope
from enrichment.pipeline.templates import find_template_errors

MODEL_KEYS = frozenset({"type", "command", "args", "timeoutSeconds"})


def parse_links_block(read: ConfigReader, value: object, path: str) -> dict[str, Any]:
    """The keys present in a links block, as ``LinksConfig``/``LinksOverride`` field values."""
    block = read.json_object(value, path)
    if block is None:
        return {}
    read.mapping(block, path, frozenset(LINKS_FIELDS))  # unknown keys
    fields: dict[str, Any] = {}
    for key, raw in block.items():
        if key in LINKS_FIELDS:
            parsed = _links_value(read, key, raw, f"{path}.{key}")
            if parsed is not None:
                fields[LINKS_FIELDS[key]] = parsed
    return fields


def _links_value(read: ConfigReader, key: str, value: object, path: str) -> object:
    if key == "enabled":
        return read.boolean(value, path)
    if key in ("maxLinks", "concurrency"):
        return read.whole(value, path, 1)
    if key == "timeoutSeconds":
        return read.real(value, path, 1)
    if key == "scope":
        return _scope(read, value, path)
    return _models(read, value, path)


def _scope(read: ConfigReader, value: object, path: str) -> ScopeConfig | None:
    scope, issues = parse_scope(value, path)
    read.issues.extend(issues)
    return scope


def _models(read: ConfigReader, value: object, path: str) -> tuple[LinkModel, ...] | None:
    if not isinstance(value, list):
        read.fail(path, "must be a list")
        return None
    models = [_model(read, item, f"{path}[{index}]") for index, item in enumerate(value)]
    return tuple(model for model in models if model is not None)


def _model(read: ConfigReader, value: object, path: str) -> LinkModel | None:
    entry = read.json_object(value, path)
    if entry is None:
        return None
    read.mapping(entry, path, MODEL_KEYS)  # unknown keys
    model_type = entry.get("type", "cli")
    if model_type != "cli":
        read.fail(f"{path}.type", f"unsupported model type {model_type!r}")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        read.fail(f"{path}.command", "must be a non-empty string")
        command = ""
    args = _args(read, entry.get("args", []), f"{path}.args")
    timeout = None
    if "timeoutSeconds" in entry:
        timeout = read.real(entry["timeoutSeconds"], f"{path}.timeoutSeconds", 1)
    return LinkModel(command.strip(), args, timeout)


def _args(read: ConfigReader, value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        read.fail(path, "must be a list of strings")
        return ()
    for index, arg in enumerate(value):
        if not isinstance(arg, str):
            read.fail(f"{path}[{index}]", "must be a string")
            continue
        for error in find_template_errors(arg):
            read.fail(f"{path}[{index}]", f"malformed template: {error}")
    return tuple(arg for arg in value if isinstance(arg, str))
