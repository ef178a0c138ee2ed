"""Link understanding for one inbound message: detect, guard, run CLIs, build the envelope.

The gates come first, in this order, and each ends the run with its own outcome:
disabled -> ``disabled``; scope deny -> ``scope-deny``; nothing detected -> ``no-links``;
no CLI entries -> ``skipped`` (the detected URLs are still listed). Otherwise every URL is
resolved and checked (SSRF) and, when allowed, handed to the CLI entries in order until one
prints something (fallback). URLs are processed concurrently, at most ``concurrency`` at a
time, and the envelope keeps detection order. The run is ``success`` when at least one URL
produced a summary, else ``skipped``.

``explain_links`` answers "what would happen?" with the same verdicts but runs no CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from enrichment.pipeline.config.model import DEFAULT_TIMEOUT_SECONDS, LinkModel, LinksConfig
from enrichment.pipeline.config.scope import ScopeDecision, evaluate_scope
from enrichment.pipeline.links.decisions import (
    Attempt,
    LinkDecision,
    RunOutcome,
    UrlDecision,
    ssrf_attempt,
)
from enrichment.pipeline.links.detection import extract_links
from enrichment.pipeline.links.envelope import LinkOutput, format_link_body
from enrichment.pipeline.net.ssrf import (
    Resolver,
    SsrfPolicy,
    Verdict,
    blocked_message,
    check_url,
    check_url_async,
    system_resolve,
)
from enrichment.pipeline.runner import CommandResult, CommandRunner, run_command
from enrichment.pipeline.stages import Emit, SpanOpener, StageResult, no_span
from enrichment.pipeline.templates import MessageContext, render_template

PENDING_NOTICE = "Fetching page content..."


@dataclass(frozen=True)
class ProgressEvent:
    """UI state for one URL; never carries page content."""

    url: str
    text: str


ProgressSink = Callable[[ProgressEvent], Awaitable[None]]


@dataclass(frozen=True)
class LinkResult:
    body: str  # the message body with the envelope appended (unchanged without outputs)
    decision: LinkDecision
    outputs: tuple[LinkOutput, ...] = ()


def entry_timeout(entry: LinkModel, config: LinksConfig) -> float:
    """Entry timeout, else the block's, else 30 s; as the reference converts it to whole
    milliseconds, at least one second: ``1.9`` -> 1.9 s, ``1.0004`` -> 1.0 s."""
    for candidate in (entry.timeout_seconds, config.timeout_seconds):
        if candidate is not None and math.isfinite(candidate):
            return max(1000, math.floor(candidate * 1000)) / 1000
    return float(DEFAULT_TIMEOUT_SECONDS)


def entry_argv(entry: LinkModel, context: MessageContext, url: str) -> tuple[str, ...]:
    """``[command, *args]`` with the args templated; the command itself is never templated."""
    variables = context.template_variables(link_url=url)
    return (entry.command, *(render_template(arg, variables) for arg in entry.args))


async def run_link_understanding(
    config: LinksConfig,
    context: MessageContext,
    *,
    policy: SsrfPolicy,
    runner: CommandRunner = run_command,
    resolve: Resolver = system_resolve,
    on_progress: ProgressSink | None = None,
    pending_notice_seconds: float = 5.0,
    span: SpanOpener = no_span,
) -> LinkResult:
    """Run link understanding for ``context`` and return the new body and the decision."""
    if not config.is_enabled:
        return LinkResult(context.body, LinkDecision("disabled", None))
    scope = _scope_decision(config, context)
    if scope.decision == "deny":
        return LinkResult(context.body, LinkDecision("scope-deny", scope.matched_rule))
    links = extract_links(context.link_text, max_links=config.max_links, policy=policy)
    if not links:
        return LinkResult(context.body, LinkDecision("no-links", scope.matched_rule))
    if not config.models:
        listed = tuple(UrlDecision(url, False, None, (), (), None) for url in links)
        return LinkResult(context.body, LinkDecision("skipped", scope.matched_rule, listed))

    worker = _UrlWorker(
        config, context, policy, runner, resolve, on_progress, pending_notice_seconds, span
    )
    limit = asyncio.Semaphore(max(1, config.effective_concurrency))

    async def process(url: str) -> tuple[UrlDecision, LinkOutput | None]:
        async with limit:
            return await worker.process(url)

    results = await asyncio.gather(*(process(url) for url in links))
    outputs = tuple(output for _decision, output in results if output is not None)
    outcome: RunOutcome = "success" if outputs else "skipped"
    decision = LinkDecision(outcome, scope.matched_rule, tuple(d for d, _output in results))
    return LinkResult(format_link_body(context.body, outputs), decision, outputs)


@dataclass(frozen=True)
class LinksStage:
    """Link understanding as a stage of the run (``pipeline.stages``); its record is the
    ``LinkResult`` (the decision plus each URL's summary)."""

    config: LinksConfig
    policy: SsrfPolicy
    runner: CommandRunner = run_command
    resolve: Resolver = system_resolve
    span: SpanOpener = no_span

    @property
    def name(self) -> str:
        return "links"

    async def run(self, context: MessageContext, emit: Emit) -> StageResult:
        async def progress(event: ProgressEvent) -> None:
            await emit({"url": event.url, "text": event.text})

        result = await run_link_understanding(
            self.config,
            context,
            policy=self.policy,
            runner=self.runner,
            resolve=self.resolve,
            on_progress=progress,
            span=self.span,
        )
        return StageResult(result.body, result)


def _scope_decision(config: LinksConfig, context: MessageContext) -> ScopeDecision:
    return evaluate_scope(
        config.scope, context.scope_channel, context.chat_type, context.session_key
    )


@dataclass(frozen=True)
class _UrlWorker:
    config: LinksConfig
    context: MessageContext
    policy: SsrfPolicy
    runner: CommandRunner
    resolve: Resolver
    on_progress: ProgressSink | None
    pending_notice_seconds: float
    span: SpanOpener = no_span

    async def process(self, url: str) -> tuple[UrlDecision, LinkOutput | None]:
        with self.span("links.url", {"url.full": url}) as set_attribute:
            decision, output = await self._process(url)
            set_attribute("blocked", decision.blocked)
            set_attribute("attempts", len(decision.attempts))
            set_attribute("outcome", "success" if output is not None else "failed")
            return decision, output

    async def _process(self, url: str) -> tuple[UrlDecision, LinkOutput | None]:
        started = time.monotonic()
        # DNS is blocking: it runs off the event loop so other URLs proceed meanwhile.
        verdict = await check_url_async(url, self.policy, self.resolve)
        if verdict.blocked:
            reason = verdict.reason or "blocked"
            elapsed_ms = int((time.monotonic() - started) * 1000)
            attempt = ssrf_attempt(blocked_message(reason), elapsed_ms)
            return UrlDecision(url, True, reason, verdict.addresses, (attempt,), None), None
        notice = asyncio.ensure_future(self._pending_notice(url))
        try:
            attempts, output = await self._try_entries(url)
        finally:
            notice.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await notice
        chosen = next((attempt for attempt in attempts if attempt.outcome == "success"), None)
        decision = UrlDecision(url, False, None, verdict.addresses, tuple(attempts), chosen)
        return decision, output

    async def _try_entries(self, url: str) -> tuple[list[Attempt], LinkOutput | None]:
        attempts: list[Attempt] = []
        for entry in self.config.models:
            argv = entry_argv(entry, self.context, url)
            await self._emit(ProgressEvent(url, f"Running {entry.command} for {url}"))
            with self.span(
                "links.attempt", {"command": entry.command, "attempt": len(attempts)}
            ) as set_attribute:
                result = await self._run(argv, entry_timeout(entry, self.config))
                attempt = _attempt(entry, argv, result)
                set_attribute("type", attempt.type)
                set_attribute("outcome", attempt.outcome)
                if attempt.reason:
                    set_attribute("reason", attempt.reason[:200])
            attempts.append(attempt)
            if result.outcome == "success":
                return attempts, LinkOutput(url, entry.command, result.stdout_text)
        return attempts, None

    async def _run(self, argv: tuple[str, ...], timeout_seconds: float) -> CommandResult:
        try:
            return await self.runner(argv, timeout_seconds=timeout_seconds)
        except Exception as error:  # a broken runner must not sink the other URLs
            return CommandResult("failed", f"runner error: {error}", None, 0, "", 0, "")

    async def _pending_notice(self, url: str) -> None:
        await asyncio.sleep(self.pending_notice_seconds)
        await self._emit(ProgressEvent(url, PENDING_NOTICE))

    async def _emit(self, event: ProgressEvent) -> None:
        if self.on_progress is None:
            return
        # Progress is UI state only: a client that went away must not fail the run.
        with contextlib.suppress(Exception):
            await self.on_progress(event)


def _attempt(entry: LinkModel, argv: tuple[str, ...], result: CommandResult) -> Attempt:
    return Attempt(
        type=result.attempt_type or entry.type,
        command=entry.command,
        argv=argv,
        outcome=result.outcome,
        reason=result.reason,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        stdout_bytes=result.stdout_bytes,
        stderr_tail=result.stderr_tail,
    )


# --- explain ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedCommand:
    command: str
    argv: tuple[str, ...]
    timeout_seconds: float

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.command,
            "argv": list(self.argv),
            "timeoutSeconds": self.timeout_seconds,
        }


@dataclass(frozen=True)
class PlannedUrl:
    url: str
    verdict: Verdict
    commands: tuple[PlannedCommand, ...]  # empty when the URL is blocked

    def to_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "blocked": self.verdict.blocked,
            "reason": self.verdict.reason,
            "host": self.verdict.host,
            "addresses": list(self.verdict.addresses),
            "commands": [command.to_dict() for command in self.commands],
        }


@dataclass(frozen=True)
class LinkPlan:
    """What a run would decide, without running anything.

    ``outcome`` is the run-level outcome when a gate decides it (``disabled``, ``scope-deny``,
    ``no-links``, ``skipped``), or ``"run"`` when CLIs would be started. Links and verdicts
    are filled in even when a gate stops the run, so the explain page can show them.
    """

    outcome: str
    enabled: bool
    scope: ScopeDecision
    urls: tuple[PlannedUrl, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "enabled": self.enabled,
            "scope": self.scope.to_dict(),
            "matchedRule": self.scope.matched_rule,
            "urls": [url.to_dict() for url in self.urls],
        }


def explain_links(
    config: LinksConfig,
    context: MessageContext,
    *,
    policy: SsrfPolicy,
    resolve: Resolver | None = None,
) -> LinkPlan:
    """The verdicts a run would reach and the argv each CLI entry would get; runs no CLI."""
    scope = _scope_decision(config, context)
    links = extract_links(context.link_text, max_links=config.max_links, policy=policy)
    planned: list[PlannedUrl] = []
    for url in links:
        verdict = check_url(url, policy, resolve)
        commands = () if verdict.blocked else _planned_commands(config, context, url)
        planned.append(PlannedUrl(url, verdict, commands))
    return LinkPlan(
        _planned_outcome(config, scope, links, planned), config.is_enabled, scope, tuple(planned)
    )


def _planned_commands(
    config: LinksConfig, context: MessageContext, url: str
) -> tuple[PlannedCommand, ...]:
    return tuple(
        PlannedCommand(entry.command, entry_argv(entry, context, url), entry_timeout(entry, config))
        for entry in config.models
    )


def _planned_outcome(
    config: LinksConfig, scope: ScopeDecision, links: list[str], planned: list[PlannedUrl]
) -> str:
    if not config.is_enabled:
        return "disabled"
    if scope.decision == "deny":
        return "scope-deny"
    if not links:
        return "no-links"
    if not config.models or all(url.verdict.blocked for url in planned):
        return "skipped"
    return "run"
