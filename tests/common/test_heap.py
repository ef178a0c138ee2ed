from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.heap import startup_heap_freeze


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def frozen() -> Iterator[int]:
    count = startup_heap_freeze()
    yield count
    gc.unfreeze()


def test_the_startup_heap_is_frozen_and_later_cycles_are_still_collected(frozen: int) -> None:
    assert frozen > 10_000  # the interpreter, pytest and Django alone are more than this
    first, second = Node(), Node()
    first.other, second.other = second, first  # a cycle made after start-up
    gone = weakref.ref(first)
    del first, second
    gc.collect()
    assert gone() is None


def test_garbage_left_by_startup_is_collected_before_the_freeze() -> None:
    """A cycle start-up dropped is freed, not kept for the life of the process."""
    script = (
        "import gc, weakref\n"
        "from common.heap import startup_heap_freeze\n"
        "class Node: pass\n"
        "a, b = Node(), Node(); a.b, b.a = b, a\n"
        "gone = weakref.ref(a); del a, b\n"
        "gc.disable()\n"  # nothing but the freeze's own collection may free the cycle
        "startup_heap_freeze()\n"
        "print(gone() is None)\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert answer == "True"
