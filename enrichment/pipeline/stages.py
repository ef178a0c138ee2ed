"""The enrichment stage seam: a run is an ordered list of stages, each rewriting the body.

A stage takes the message as the previous stage left it and returns the new body plus its
decision record (a value, never only a log line). ``run_stages`` threads the body through the
stages in order and collects every record under the stage's name, so the order of the
reference — media first (a voice note may carry a URL), then links — is data, not code:

    >>> import asyncio
    >>> class Shout:
    ...     name = "shout"  # a plain attribute satisfies the protocol's read-only ``name``
    ...     async def run(self, context, emit):
    ...         return StageResult(context.body.upper(), {"changed": True})
    >>> result = asyncio.run(run_stages([Shout()], MessageContext(body="hi")))
    >>> result.body, result.records
    ('HI', {'shout': {'changed': True}})

The outside world (processes, DNS, HTTP, the media root) is bound into each stage by the
Django shell (``enrichment/stages.py``); this module only knows the protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from enrichment.pipeline.templates import MessageContext

# A progress event for the client: ``{"url"?, "text", ...}``; the runner adds ``stage``.
Emit = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class StageResult:
    body: str  # the whole body after this stage (unchanged when it appended nothing)
    record: Any  # the stage's decision value, stored and shown through the stage registry


class Stage(Protocol):
    """One enrichment step. ``name`` keys its record, its progress frames and its template."""

    @property
    def name(self) -> str: ...

    async def run(self, context: MessageContext, emit: Emit) -> StageResult: ...


@dataclass(frozen=True)
class StagesResult:
    body: str
    records: Mapping[str, Any]


async def _no_progress(event: dict[str, Any]) -> None:
    return None


async def run_stages(
    stages: Sequence[Stage],
    context: MessageContext,
    on_progress: Emit | None = None,
) -> StagesResult:
    """Run ``stages`` in order; each sees the body the previous one produced.

    The text scanned for links stays the message as typed (``raw_body`` when the caller set
    it), so a later stage reads what earlier stages appended only through ``body``.
    """
    sink = on_progress or _no_progress
    records: dict[str, Any] = {}
    for stage in stages:
        if stage.name in records:
            raise ValueError(f"two stages are named {stage.name!r}")

        async def emit(event: dict[str, Any], _name: str = stage.name) -> None:
            await sink({"stage": _name, **event})

        result = await stage.run(context, emit)
        records[stage.name] = result.record
        context = dataclasses.replace(context, body=result.body)
    return StagesResult(context.body, records)
