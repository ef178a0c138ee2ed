"""The plan that drops a month's detached tables on several connections at once."""

from __future__ import annotations

import doctest

import pytest

from enrichment.pipeline.retention import drop_plan as module
from enrichment.pipeline.retention.drop_plan import DetachedTable, DropStep, drop_plan


def test_the_worked_example_holds() -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_nothing_to_drop_is_no_step() -> None:
    assert drop_plan([]) == []


def test_each_table_is_dropped_once_after_its_index_groups() -> None:
    runs = DetachedTable("runs", 400, tuple((f"i{n}", 90 + n) for n in range(12)))
    plan = drop_plan([DetachedTable("attempts", 150, (("a", 20),)), runs])
    tables = [step for step in plan if not step.indexes]
    assert tables == [DropStep("runs"), DropStep("attempts")]
    runs_steps = [step for step in plan if step.table == "runs"]
    assert runs_steps[-1] == DropStep("runs")  # the table after every group of its indexes
    dropped = [name for step in runs_steps for name in step.indexes]
    assert sorted(dropped) == sorted(name for name, _size in runs.indexes)  # each once


@pytest.mark.parametrize(
    ("tables", "groups"),
    [
        # 900 of indexes beside a 400 table: three groups, none much above 400
        (
            [DetachedTable("runs", 400, (("a", 300), ("b", 250), ("c", 200), ("d", 150)))],
            [("c", "d"), ("a",), ("b",)],
        ),
        # a table small with its indexes beside a larger one: dropped whole
        ([DetachedTable("big", 400), DetachedTable("small", 100, (("a", 200),))], []),
        # the table itself is the largest part: its indexes in one group of their own
        ([DetachedTable("runs", 400, (("a", 100), ("b", 250)))], [("b", "a")]),
        # more weight than indexes: one index per group, no empty group
        ([DetachedTable("runs", 10, (("a", 500), ("b", 500)))], [("a",), ("b",)]),
        # an empty table (a month never written) is one step
        ([DetachedTable("runs", 0, (("a", 0), ("b", 0)))], []),
    ],
    ids=["split", "whole-beside-larger", "one-group", "index-per-group", "empty"],
)
def test_index_groups_are_about_the_size_of_the_largest_table(
    tables: list[DetachedTable], groups: list[tuple[str, ...]]
) -> None:
    assert [step.indexes for step in drop_plan(tables) if step.indexes] == groups


def test_a_small_table_is_dropped_whole_however_its_indexes_compare() -> None:
    empty = DetachedTable("empty", 8, (("a", 8), ("b", 8), ("c", 8)))
    assert drop_plan([empty]) != [DropStep("empty")]  # split without a floor
    assert drop_plan([empty], split_from=64) == [DropStep("empty")]
    runs = DetachedTable("runs", 400, (("a", 300), ("b", 250)))
    assert len(drop_plan([runs, empty], split_from=64)) == 3 + 1  # runs split, empty whole


def test_the_largest_table_starts_first() -> None:
    plan = drop_plan(
        [DetachedTable("small", 10), DetachedTable("large", 300), DetachedTable("mid", 50)]
    )
    assert [step.table for step in plan] == ["large", "mid", "small"]
