"""Refuse JSON and text that the database or the pipeline cannot hold, naming where.

PostgreSQL rejects a NUL character in ``text`` and ``jsonb`` (SQLite stores it), a lone
surrogate such as ``"\\udc00"`` cannot be encoded as UTF-8 at all, and a document nested
900 levels deep exhausts Python's recursion in whatever walks it next. Each would surface
as a 500 deep inside a save; checked at the door they become a 4xx naming the field:

>>> str(json_problem({"tools": {"links": {"models": [{"command": "a\\x00b"}]}}}))
'tools.links.models.0.command: contains a NUL character (U+0000)'

Pure Python (no Django), shared by the API middleware and the WebSocket consumers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Deeper than any config document or message we accept (the config nests about 8 levels).
MAX_JSON_DEPTH = 32

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class JsonProblem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class JsonInputError(ValueError):
    """Input that is not JSON we can accept; ``problem`` says where and why."""

    def __init__(self, problem: JsonProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as text, or None when it can."""
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    match = _SURROGATE.search(text)
    if match is not None:
        return f"contains a lone surrogate (U+{ord(match.group()):04X}), which is not valid Unicode"
    return None


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def json_problem(
    value: Any, *, root: str = "", max_depth: int = MAX_JSON_DEPTH
) -> JsonProblem | None:
    """The first string (key or value) that cannot be stored, or nesting beyond ``max_depth``.

    Iterative, so a hostile depth cannot exhaust the stack of the checker itself.
    """
    stack: list[tuple[str, Any, int]] = [(root, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, str):
            message = text_problem(item)
            if message is not None:
                return JsonProblem(path, message)
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                return JsonProblem(path, f"nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key, child in reversed(item.items()):
                    message = text_problem(str(key))
                    if message is not None:
                        return JsonProblem(_join(path, ascii(key)), f"key {message}")
                    stack.append((_join(path, key), child, depth + 1))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((_join(path, index), item[index], depth + 1))
    return None


def parse_json(raw: str | bytes, *, root: str = "", max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses what ``json_problem`` refuses, with the problem named.

    A document nested beyond Python's recursion limit makes ``json.loads`` itself raise
    ``RecursionError``; it is refused the same way as one nested beyond ``max_depth``.
    """
    try:
        value = json.loads(raw)
    except RecursionError:
        raise JsonInputError(JsonProblem(root, f"nested deeper than {max_depth} levels")) from None
    except ValueError as exc:
        raise JsonInputError(JsonProblem(root, f"not valid JSON ({exc})")) from None
    problem = json_problem(value, root=root, max_depth=max_depth)
    if problem is not None:
        raise JsonInputError(problem)
    return value
