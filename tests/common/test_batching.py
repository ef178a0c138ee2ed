"""``Gathered``: concurrent writes share one batch; each caller gets its own outcome."""

from __future__ import annotations

import asyncio
import threading

import pytest

from common.batching import Gathered


class Recorder:
    """A ``write_many`` that records its batches; ``hold`` blocks the first batch until
    released, the way a slow database write keeps the next items waiting."""

    def __init__(self, *, hold: bool = False) -> None:
        self.batches: list[list[object]] = []
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.started = threading.Event()

    def __call__(self, items):
        self.batches.append(list(items))
        self.started.set()
        self.release.wait(5)
        return [
            ValueError(f"refused {item}") if str(item).startswith("bad") else f"stored {item}"
            for item in items
        ]


async def _until(event: threading.Event) -> None:
    await asyncio.to_thread(event.wait, 5)


async def test_a_quiet_process_writes_each_item_at_once() -> None:
    recorder = Recorder()
    gathered = Gathered(recorder, most=8)

    assert [await gathered(n) for n in range(3)] == ["stored 0", "stored 1", "stored 2"]
    assert recorder.batches == [[0], [1], [2]]


async def test_items_arriving_during_a_write_go_together_in_the_next_batch() -> None:
    recorder = Recorder(hold=True)
    gathered = Gathered(recorder, most=4)
    first = asyncio.ensure_future(gathered("first"))
    await _until(recorder.started)  # the first batch is being written
    later = [asyncio.ensure_future(gathered(n)) for n in range(6)]
    await asyncio.sleep(0)
    recorder.release.set()

    assert await first == "stored first"
    assert await asyncio.gather(*later) == [f"stored {n}" for n in range(6)]
    assert recorder.batches == [["first"], [0, 1, 2, 3], [4, 5]]  # at most 4 per batch


async def test_each_caller_gets_its_own_outcome_and_only_its_own_failure() -> None:
    recorder = Recorder(hold=True)
    gathered = Gathered(recorder, most=8)
    first = asyncio.ensure_future(gathered("first"))
    await _until(recorder.started)
    good, bad = asyncio.ensure_future(gathered("good")), asyncio.ensure_future(gathered("bad"))
    await asyncio.sleep(0)
    recorder.release.set()

    await first
    assert await good == "stored good"
    with pytest.raises(ValueError, match="refused bad"):
        await bad
    assert recorder.batches[1] == ["good", "bad"]


async def test_a_batch_that_fails_as_a_whole_fails_every_caller_and_the_next_batch_runs() -> None:
    calls = []

    def broken_then_fine(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise RuntimeError("database went away")
        return [f"stored {item}" for item in items]

    gathered = Gathered(broken_then_fine, most=8)
    with pytest.raises(RuntimeError, match="database went away"):
        await gathered("lost")
    assert await gathered("next") == "stored next"


async def test_a_write_many_that_answers_the_wrong_count_fails_its_callers() -> None:
    gathered = Gathered(lambda items: [], most=8)
    with pytest.raises(RuntimeError, match="0 outcomes for 1 items"):
        await gathered("x")


async def test_a_cancelled_caller_still_has_its_item_written() -> None:
    recorder = Recorder(hold=True)
    gathered = Gathered(recorder, most=8)
    first = asyncio.ensure_future(gathered("first"))
    await _until(recorder.started)
    waiting = asyncio.ensure_future(gathered("cancelled"))
    await asyncio.sleep(0)
    waiting.cancel()
    recorder.release.set()
    await first
    await gathered("after")

    assert ["cancelled"] in recorder.batches and recorder.batches[-1] == ["after"]


async def test_once_batches_are_shared_the_next_waits_out_the_spacing() -> None:
    written: list[tuple[float, list[str]]] = []
    release = threading.Event()

    def write(items):
        written.append((loop.time(), list(items)))
        if len(written) == 1:
            release.wait(5)  # a slow first write: the next two items share a batch
        return list(items)

    loop = asyncio.get_running_loop()
    gathered = Gathered(write, most=64, spacing=1.0)
    first = asyncio.ensure_future(gathered("a"))
    await asyncio.sleep(0.01)
    shared = asyncio.gather(gathered("b"), gathered("c"))
    await asyncio.sleep(0.01)
    release.set()
    await first
    assert await shared == ["b", "c"]
    # The batch after a shared one waits until 1 s after that one began (each write is
    # timed after its own thread hop, so a loaded machine may shift either by a little)...
    assert await gathered("d") == "d"
    # ...and a batch of one turns the wait off: the next item is written at once.
    before = loop.time()
    assert await gathered("e") == "e"

    assert [items for _, items in written] == [["a"], ["b", "c"], ["d"], ["e"]]
    assert written[2][0] - written[1][0] >= 0.8
    assert written[3][0] - before < 0.5


async def test_one_client_writing_item_after_item_never_waits() -> None:
    loop = asyncio.get_running_loop()
    gathered = Gathered(lambda items: list(items), most=64, spacing=5.0)
    started = loop.time()
    assert [await gathered(n) for n in range(5)] == list(range(5))
    assert loop.time() - started < 5.0


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="most must be at least 1"):
        Gathered(list, most=0)
    with pytest.raises(ValueError, match="spacing not negative"):
        Gathered(list, most=1, spacing=-1)


async def test_a_cancelled_caller_can_take_back_an_item_not_yet_being_written() -> None:
    recorder = Recorder(hold=True)
    gathered = Gathered(recorder, most=8, drop_cancelled=True)
    first = asyncio.ensure_future(gathered("first"))
    await _until(recorder.started)
    waiting = asyncio.ensure_future(gathered("dropped"))
    kept = asyncio.ensure_future(gathered("kept"))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.sleep(0)
    recorder.release.set()

    assert await first == "stored first" and await kept == "stored kept"
    assert recorder.batches == [["first"], ["kept"]]
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_batches_outlive_the_request_that_started_the_writer() -> None:
    """A sync view (``POST /api/enrich``) runs the enrichment with ``async_to_sync``: the
    sync work it awaits goes back to that request's thread. The writer started by one request
    goes on writing the batches of the requests after it, so it must not use that request's
    thread ("CurrentThreadExecutor already quit": a 500 for another user's enrich)."""
    from asgiref.sync import async_to_sync, sync_to_async

    recorder = Recorder(hold=True)
    gathered = Gathered(recorder, most=2)

    def sync_view(item: object) -> object:
        return async_to_sync(gathered)(item)

    async def request(item: object) -> object:
        return await sync_to_async(sync_view, thread_sensitive=False)(item)

    first = asyncio.ensure_future(request("first"))
    await _until(recorder.started)  # the writer (started in the first request) is writing
    later = [asyncio.ensure_future(request(n)) for n in range(5)]
    await asyncio.sleep(0.2)  # the later requests' items are queued
    recorder.release.set()
    assert await first == "stored first"  # the first request is over, its thread gone

    assert await asyncio.gather(*later) == [f"stored {n}" for n in range(5)]
    assert recorder.batches == [["first"], [0, 1], [2, 3], [4]]
