"""The stage seam of the pure core: stages run in order, each sees the body the last left."""

from __future__ import annotations

import doctest
from dataclasses import dataclass
from typing import Any

import pytest

from enrichment.pipeline import stages
from enrichment.pipeline.stages import StageResult, run_stages
from enrichment.pipeline.templates import MessageContext


@dataclass(frozen=True)
class Append:
    name: str
    text: str

    async def run(self, context: MessageContext, emit: Any) -> StageResult:
        await emit({"text": f"{self.name} saw {context.body!r}"})
        return StageResult(context.body + self.text, {"saw": context.body})


async def test_each_stage_reads_the_body_the_previous_stage_produced() -> None:
    result = await run_stages([Append("a", " +A"), Append("b", " +B")], MessageContext(body="hi"))
    assert result.body == "hi +A +B"
    assert result.records == {"a": {"saw": "hi"}, "b": {"saw": "hi +A"}}


async def test_progress_events_are_tagged_with_the_stage_that_sent_them() -> None:
    events: list[dict[str, Any]] = []

    async def sink(event: dict[str, Any]) -> None:
        events.append(event)

    await run_stages([Append("media", ""), Append("links", "")], MessageContext(body="x"), sink)
    assert events == [
        {"stage": "media", "text": "media saw 'x'"},
        {"stage": "links", "text": "links saw 'x'"},
    ]


async def test_no_stages_leave_the_body_as_it_is() -> None:
    result = await run_stages([], MessageContext(body="unchanged"))
    assert (result.body, dict(result.records)) == ("unchanged", {})


async def test_two_stages_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two stages are named 'a'"):
        await run_stages([Append("a", ""), Append("a", "")], MessageContext(body=""))


def test_the_worked_example_in_the_module_docstring_holds() -> None:
    assert doctest.testmod(stages).failed == 0
