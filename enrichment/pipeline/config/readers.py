"""The one toolkit every config section reads its part of the document with.

Each reader records a path-named ``ConfigIssue`` and returns a usable fallback (``None``,
``()`` or ``{}``) instead of raising, so one pass reports every problem of a document::

    read = ConfigReader(issues := [])
    read.integer({"maxChars": 1.5}, "maxChars", "tools.media.image", minimum=0)
    # -> None; issues == [ConfigIssue("tools.media.image.maxChars", "must be an integer")]

Value readers (``json_object``, ``boolean``, ``whole``, ``real``) check a value already in hand;
field readers (``mapping``, ``text``, ``integer``, ``number``, ``choice``, ``strings``,
``headers``) read one key of an object, an absent key being "not set". Both share one set of
checks, so a number means the same thing in every section.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

Number = int | float
# Integer settings are stored in 32-bit columns (PostgreSQL ``integer``); a larger value is
# refused here, by path, instead of failing (or wrapping) when it is written.
MAX_STORED_INT = 2**31 - 1


@dataclass(frozen=True)
class ConfigIssue:
    """One validation problem, located by a dotted JSON path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def unknown_key_issues(
    obj: Mapping[str, object], allowed: frozenset[str], path: str
) -> list[ConfigIssue]:
    """One issue per key of ``obj`` not in ``allowed``, in document order."""
    return [ConfigIssue(f"{path}.{key}", "unknown key") for key in obj if key not in allowed]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class ConfigReader:
    """Typed readers over one list of issues (see the module docstring)."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues

    def fail(self, path: str, message: str) -> None:
        self.issues.append(ConfigIssue(path, message))

    # --- values ------------------------------------------------------------------------

    def json_object(self, value: object, path: str) -> Mapping[str, object] | None:
        if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
            return value
        self.fail(path, "must be an object")
        return None

    def boolean(self, value: object, path: str) -> bool | None:
        if isinstance(value, bool):
            return value
        self.fail(path, "must be true or false")
        return None

    def whole(self, value: object, path: str, minimum: int) -> int | None:
        """An integer at least ``minimum``; ``3.0`` is 3 (JSON has one number type)."""
        if not _is_number(value) or float(cast(Number, value)) != int(cast(Number, value)):
            self.fail(path, "must be an integer")
            return None
        whole = int(cast(Number, value))
        if self._at_least(whole, path, minimum) is None:
            return None
        if whole > MAX_STORED_INT:
            self.fail(path, f"must be at most {MAX_STORED_INT}")
            return None
        return whole

    def real(self, value: object, path: str, minimum: float) -> Number | None:
        """A finite number at least ``minimum``, kept as given (1.9 stays 1.9)."""
        if not _is_number(value):
            self.fail(path, "must be a number")
            return None
        return self._at_least(cast(Number, value), path, minimum)

    def _at_least(self, value: Number, path: str, minimum: float) -> Number | None:
        if value >= minimum:
            return value
        self.fail(path, f"must be at least {minimum:g}")
        return None

    def json(self, value: object, path: str) -> bool:
        """True when ``value`` is plain JSON; records every part that is not."""
        found = json_issues(value, path)
        self.issues.extend(found)
        return not found

    # --- fields of an object -----------------------------------------------------------

    def mapping(self, value: object, path: str, allowed: frozenset[str]) -> Mapping[str, object]:
        """An object with only ``allowed`` keys (an unknown key is an issue, not fatal)."""
        obj = self.json_object(value, path)
        if obj is None:
            return {}
        self.issues.extend(unknown_key_issues(obj, allowed, path))
        return obj

    def text(self, obj: Mapping[str, object], key: str, path: str) -> str | None:
        value = obj.get(key)
        if value is None or isinstance(value, str):
            return value
        self.fail(f"{path}.{key}", "must be a string")
        return None

    def number(
        self, obj: Mapping[str, object], key: str, path: str, *, minimum: float
    ) -> float | None:
        value = obj.get(key)
        if value is None:
            return None
        found = self.real(value, f"{path}.{key}", minimum)
        return None if found is None else float(found)

    def integer(
        self, obj: Mapping[str, object], key: str, path: str, *, minimum: int
    ) -> int | None:
        value = obj.get(key)
        return None if value is None else self.whole(value, f"{path}.{key}", minimum)

    def choice(
        self, obj: Mapping[str, object], key: str, path: str, options: Sequence[str]
    ) -> str | None:
        value = self.text(obj, key, path)
        if value is not None and value not in options:
            self.fail(f"{path}.{key}", f'must be one of {", ".join(options)} (got "{value}")')
            return None
        return value

    def strings(self, obj: Mapping[str, object], key: str, path: str) -> tuple[str, ...]:
        value = obj.get(key, [])
        if (
            isinstance(value, str)
            or not isinstance(value, Sequence)
            or not all(isinstance(item, str) for item in value)
        ):
            self.fail(f"{path}.{key}", "must be a list of strings")
            return ()
        return tuple(cast(Sequence[str], value))

    def headers(self, obj: Mapping[str, object], path: str) -> tuple[tuple[str, str], ...]:
        value = obj.get("headers", {})
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            self.fail(f"{path}.headers", "must be an object of strings")
            return ()
        return tuple(cast(Mapping[str, str], value).items())


def json_issues(value: object, path: str) -> list[ConfigIssue]:
    """Problems that keep ``value`` from being plain JSON."""
    if value is None or isinstance(value, str | bool | int):
        return []
    if isinstance(value, float):
        return [] if math.isfinite(value) else [ConfigIssue(path, "must be a finite number")]
    if isinstance(value, list):
        return [
            issue for i, item in enumerate(value) for issue in json_issues(item, f"{path}[{i}]")
        ]
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            return [ConfigIssue(path, "object keys must be strings")]
        return [
            issue for key, item in value.items() for issue in json_issues(item, f"{path}.{key}")
        ]
    return [ConfigIssue(path, f"not a JSON value ({type(value).__name__})")]


def json_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value
