"""The links stage in the shell: built from the effective links block, stored as rows."""

from __future__ import annotations

from typing import Any

from common.storable import storable_json, storable_text
from common.tracing import open_span
from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.config.model import effective_links_config
from enrichment.pipeline.links import decisions
from enrichment.pipeline.links.causes import attempt_cause, url_verdict
from enrichment.pipeline.links.stage import LinkResult, LinksStage
from enrichment.pipeline.net.urls import display_host
from enrichment.stage_specs.spec import RecordWrites, StageEnv, StageSpec

# Outcomes that only the service knows (the core's LinkDecision never has them).
SERVICE_OUTCOMES = {"running", "error", "interrupted", "dead-letter"}


def build(env: StageEnv) -> LinksStage:
    return LinksStage(
        config=effective_links_config(env.config, env.agent_id),
        policy=env.config.web_fetch.ssrf_policy,
        runner=env.link_runner,
        resolve=env.resolve,
        span=open_span,
    )


def store(run: Run, result: LinkResult) -> RecordWrites:
    """The run's outcome and scope rule, and one row per URL and per attempt (text made
    storable: PostgreSQL refuses NUL and lone surrogates that a page or a CLI may produce)."""
    decision = result.decision
    summaries = {output.url: output.summary for output in result.outputs}
    run.outcome = decision.outcome
    run.matched_rule = decision.matched_rule
    run.url_count = len(decision.urls)
    url_rows = []
    attempt_rows = []
    for position, url in enumerate(decision.urls):
        chosen = next((i for i, attempt in enumerate(url.attempts) if attempt is url.chosen), None)
        row = UrlDecision(
            run=run,
            run_created_at=run.created_at,
            run_duration_ms=run.duration_ms,
            position=position,
            url=storable_text(url.url),
            blocked=url.blocked,
            reason=storable_text(url.reason or ""),
            addresses=list(url.addresses),
            chosen_position=chosen,
            summary=storable_text(summaries.get(url.url, "")),
        )
        url_rows.append(row)
        attempt_rows += [
            Attempt(
                url_decision=row,
                run_created_at=run.created_at,
                position=index,
                type=attempt.type,
                command=storable_text(attempt.command),
                argv=storable_json(list(attempt.argv)),
                outcome=attempt.outcome,
                reason=storable_text(attempt.reason or ""),
                exit_code=attempt.exit_code,
                duration_ms=attempt.duration_ms,
                stdout_bytes=attempt.stdout_bytes,
                stderr_tail=storable_text(attempt.stderr_tail),
            )
            for index, attempt in enumerate(url.attempts)
        ]
    return RecordWrites(("outcome", "matched_rule", "url_count"), (*url_rows, *attempt_rows))


def link_decision(run: Run) -> decisions.LinkDecision:
    """The stored decision of a run fetched with ``selectors.decision_get`` (no extra queries)."""
    urls = []
    for row in run.url_decisions.all():
        attempts = tuple(
            decisions.Attempt(
                type=item.type,
                command=item.command,
                argv=tuple(item.argv),
                outcome=item.outcome,  # type: ignore[arg-type]  # stored from the Literal
                reason=item.reason or None,
                exit_code=item.exit_code,
                duration_ms=item.duration_ms or 0,
                stdout_bytes=item.stdout_bytes or 0,
                stderr_tail=item.stderr_tail,
            )
            for item in row.attempts.all()
        )
        chosen = attempts[row.chosen_position] if row.chosen_position is not None else None
        urls.append(
            decisions.UrlDecision(
                row.url, row.blocked, row.reason or None, tuple(row.addresses), attempts, chosen
            )
        )
    outcome = "skipped" if run.outcome in SERVICE_OUTCOMES else run.outcome
    return decisions.LinkDecision(outcome, run.matched_rule, tuple(urls))  # type: ignore[arg-type]


def load(run: Run) -> dict[str, Any]:
    links = link_decision(run).to_dict()
    # "running"/"error"/"interrupted"/"dead-letter" are shown as they are
    links["outcome"] = run.outcome
    return links


def view(run: Run) -> dict[str, Any]:
    urls = []
    for row in run.url_decisions.all():
        attempts = list(row.attempts.all())
        for attempt in attempts:
            attempt.cause = attempt_cause(  # type: ignore[attr-defined]
                attempt.outcome, attempt.reason, attempt.exit_code, attempt.stderr_tail
            )
        urls.append(
            {
                "row": row,
                "host": display_host(row.url),
                "verdict": url_verdict(row.blocked, row.reason),
                "attempts": attempts,
            }
        )
    return {"urls": urls}


SPEC = StageSpec(
    name="links",
    title="Links",
    build=build,
    to_json=lambda result: result.decision.to_dict(),
    store=store,
    load=load,
    template="enrichment/stages/links.html",
    view=view,
)
