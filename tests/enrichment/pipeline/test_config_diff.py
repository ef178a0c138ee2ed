from __future__ import annotations

import pytest

from enrichment.pipeline.config_diff import ConfigChange, config_changes

RULE = {"action": "allow", "match": {"channel": "slack"}}


@pytest.mark.parametrize(
    "before, after, expected",
    [
        ({"a": 1}, {"a": 1}, []),
        ({}, {}, []),
        ({"a": 1}, {"a": 2}, [ConfigChange("a", "changed", 1, 2)]),
        ({}, {"a": {"b": 1}}, [ConfigChange("a", "added", None, {"b": 1})]),
        ({"a": {"b": 1}}, {}, [ConfigChange("a", "removed", {"b": 1}, None)]),
        # An explicit null is not the same as a missing key (which follows the default).
        ({"a": None}, {}, [ConfigChange("a", "removed", None, None)]),
        ({"r": [RULE]}, {"r": []}, [ConfigChange("r[0]", "removed", RULE, None)]),
        (
            {"r": [RULE]},
            {"r": [{**RULE, "action": "deny"}]},
            [ConfigChange("r[0].action", "changed", "allow", "deny")],
        ),
        # True == 1 in Python, not in a config document.
        ({"enabled": True}, {"enabled": 1}, [ConfigChange("enabled", "changed", True, 1)]),
        ({"x": [1]}, {"x": {"0": 1}}, [ConfigChange("x", "changed", [1], {"0": 1})]),
        ({"a": 1}, [1], [ConfigChange("(whole document)", "changed", {"a": 1}, [1])]),
    ],
    ids=[
        "same",
        "both-empty",
        "value",
        "added",
        "removed",
        "explicit-null",
        "list-shorter",
        "nested-in-list",
        "bool-vs-int",
        "list-vs-dict",
        "not-a-dict",
    ],
)
def test_config_changes(before, after, expected) -> None:
    assert config_changes(before, after) == expected


def test_changes_come_in_path_order() -> None:
    changes = config_changes({"b": 1, "a": {"z": 1, "y": 1}}, {"b": 2, "a": {"z": 2, "y": 2}})
    assert [change.path for change in changes] == ["a.y", "a.z", "b"]
