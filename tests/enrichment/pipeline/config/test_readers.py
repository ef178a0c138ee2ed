"""The one config reader toolkit: every section gets the same answer for the same value."""

from __future__ import annotations

import math

import pytest

from enrichment.pipeline.config.readers import ConfigIssue, ConfigReader


def read(method: str, *args: object, **kwargs: object) -> tuple[object, list[str]]:
    issues: list[ConfigIssue] = []
    value = getattr(ConfigReader(issues), method)(*args, **kwargs)
    return value, [str(issue) for issue in issues]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, (3, [])),
        (3.0, (3, [])),  # JSON has one number type
        (2.5, (None, ["p: must be an integer"])),
        ("3", (None, ["p: must be an integer"])),
        (True, (None, ["p: must be an integer"])),
        (math.inf, (None, ["p: must be an integer"])),
        (math.nan, (None, ["p: must be an integer"])),
        (0, (None, ["p: must be at least 1"])),
    ],
    ids=["int", "integral-float", "fraction", "string", "bool", "inf", "nan", "below-minimum"],
)
def test_whole(value: object, expected: tuple[object, list[str]]) -> None:
    assert read("whole", value, "p", 1) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.9, (1.9, [])),  # kept as given, never rounded
        (30, (30, [])),
        (0.5, (None, ["p: must be at least 1"])),
        ("1", (None, ["p: must be a number"])),
        (False, (None, ["p: must be a number"])),
        (math.inf, (None, ["p: must be a number"])),
    ],
    ids=["fraction-kept", "int", "below-minimum", "string", "bool", "inf"],
)
def test_real(value: object, expected: tuple[object, list[str]]) -> None:
    assert read("real", value, "p", 1) == expected


def test_field_readers_share_the_value_checks_and_name_the_key() -> None:
    assert read("integer", {"n": 1.5}, "n", "a.b", minimum=0) == (
        None,
        ["a.b.n: must be an integer"],
    )
    assert read("integer", {}, "n", "a.b", minimum=0) == (None, [])  # absent = not set
    assert read("number", {"t": 2}, "t", "a", minimum=1) == (2.0, [])


def test_mapping_reports_unknown_keys_and_keeps_going() -> None:
    value, issues = read("mapping", {"a": 1, "zz": 2}, "x", frozenset({"a"}))
    assert value == {"a": 1, "zz": 2}
    assert issues == ["x.zz: unknown key"]
    assert read("mapping", [1], "x", frozenset()) == ({}, ["x: must be an object"])


def test_json_names_each_part_that_is_not_json() -> None:
    assert read("json", {"a": [1, math.nan], "b": object}, "p") == (
        False,
        ["p.a[1]: must be a finite number", "p.b: not a JSON value (type)"],
    )
    assert read("json", {"ok": [1, "x", None, True]}, "p") == (True, [])


def test_strings_choice_headers() -> None:
    assert read("strings", {"k": ["a", 1]}, "k", "p") == ((), ["p.k: must be a list of strings"])
    assert read("choice", {"k": "z"}, "k", "p", ("a", "b")) == (
        None,
        ['p.k: must be one of a, b (got "z")'],
    )
    assert read("headers", {"headers": {"A": "1"}}, "p") == ((("A", "1"),), [])
