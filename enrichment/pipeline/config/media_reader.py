"""Typed readers for raw config objects that record a path-named issue instead of raising.

Every reader returns a usable value (``None``, ``()`` or ``{}``) when the input is wrong and
appends one ``ConfigIssue`` naming the exact path, so one pass reports every problem::

    read = ConfigReader(issues := [])
    read.integer({"maxChars": 1.5}, "maxChars", "tools.media.image", minimum=0)
    # -> None; issues == [ConfigIssue("tools.media.image.maxChars", "must be a whole number")]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import cast

from enrichment.pipeline.scope import ConfigIssue, unknown_key_issues


class ConfigReader:
    """Typed field readers that record a path-named issue instead of raising."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues

    def fail(self, path: str, message: str) -> None:
        self.issues.append(ConfigIssue(path, message))

    def mapping(self, value: object, path: str, allowed: frozenset[str]) -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            self.fail(path, "must be an object")
            return {}
        self.issues.extend(unknown_key_issues(value, allowed, path))
        return cast(Mapping[str, object], value)

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
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.fail(f"{path}.{key}", "must be a number")
            return None
        if value < minimum:
            self.fail(f"{path}.{key}", f"must be at least {minimum:g}")
            return None
        return float(value)

    def integer(
        self, obj: Mapping[str, object], key: str, path: str, *, minimum: int
    ) -> int | None:
        value = self.number(obj, key, path, minimum=minimum)
        if value is not None and value != int(value):
            self.fail(f"{path}.{key}", "must be a whole number")
            return None
        return None if value is None else int(value)

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
        if isinstance(value, str) or not isinstance(value, Sequence):
            self.fail(f"{path}.{key}", "must be a list of strings")
            return ()
        if not all(isinstance(item, str) for item in value):
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
