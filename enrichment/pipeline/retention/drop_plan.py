"""How a dropped month's tables are removed: which transactions, in what order (pure).

PostgreSQL removes a relation's files when the transaction that dropped it commits, one
after another, each freeing its space on the disk; on a file system that discards the freed
blocks at once (``-o discard``, a virtual disk) that is most of a month's drop: a month of a
million runs is ~1.75 GB in ~30 relations. Transactions on separate connections remove their
files at the same time, so the month's tables (detached from the log first: no insert can
reach them) are dropped by several transactions at once:

- A table's heap, TOAST table and the indexes its constraints own go only with the table
  (``DROP TABLE``): the largest such size is how long the whole drop must take at least.
- A table larger than that with its other indexes has those indexes dropped apart
  (``DROP INDEX``), before it, in groups of about that size (largest index into the lightest
  group); the table's own drop then has only its own files left.
- A table under ``split_from`` with its indexes is dropped whole whatever the others are
  (the files of an empty month go in milliseconds: a chain of transactions costs more).
- The steps are started largest table first, each table's index groups before the table.

Worked example: the runs' table owns 400 (heap and primary key) and has 1,000 of other
indexes, the URL decisions' 150 with 50 of indexes, the attempts' 150 with 20::

    >>> plan = drop_plan([
    ...     DetachedTable("attempts", 150, (("url_decision", 20),)),
    ...     DetachedTable("decisions", 150, (("url", 50),)),
    ...     DetachedTable("runs", 400, (("a", 300), ("b", 250), ("c", 200), ("d", 150),
    ...                                 ("e", 100))),
    ... ])
    >>> [(step.table, step.indexes) for step in plan]  # doctest: +NORMALIZE_WHITESPACE
    [('runs', ('b', 'e')), ('runs', ('c', 'd')), ('runs', ('a',)), ('runs', ()),
     ('decisions', ()), ('attempts', ())]

The runs' indexes in three groups of 350, 350 and 300, then the runs' own 400; the two
smaller tables whole (200 and 170 with their indexes: less than 400). A month of a million
runs is about this (in MB: the runs' 393 with 992 of indexes in 17).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class DetachedTable:
    """A table to drop, as the plan sees it (sizes in any one unit, bytes in practice)."""

    name: str
    size: int  # what goes only with the table: heap, TOAST, the indexes constraints own
    indexes: tuple[tuple[str, int], ...] = ()  # (name, size) of the indexes droppable apart

    @property
    def total(self) -> int:
        return self.size + sum(size for _name, size in self.indexes)


@dataclass(frozen=True)
class DropStep:
    """One transaction: these indexes of the table, or (none named) the table itself."""

    table: str
    indexes: tuple[str, ...] = ()


def drop_plan(tables: Sequence[DetachedTable], *, split_from: int = 0) -> list[DropStep]:
    """The transactions that drop ``tables``, in the order to start them (see the module)."""
    if not tables:
        return []
    bound = max(table.size for table in tables)
    steps: list[DropStep] = []
    for table in sorted(tables, key=lambda t: (-t.total, t.name)):
        if table.total > max(bound, split_from) and table.indexes:
            steps.extend(DropStep(table.name, group) for group in _groups(table.indexes, bound))
        steps.append(DropStep(table.name))
    return steps


def _groups(indexes: Sequence[tuple[str, int]], bound: int) -> list[tuple[str, ...]]:
    """The indexes in groups of about ``bound`` each (at least one group), heaviest first."""
    count = min(len(indexes), max(1, math.ceil(sum(size for _n, size in indexes) / bound)))
    groups: list[tuple[int, list[str]]] = [(0, []) for _ in range(count)]
    for name, size in sorted(indexes, key=lambda index: (-index[1], index[0])):
        lightest = min(range(count), key=lambda at: groups[at][0])
        weight, names = groups[lightest]
        groups[lightest] = (weight + size, [*names, name])
    ordered = sorted(groups, key=lambda group: -group[0])
    return [tuple(names) for _weight, names in ordered if names]
