"""Dry run: what a proposed config would decide for messages already recorded, without
running any CLI, fetching anything or asking DNS.

Each recorded run gives its message (context and the text that was scanned for links),
its decision (outcome, matched rule, per URL the SSRF verdict, the resolved addresses and
the argv of every attempt) and its media decisions. The proposed config is evaluated with
the same pure functions a real run uses (``effective_links_config`` for the per-agent
merge, ``evaluate_scope``, ``extract_links``, ``check_url``, ``entry_argv``), and the two
decisions are compared at the level a dry run can know:

- the gate: ``disabled``, ``scope-deny``, ``no-links``, ``skipped`` (no CLI would start),
  ``run`` (CLIs would start; whether they print something cannot be known without them), or
  ``unknown`` (no URL surely allowed, and one depends on a DNS answer nobody recorded);
- the matched scope rule;
- per URL, blocked or allowed and why — DNS answers come from the run's own record, else
  from the newest other run in the window that resolved the same host, else the verdict is
  ``unknown`` (the real run would ask DNS; we refuse to guess);
- per URL, the argv each CLI entry would get, in fallback order (a recorded chain that
  ended in success only fixes the entries up to the one that succeeded);
- per media capability that had attachments: ``disabled``, ``scope-deny`` or ``run``.

Fields the decision log does not keep (``SenderName``, ``Provider`` apart from the channel,
…) render as empty strings in templated args, as for any message that lacks them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from enrichment.pipeline.config.media import parse_media_config
from enrichment.pipeline.config.model import (
    Config,
    LinksConfig,
    effective_links_config,
    effective_media_config,
)
from enrichment.pipeline.config.scope import evaluate_scope
from enrichment.pipeline.config.scope_source import explain_scope
from enrichment.pipeline.dryrun.decisions import (
    RecordedRun,
    RecordedUrl,
    RunDecision,
    UrlVerdict,
)
from enrichment.pipeline.dryrun.report import AffectedRun, DryRunReport
from enrichment.pipeline.links.detection import extract_links
from enrichment.pipeline.links.envelope import LinkOutput, format_link_sections
from enrichment.pipeline.links.stage import entry_argv
from enrichment.pipeline.net.ssrf import SsrfPolicy, check_url
from enrichment.pipeline.net.urls import scheme_and_host, url_host
from enrichment.pipeline.templates import MessageContext

GATES_WITHOUT_URLS = ("disabled", "scope-deny", "no-links")
MEDIA_CAPABILITIES = ("image", "audio", "video")
UNKNOWN_REASON = "no recorded DNS answer for this host (a real run would resolve it)"


def link_scan_text(
    original_body: str, enriched_body: str, has_media: bool, urls: Sequence[RecordedUrl]
) -> str:
    """The text a run scanned for links: the body after media understanding.

    Without media that is the original body. With media it is the enriched body minus the
    link envelope, which is rebuilt exactly from the recorded summaries.
    """
    if not has_media:
        return original_body
    outputs = [LinkOutput(url.url, url.source, url.summary) for url in urls if url.succeeded]
    sections = format_link_sections(outputs)
    if not sections:
        return enriched_body
    envelope = "\n\n".join(sections)
    if enriched_body == envelope:
        return ""
    return enriched_body.removesuffix("\n\n" + envelope)


def recorded_decision(run: RecordedRun) -> RunDecision:
    """The recorded run in the terms a dry run can predict (``success`` → ``run`` …)."""
    urls = tuple(
        UrlVerdict(url.url, url.blocked, url.reason, url.argvs, url.succeeded) for url in run.urls
    )
    gate = run.outcome
    if gate in ("success", "skipped"):
        gate = "run" if any(url.argvs for url in run.urls) else "skipped"
    media = tuple(
        (capability, _recorded_media_gate(outcome))
        for capability, outcome in run.media
        if capability in MEDIA_CAPABILITIES and outcome != "no-attachment"
    )
    return RunDecision(gate, run.matched_rule, urls, media, run.scope_source)


def _recorded_media_gate(outcome: str) -> str:
    return "run" if outcome in ("success", "skipped") else outcome


AddressBook = Mapping[str, tuple[str, ...]]


# (scheme, host, recorded answer) → (blocked or None when unknown, reason). After parsing,
# ``check_url`` depends on nothing else (for one policy), so a dry run judges each host
# and answer once, however many URLs point at it.
VerdictCache = dict[tuple[str, str, tuple[str, ...] | None], tuple[bool | None, str | None]]


def address_book(runs: Iterable[RecordedRun]) -> dict[str, tuple[str, ...]]:
    """Host → the DNS answer recorded for it, the newest run first (``runs`` newest first).

    An empty answer means the host did not resolve then.
    """
    book: dict[str, tuple[str, ...]] = {}
    for run in runs:
        for url in run.urls:
            if url.addresses or url.reason == "hostname does not resolve":
                host = url_host(url.url)
                if host is not None and host not in book:
                    book[host] = url.addresses
    return book


def predicted_decision(
    config: Config,
    run: RecordedRun,
    book: AddressBook,
    media_config: Callable[[str], Any],
    cache: VerdictCache | None = None,
) -> RunDecision:
    """What ``config`` would decide for the recorded message (nothing is run or resolved)."""
    links = effective_links_config(config, run.agent_id or None)
    media = _predicted_media(run, media_config(run.agent_id))
    if not links.is_enabled:
        return RunDecision("disabled", None, (), media)
    scope = explain_scope(
        config,
        run.agent_id or None,
        run.channel or None,
        run.chat_type or None,
        run.session_key or None,
    )
    source = scope.text
    if scope.decision == "deny":
        return RunDecision("scope-deny", scope.rule_index, (), media, source)
    policy = config.web_fetch.ssrf_policy
    found = extract_links(run.link_text, max_links=links.max_links, policy=policy)
    if not found:
        return RunDecision("no-links", scope.rule_index, (), media, source)
    if not links.models:
        listed = tuple(UrlVerdict(url, False, None, ()) for url in found)
        return RunDecision("skipped", scope.rule_index, listed, media, source)
    own = address_book([run])
    context = run.context()
    cache = {} if cache is None else cache
    verdicts = tuple(_url_verdict(url, links, context, policy, own, book, cache) for url in found)
    if any(v.blocked is False for v in verdicts):
        gate = "run"
    else:  # nothing surely allowed: a host without a recorded answer leaves it open
        gate = "unknown" if any(v.blocked is None for v in verdicts) else "skipped"
    return RunDecision(gate, scope.rule_index, verdicts, media, source)


def _url_verdict(
    url: str,
    links: LinksConfig,
    context: MessageContext,
    policy: SsrfPolicy,
    own: AddressBook,
    book: AddressBook,
    cache: VerdictCache,
) -> UrlVerdict:
    parsed = scheme_and_host(url)
    answer = None if parsed is None else own.get(parsed[1], book.get(parsed[1]))
    key = None if parsed is None else (parsed[0], parsed[1], answer)
    judged = cache.get(key) if key is not None else None
    if judged is None:
        judged = _judge(url, policy, answer)
        if key is not None:
            cache[key] = judged
    blocked, reason = judged
    if blocked:
        return UrlVerdict(url, True, reason, ())
    argvs = tuple(entry_argv(entry, context, url) for entry in links.models)
    return UrlVerdict(url, blocked, reason, argvs)


def _judge(
    url: str, policy: SsrfPolicy, answer: tuple[str, ...] | None
) -> tuple[bool | None, str | None]:
    asked: list[str] = []

    def recorded_answer(host: str) -> list[str]:
        asked.append(host)
        return list(answer or ())

    verdict = check_url(url, policy, recorded_answer)
    if asked and answer is None:
        return None, UNKNOWN_REASON
    if verdict.blocked:
        return True, verdict.reason or "blocked"
    return False, None


def _predicted_media(run: RecordedRun, media: Any) -> tuple[tuple[str, str], ...]:
    predicted = []
    for capability, outcome in run.media:
        if capability not in MEDIA_CAPABILITIES or outcome == "no-attachment":
            continue
        settings = media.capability(capability)
        if settings.enabled is False:
            predicted.append((capability, "disabled"))
            continue
        scope = evaluate_scope(
            settings.scope, run.channel or None, run.chat_type or None, run.session_key or None
        )
        predicted.append((capability, "scope-deny" if scope.decision == "deny" else "run"))
    return tuple(predicted)


def media_config_for(config: Config) -> Callable[[str], Any]:
    """Agent id → its merged ``tools.media`` settings, parsed once per agent."""
    cache: dict[str, Any] = {}

    def lookup(agent_id: str) -> Any:
        if agent_id not in cache:
            cache[agent_id] = parse_media_config(effective_media_config(config, agent_id or None))[
                0
            ]
        return cache[agent_id]

    return lookup


def chain_agrees(recorded: UrlVerdict, planned: UrlVerdict) -> bool:
    """Whether a recorded fallback chain is what ``planned`` would try.

    A chain that ended in success says nothing about the entries after the one that
    succeeded, so only that prefix has to match.
    """
    if recorded.succeeded:
        return planned.argvs[: len(recorded.argvs)] == recorded.argvs
    return planned.argvs == recorded.argvs


def compare(before: RunDecision, after: RunDecision) -> list[str]:
    """The kinds of change between two decisions of one run (empty: unaffected)."""
    kinds: list[str] = []
    if before.gate != after.gate:
        kinds.append(f"outcome:{after.gate}")
    elif before.matched_rule != after.matched_rule:
        kinds.append("matched-rule")
    before_urls = {url.url: url for url in before.urls}
    for url in after.urls:
        old = before_urls.pop(url.url, None)
        if url.blocked is None:
            kinds.append("url:unknown")
        elif old is None:
            kinds.append("url:newly-checked")
        elif old.blocked is not url.blocked:
            kinds.append("url:newly-blocked" if url.blocked else "url:now-allowed")
        elif not url.blocked and not chain_agrees(old, url):
            kinds.append("url:argv-changed")
    if before_urls and after.gate not in GATES_WITHOUT_URLS:
        kinds += ["url:no-longer-checked"] * len(before_urls)
    for (capability, old_gate), (_, new_gate) in zip(before.media, after.media, strict=True):
        if old_gate != new_gate:
            kinds.append(f"media:{capability}:{new_gate}")
    return kinds


def dry_run(
    config: Config,
    runs: Sequence[RecordedRun],
    *,
    book: AddressBook | None = None,
    report: DryRunReport | None = None,
) -> DryRunReport:
    """Evaluate ``config`` over ``runs`` (newest first); pass ``report`` to continue one
    across chunks, and ``book`` built over the whole window."""
    report = report if report is not None else DryRunReport()
    book = address_book(runs) if book is None else book
    media = media_config_for(config)
    cache: VerdictCache = {}
    for run in runs:
        before = recorded_decision(run)
        after = predicted_decision(config, run, book, media, cache)
        kinds = compare(before, after)
        report.evaluated += 1
        if kinds:
            report.affected_runs += 1
            report.counts.update(kinds)
            report.affected.append(AffectedRun(run.run_id, tuple(kinds), before, after))
    return report
