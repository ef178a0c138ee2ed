"""A structural diff of two OpenClaw-shaped config documents, and its one-line summary.

Objects are compared key by key; lists are aligned on whole elements, so inserting a scope
rule in front reads as one added rule, not as every later rule "changed"; an element that
leaves one position and reappears unchanged at another is "moved"; lists of objects with
an ``id`` (``agents.list``) are matched by id. Two elements that were replaced in place are
compared field by field, which gives the precise path::

    >>> old = {"tools": {"links": {"scope": {"rules": [
    ...     {"action": "deny", "match": {"channel": "slack"}}]}}}}
    >>> new = {"tools": {"links": {"scope": {"rules": [
    ...     {"action": "deny", "match": {"channel": "discord"}},
    ...     {"action": "allow", "match": {}}]}}}}
    >>> [str(change) for change in diff_documents(old, new)]
    ['tools.links.scope.rules[0].match.channel: "slack" → "discord"', \
'tools.links.scope.rules[1]: added {"action": "allow", "match": {}}']
    >>> summarize(diff_documents(old, new))
    'links.scope.rules[0].match.channel changed; links.scope: +1 rule'
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ChangeKind = Literal["added", "removed", "changed", "moved"]

# What one element of a well-known list is called in a summary.
ELEMENT_NOUNS = {"rules": "rule", "models": "model", "list": "agent", "attachments": "attachment"}
SUMMARY_PARTS = 6


def canonical(value: Any) -> str:
    """The JSON text used to decide whether two values are equal (key order ignored)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


@dataclass(frozen=True)
class Change:
    """One difference: ``path`` is where it is in the new document (in the old one for a
    removal); ``moved_from`` is the old path of a moved element."""

    path: str
    kind: ChangeKind
    old: Any = None
    new: Any = None
    moved_from: str | None = None
    # What a person calls the element at ``path`` / ``moved_from``, when it is a scope rule
    # ("global rule 2", "agent support's rule 1"): rule numbers are read from 1, while the
    # JSON paths keep their 0-based indexes.
    label: str | None = None
    moved_from_label: str | None = None

    @property
    def text(self) -> str:
        """``global rule 2: moved from global rule 4``; the plain form when not a rule."""
        where = self.label or self.path
        if self.kind == "moved":
            return f"{where}: moved from {self.moved_from_label or self.moved_from}"
        return f"{where}: {self.kind}"

    def __str__(self) -> str:
        if self.kind == "added":
            return f"{self.path}: added {canonical(self.new)}"
        if self.kind == "removed":
            return f"{self.path}: removed {canonical(self.old)}"
        if self.kind == "moved":
            return f"{self.path}: moved from {self.moved_from}"
        return f"{self.path}: {canonical(self.old)} → {canonical(self.new)}"

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind in ("removed", "changed"):
            result["old"] = self.old
        if self.kind in ("added", "changed"):
            result["new"] = self.new
        if self.moved_from is not None:
            result["movedFrom"] = self.moved_from
        if self.label is not None:
            result["label"] = self.label
        if self.moved_from_label is not None:
            result["movedFromLabel"] = self.moved_from_label
        return result


def diff_documents(old: Any, new: Any) -> list[Change]:
    """Every difference between two JSON documents, in document order."""
    changes: list[Change] = []
    _diff(old, new, "", changes)
    return [
        dataclasses.replace(
            change,
            label=path_label(change.path, old if change.kind == "removed" else new),
            moved_from_label=path_label(change.moved_from, old) if change.moved_from else None,
        )
        for change in changes
    ]


_RULE_PATH = re.compile(
    r"^(?:agents\.list\[(?P<agent>\d+)\]\.)?tools\.(?:links|media\.(?P<media>\w+))"
    r"\.scope\.rules\[(?P<rule>\d+)\]"
)


def path_label(path: str, document: Any) -> str | None:
    """``global rule 2`` for ``tools.links.scope.rules[1]`` (and anything under it);
    ``agent support's rule 1`` for ``agents.list[0].tools.links.scope.rules[0]``, the agent
    named from ``document``; None for a path that is not in a scope rule."""
    found = _RULE_PATH.match(path)
    if found is None:
        return None
    rule = f"rule {int(found['rule']) + 1}"
    if found["media"]:
        rule = f"{found['media']} media {rule}"
    if found["agent"] is None:
        return f"global {rule}"
    index = int(found["agent"])
    agents = document.get("agents", {}) if isinstance(document, Mapping) else {}
    entries = agents.get("list") if isinstance(agents, Mapping) else None
    agent = entries[index] if isinstance(entries, list) and index < len(entries) else None
    agent_id = agent.get("id") if isinstance(agent, Mapping) else None
    return f"agent {agent_id}'s {rule}" if agent_id else f"agent #{index + 1}'s {rule}"


def _join(path: str, key: str) -> str:
    simple = key.replace("_", "a").isalnum() and not key[:1].isdigit()
    if simple:
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _diff(old: Any, new: Any, path: str, changes: list[Change]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in [*old, *(key for key in new if key not in old)]:
            where = _join(path, str(key))
            if key not in new:
                changes.append(Change(where, "removed", old=old[key]))
            elif key not in old:
                changes.append(Change(where, "added", new=new[key]))
            else:
                _diff(old[key], new[key], where, changes)
    elif isinstance(old, list) and isinstance(new, list):
        _diff_list(old, new, path, changes)
    elif type(old) is not type(new) or old != new:
        changes.append(Change(path, "changed", old=old, new=new))


def _ids(items: Sequence[Any]) -> list[str] | None:
    ids = [item.get("id") for item in items if isinstance(item, Mapping)]
    if len(ids) != len(items) or not all(isinstance(i, str) for i in ids):
        return None
    return ids if len(set(ids)) == len(ids) else None  # type: ignore[return-value]


def _diff_list(old: list[Any], new: list[Any], path: str, changes: list[Change]) -> None:
    old_ids, new_ids = _ids(old), _ids(new)
    if old_ids is not None and new_ids is not None and old and new:
        _diff_by_id(old, new, old_ids, new_ids, path, changes)
        return
    old_keys, new_keys = [canonical(v) for v in old], [canonical(v) for v in new]
    matcher = difflib.SequenceMatcher(a=old_keys, b=new_keys, autojunk=False)
    removed: dict[str, list[int]] = {}
    added: list[tuple[int, Any]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for offset in range(paired):
            _diff(old[i1 + offset], new[j1 + offset], f"{path}[{j1 + offset}]", changes)
        for index in range(i1 + paired, i2):
            removed.setdefault(old_keys[index], []).append(index)
        added += [(index, new[index]) for index in range(j1 + paired, j2)]
    for index, value in added:
        sources = removed.get(canonical(value))
        if sources:
            changes.append(
                Change(f"{path}[{index}]", "moved", moved_from=f"{path}[{sources.pop(0)}]")
            )
        else:
            changes.append(Change(f"{path}[{index}]", "added", new=value))
    for indexes in removed.values():
        changes += [Change(f"{path}[{index}]", "removed", old=old[index]) for index in indexes]


def _diff_by_id(
    old: list[Any],
    new: list[Any],
    old_ids: list[str],
    new_ids: list[str],
    path: str,
    changes: list[Change],
) -> None:
    old_at = {item_id: index for index, item_id in enumerate(old_ids)}
    kept = [item_id for item_id in old_ids if item_id in set(new_ids)]
    for index, item_id in enumerate(new_ids):
        where = f"{path}[{index}]"
        if item_id not in old_at:
            changes.append(Change(where, "added", new=new[index]))
            continue
        before = old_at[item_id]
        if kept.index(item_id) != [i for i in new_ids if i in old_at].index(item_id):
            changes.append(Change(where, "moved", moved_from=f"{path}[{before}]"))
        _diff(old[before], new[index], where, changes)
    changes += [
        Change(f"{path}[{index}]", "removed", old=old[index])
        for index, item_id in enumerate(old_ids)
        if item_id not in set(new_ids)
    ]


def _list_of(path: str) -> tuple[str, str] | None:
    """``("links.scope", "rule")`` for ``tools.links.scope.rules[3]``; None otherwise."""
    if not path.endswith("]"):
        return None
    head = path[: path.rindex("[")]
    parent, _, key = head.rpartition(".")
    noun = ELEMENT_NOUNS.get(key)
    if noun is None:
        return None
    return _short(parent or key), noun


def _short(path: str) -> str:
    return path.removeprefix("tools.")


def summarize(changes: Sequence[Change]) -> str:
    """One line: ``links.scope: +1 rule, 1 rule moved; links.models[0].args changed``."""
    if not changes:
        return "no changes"
    counts: Counter[tuple[str, str, str]] = Counter()
    parts: list[str] = []
    for change in changes:
        element = _list_of(change.path) if change.kind != "changed" else None
        if element is not None:
            counts[(*element, change.kind)] += 1
            label = element[0]
        else:
            label = f"{_short(change.path)} {change.kind}"
        if label not in parts:
            parts.append(label)
    texts = []
    for label in parts:
        pieces = [
            _count_text(count, noun, kind)
            for (where, noun, kind), count in counts.items()
            if where == label
        ]
        texts.append(f"{label}: {', '.join(pieces)}" if pieces else label)
    if len(texts) > SUMMARY_PARTS:
        texts = [*texts[:SUMMARY_PARTS], f"… {len(texts) - SUMMARY_PARTS} more"]
    return "; ".join(texts)


def _count_text(count: int, noun: str, kind: str) -> str:
    nouns = noun if count == 1 else f"{noun}s"
    if kind == "added":
        return f"+{count} {nouns}"
    if kind == "removed":
        return f"−{count} {nouns}"
    return f"{count} {nouns} {kind}"
