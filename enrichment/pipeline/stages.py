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
Django shell (``enrichment/stage_specs/``); this module only knows the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from enrichment.pipeline.templates import MessageContext

# A progress event for the client: ``{"url"?, "text", ...}``; the runner adds ``stage``.
Emit = Callable[[dict[str, Any]], Awaitable[None]]
# Sets one attribute on the span being timed (``name``, value).
SpanAttribute = Callable[[str, "str | int | float | bool"], None]


class SpanOpener(Protocol):
    """Times a piece of a run as a tracing span: ``with span("links.url", {"url": u}) as
    set_attribute:``. The shell passes OpenTelemetry's (``common/tracing.py``); the core only
    marks where a stage, a URL or an attempt starts and ends, and what it decided."""

    def __call__(
        self, name: str, attributes: Mapping[str, str | int | float | bool]
    ) -> contextlib.AbstractContextManager[SpanAttribute]: ...


def _ignore_attribute(name: str, value: str | int | float | bool) -> None:
    return None


@contextlib.contextmanager
def no_span(
    name: str, attributes: Mapping[str, str | int | float | bool]
) -> Iterator[SpanAttribute]:
    """The default ``SpanOpener``: times nothing."""
    yield _ignore_attribute


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
    span: SpanOpener = no_span,
) -> StagesResult:
    """Run ``stages`` in order; each sees the body the previous one produced (each inside a
    ``stage <name>`` span of ``span``).

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

        with span(f"stage {stage.name}", {"stage": stage.name}) as set_attribute:
            result = await stage.run(context, emit)
            set_attribute("body.changed", result.body != context.body)
        records[stage.name] = result.record
        context = dataclasses.replace(context, body=result.body)
    return StagesResult(context.body, records)


# --- progress for long work only -----------------------------------------------------


class HeldProgress:
    """An ``Emit`` for ``run_stages`` that forwards to ``sink`` once ``after`` seconds passed.

    Progress for long work only: a run's progress events are held back for its first moments.
    A link fetched and extracted in-process answers in tens of milliseconds; a "Running
    link-understand for …" frame that arrives just before the result tells the person nothing
    (the list flickers) and costs a frame through the channel layer, the server and the socket.
    ``HeldProgress`` passes a run's events on only once the run has lasted ``after`` seconds:
    then the ones held so far go out in order, and later ones go straight through. A run that
    ends sooner sends none (``close``). The dashboard's config preview shows its progress line the
    same way, only once the work has taken a second.

        >>> import asyncio
        >>> async def demo(work_seconds):
        ...     sent = []
        ...     async def sink(event):
        ...         sent.append(event["text"])
        ...     progress = HeldProgress(sink, after=0.05)
        ...     await progress({"text": "running"})
        ...     await asyncio.sleep(work_seconds)
        ...     await progress.close()
        ...     return sent
        >>> asyncio.run(demo(0.0))
        []
        >>> asyncio.run(demo(0.1))
        ['running']

    The clock starts at construction (the start of the run). ``close`` must be awaited when
    the run ends, before its result is sent: it drops what is still held and waits for a
    release in flight, so no progress frame can follow the result.
    """

    def __init__(self, sink: Emit, *, after: float) -> None:
        self._sink = sink
        self._held: list[dict[str, Any]] = []
        self._open = after <= 0
        self._release: asyncio.Task[None] | None = None
        if not self._open:
            self._release = asyncio.get_running_loop().create_task(self._release_after(after))

    async def __call__(self, event: dict[str, Any]) -> None:
        if self._open:
            await self._sink(event)
        else:
            self._held.append(event)

    async def _release_after(self, after: float) -> None:
        await asyncio.sleep(after)
        # Events held meanwhile, and any that arrive while these are sent, go out in order.
        while self._held:
            event = self._held.pop(0)
            # Best effort, as the stages treat progress: a client gone must not fail the run.
            with contextlib.suppress(Exception):
                await self._sink(event)
        self._open = True

    async def close(self) -> None:
        self._held.clear()
        release, self._release = self._release, None
        self._open = False  # nothing more goes out once the run has ended
        if release is not None and not release.done():
            release.cancel()
            # ``wait`` (not ``await release``): a cancellation of the caller itself still
            # propagates instead of being taken for the release's.
            await asyncio.wait({release})
