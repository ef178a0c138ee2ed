"""Small typed readers for config documents.

Each records a path-named ``ConfigIssue`` and returns None on a bad value, so a parser can
report every problem of a document at once instead of stopping at the first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from enrichment.pipeline.scope import ConfigIssue

Number = int | float
# Integer settings are stored in 32-bit columns (PostgreSQL ``integer``); a larger value is
# refused here, by path, instead of failing (or wrapping) when it is written.
MAX_STORED_INT = 2**31 - 1


def read_object(value: object, path: str, issues: list[ConfigIssue]) -> Mapping[str, object] | None:
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return value
    issues.append(ConfigIssue(path, "must be an object"))
    return None


def read_bool(value: object, path: str, issues: list[ConfigIssue]) -> bool | None:
    if isinstance(value, bool):
        return value
    issues.append(ConfigIssue(path, "must be true or false"))
    return None


def read_int(value: object, path: str, minimum: int, issues: list[ConfigIssue]) -> int | None:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON has one number type: 3.0 is 3
    if isinstance(value, int) and not isinstance(value, bool):
        if value < minimum:
            issues.append(ConfigIssue(path, f"must be at least {minimum}"))
            return None
        if value > MAX_STORED_INT:
            issues.append(ConfigIssue(path, f"must be at most {MAX_STORED_INT}"))
            return None
        return value
    issues.append(ConfigIssue(path, "must be an integer"))
    return None


def read_number(value: object, path: str, minimum: int, issues: list[ConfigIssue]) -> Number | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        if value >= minimum:
            return value
        issues.append(ConfigIssue(path, f"must be at least {minimum}"))
        return None
    issues.append(ConfigIssue(path, "must be a number"))
    return None


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
