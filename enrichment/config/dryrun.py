"""Dry run glue: validate the proposed document and the window, load the window's recorded
runs (three queries per chunk), hand them to the pure evaluator (``pipeline.dryrun``).

Nothing here starts a process, fetches or resolves: the evaluator only sees recorded rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from common.errors import InvalidInput
from enrichment.models import Attempt, ConfigVersion, Run, UrlDecision
from enrichment.pipeline.config.model import Config, ConfigError
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.config.scope_source import scope_source
from enrichment.pipeline.dryrun.decisions import RecordedRun, RecordedUrl
from enrichment.pipeline.dryrun.evaluate import DryRunReport, dry_run, link_scan_text
from enrichment.pipeline.links.decisions import SSRF_COMMAND

MAX_WINDOW_RUNS = 10_000
DEFAULT_WINDOW_RUNS = 1_000
MAX_WINDOW_DAYS = 90
AFFECTED_LIMIT = 200
CHUNK = 1_000
# Runs whose link decision is complete; running/error/interrupted ones decided nothing.
DECIDED = ("success", "skipped", "disabled", "scope-deny", "no-links")


@dataclass(frozen=True)
class Window:
    last_runs: int = DEFAULT_WINDOW_RUNS
    days: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"lastRuns": self.last_runs, "days": self.days}


def parse_window(raw: object) -> Window:
    """``{"lastRuns": 1000}`` and/or ``{"days": 7}``; anything else is a 422 naming it."""
    if raw is None:
        return Window()
    if not isinstance(raw, Mapping):
        raise InvalidInput('window: must be an object like {"lastRuns": 1000, "days": 7}')
    unknown = sorted(set(raw) - {"lastRuns", "days"})
    if unknown:
        raise InvalidInput(f"window.{unknown[0]}: unknown key (use lastRuns and/or days)")
    last_runs = raw.get("lastRuns", DEFAULT_WINDOW_RUNS)
    if isinstance(last_runs, bool) or not isinstance(last_runs, int):
        raise InvalidInput(f"window.lastRuns: must be a whole number, got {last_runs!r}")
    if not 1 <= last_runs <= MAX_WINDOW_RUNS:
        raise InvalidInput(f"window.lastRuns: must be between 1 and {MAX_WINDOW_RUNS}")
    days = raw.get("days")
    if days is not None:
        if isinstance(days, bool) or not isinstance(days, int | float):
            raise InvalidInput(f"window.days: must be a number, got {days!r}")
        if not 0 < days <= MAX_WINDOW_DAYS:
            raise InvalidInput(f"window.days: must be more than 0 and at most {MAX_WINDOW_DAYS}")
    return Window(last_runs, days)


def proposed_config(document: object) -> Config:
    if not isinstance(document, Mapping):
        raise InvalidInput("config: must be a whole config document (an object)")
    try:
        return parse_config(document)
    except ConfigError as exc:
        raise InvalidInput("Invalid configuration.", [str(i) for i in exc.errors]) from None


def window_runs_query(window: Window) -> QuerySet[Run]:
    runs = Run.objects.filter(outcome__in=DECIDED)
    if window.days is not None:
        runs = runs.filter(created_at__gte=timezone.now() - timedelta(days=window.days))
    return runs.history_order()


def recorded_runs(runs: QuerySet[Run] | list[int]) -> list[RecordedRun]:
    """The given runs (a newest-first query, or ids kept in their order) as the evaluator
    sees them: three queries, the URL and attempt rows selected by a subquery."""
    if isinstance(runs, list):
        order: list[int] = runs
        ids: Any = runs
    else:
        order = list(runs.values_list("id", flat=True))
        ids = runs.values("id")
    rows = {
        row[0]: row
        for row in Run.objects.filter(id__in=ids).values_list(
            "id",
            "outcome",
            "matched_rule",
            "channel",
            "chat_type",
            "session_key",
            "agent_id",
            "message_id",
            "original_body",
            "enriched_body",
            "media",
            "config_version",
        )
    }
    urls: dict[int, list[tuple[Any, ...]]] = {}
    url_rows = UrlDecision.objects.filter(run_id__in=ids).order_by("run_id", "position")
    for row in url_rows.values_list(
        "id", "run_id", "url", "blocked", "reason", "addresses", "chosen_position", "summary"
    ):
        urls.setdefault(row[1], []).append(row)
    attempts: dict[int, list[tuple[str, list[str], str]]] = {}
    attempt_rows = Attempt.objects.filter(url_decision__run_id__in=ids).order_by(
        "url_decision_id", "position"
    )
    for url_id, command, argv, outcome in attempt_rows.values_list(
        "url_decision_id", "command", "argv", "outcome"
    ):
        attempts.setdefault(url_id, []).append((command, argv, outcome))
    configs = version_configs({row[-1] for row in rows.values()})
    return [
        _recorded(rows[pk][:-1], urls.get(pk, []), attempts, _source(rows[pk], configs))
        for pk in order
        if pk in rows
    ]


def version_configs(numbers: set[int | None]) -> dict[int, Config]:
    """The parsed config of each version number (one query; few distinct per window)."""
    configs: dict[int, Config] = {}
    wanted = [number for number in numbers if number is not None]
    for number, document in ConfigVersion.objects.filter(number__in=wanted).values_list(
        "number", "document"
    ):
        try:
            configs[number] = parse_config(json.loads(document))
        except (ConfigError, ValueError):
            continue
    return configs


def _source(row: tuple[Any, ...], configs: Mapping[int, Config]) -> str:
    """What decided a recorded run's scope, under the config version it ran with."""
    outcome, rule, agent, version = row[1], row[2], row[6], row[-1]
    config = configs.get(version) if version is not None else None
    if config is None or outcome not in ("success", "skipped", "scope-deny", "no-links"):
        return ""
    decision = "deny" if outcome == "scope-deny" else "allow"
    return scope_source(config, agent or None, decision, rule).text


def _recorded(
    row: tuple[Any, ...],
    url_rows: list[tuple[Any, ...]],
    attempts: dict[int, list[tuple[str, list[str], str]]],
    scope_text: str = "",
) -> RecordedRun:
    pk, outcome, rule, channel, chat_type, key, agent, message, original, enriched, media = row
    recorded_urls = []
    for url_id, _run, url, blocked, reason, addresses, chosen, summary in url_rows:
        tried = [item for item in attempts.get(url_id, []) if item[0] != SSRF_COMMAND or item[1]]
        source = tried[chosen][0] if chosen is not None and chosen < len(tried) else None
        recorded_urls.append(
            RecordedUrl(
                url=url,
                blocked=blocked,
                reason=reason or None,
                addresses=tuple(addresses or ()),
                argvs=tuple(tuple(argv) for _command, argv, _outcome in tried),
                succeeded=any(item[2] == "success" for item in tried),
                summary=summary,
                source=source,
            )
        )
    media_records = [
        (str(item.get("capability")), str(item.get("outcome")))
        for item in (media or [])
        if isinstance(item, Mapping)
    ]
    return RecordedRun(
        run_id=pk,
        outcome=outcome,
        matched_rule=rule,
        channel=channel,
        chat_type=chat_type,
        session_key=key,
        agent_id=agent,
        message_id=message,
        link_text=link_scan_text(original, enriched, bool(media_records), recorded_urls),
        urls=tuple(recorded_urls),
        media=tuple(media_records),
        scope_source=scope_text,
    )


def window_runs(window: Window) -> list[RecordedRun]:
    """The window's decided runs, newest first."""
    return recorded_runs(window_runs_query(window)[: window.last_runs])


def dry_run_result(report: DryRunReport, window: Window) -> dict[str, Any]:
    return {"window": window.to_dict(), **report.to_dict(AFFECTED_LIMIT)}


def config_dry_run(*, document: object, window: object) -> dict[str, Any]:
    """The whole dry run in one call (``POST /api/config/dry-run``)."""
    config, parsed_window = proposed_config(document), parse_window(window)
    report = dry_run(config, window_runs(parsed_window))
    return dry_run_result(report, parsed_window)
