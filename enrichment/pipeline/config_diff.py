"""What changed between two config documents, as a flat list of paths.

Used by the run page to compare the config a run ran under (its snapshot) with today's.
Dicts are compared key by key, lists position by position, anything else by value::

    >>> config_changes(
    ...     {"tools": {"links": {"maxLinks": 3, "scope": {"rules": [{"action": "allow"}]}}}},
    ...     {"tools": {"links": {"maxLinks": 5, "scope": {"rules": []}}}, "agents": {}},
    ... )  # doctest: +NORMALIZE_WHITESPACE
    [ConfigChange(path='agents', kind='added', before=None, after={}),
     ConfigChange(path='tools.links.maxLinks', kind='changed', before=3, after=5),
     ConfigChange(path='tools.links.scope.rules[0]', kind='removed',
                  before={'action': 'allow'}, after=None)]

A missing key and a key holding ``None`` are different (``added``/``removed``), because an
absent key follows the default while an explicit value does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class ConfigChange:
    path: str
    kind: ChangeKind
    before: object
    after: object


def config_changes(before: object, after: object) -> list[ConfigChange]:
    """Every difference between ``before`` and ``after``, in path order."""
    changes: list[ConfigChange] = []
    _compare(before, after, "", changes)
    return changes


def _compare(before: object, after: object, path: str, out: list[ConfigChange]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            child = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append(ConfigChange(child, "removed", before[key], None))
            elif key not in before:
                out.append(ConfigChange(child, "added", None, after[key]))
            else:
                _compare(before[key], after[key], child, out)
    elif isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            child = f"{path}[{index}]"
            if index >= len(after):
                out.append(ConfigChange(child, "removed", before[index], None))
            elif index >= len(before):
                out.append(ConfigChange(child, "added", None, after[index]))
            else:
                _compare(before[index], after[index], child, out)
    elif before != after or type(before) is not type(after):
        out.append(ConfigChange(path or "(whole document)", "changed", before, after))
