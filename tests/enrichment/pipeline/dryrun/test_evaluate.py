"""The pure dry-run evaluator over recorded runs (no database, no DNS, no processes)."""

from __future__ import annotations

from typing import Any

import pytest

from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.dryrun.decisions import RecordedRun, RecordedUrl
from enrichment.pipeline.dryrun.evaluate import (
    chain_agrees,
    dry_run,
    link_scan_text,
    recorded_decision,
)
from enrichment.pipeline.dryrun.report import describe
from enrichment.pipeline.links.envelope import LinkOutput, format_link_body

MODEL = {"type": "cli", "command": "sum", "args": ["{{LinkUrl}}"]}


def config(**links: Any) -> Any:
    return parse_config({"tools": {"links": {"models": [MODEL], **links}}})


def url(
    address: str, *addresses: str, blocked: bool = False, reason: str | None = None, ok: bool = True
) -> RecordedUrl:
    argvs = () if blocked else (("sum", address),)
    return RecordedUrl(address, blocked, reason, addresses, argvs, ok and not blocked)


def run(
    run_id: int = 1, *urls: RecordedUrl, outcome: str = "success", **fields: Any
) -> RecordedRun:
    body = fields.pop("link_text", " ".join(u.url for u in urls))
    return RecordedRun(run_id, outcome, None, link_text=body, urls=urls, **fields)


def kinds(report: Any) -> dict[str, int]:
    return dict(report.counts)


def test_an_unchanged_config_affects_nothing():
    history = [run(1, url("https://a.example/", "93.184.216.34"), channel="slack")]
    report = dry_run(config(), history)
    assert (report.evaluated, report.affected_runs) == (1, 0)


def test_a_new_deny_rule_turns_matching_runs_into_scope_deny():
    history = [
        run(1, url("https://a.example/", "93.184.216.34"), channel="slack"),
        run(2, url("https://a.example/b", "93.184.216.34"), channel="discord"),
    ]
    report = dry_run(
        config(scope={"rules": [{"action": "deny", "match": {"channel": "slack"}}]}), history
    )
    assert kinds(report) == {"outcome:scope-deny": 1}
    (affected,) = report.affected
    assert affected.run_id == 1
    assert affected.before.gate == "run" and affected.after.gate == "scope-deny"
    assert affected.after.matched_rule == 0


def test_ssrf_verdicts_use_the_recorded_answers_not_dns():
    history = [
        run(
            1,
            url(
                "https://intra.example/",
                "10.0.0.7",
                blocked=True,
                reason="resolves to private address 10.0.0.7",
            ),
            outcome="skipped",
        ),
    ]
    opt_in = config()
    report = dry_run(
        parse_config(
            {
                "tools": {
                    "links": {"models": [MODEL]},
                    "web": {"fetch": {"ssrfPolicy": {"allowPrivateNetwork": True}}},
                }
            }
        ),
        history,
    )
    assert kinds(report) == {"outcome:run": 1, "url:now-allowed": 1}
    assert dry_run(opt_in, history).affected_runs == 0


def test_another_runs_answer_is_used_and_an_unknown_host_is_not_guessed():
    allowed = run(1, url("https://a.example/x", "93.184.216.34"), channel="slack")
    denied_then = run(
        2,
        outcome="scope-deny",
        channel="discord",
        link_text="https://a.example/y and https://new.example/z",
    )
    history = [allowed, denied_then]
    report = dry_run(config(maxLinks=5), history)
    after = report.affected[0].after
    assert [(u.url, u.blocked) for u in after.urls] == [
        ("https://a.example/y", False),
        ("https://new.example/z", None),
    ]
    assert after.gate == "run"
    assert kinds(report) == {"outcome:run": 1, "url:newly-checked": 1, "url:unknown": 1}


def test_changed_args_are_a_different_chain():
    history = [run(1, url("https://a.example/", "93.184.216.34", ok=False), outcome="skipped")]
    changed = parse_config(
        {"tools": {"links": {"models": [{**MODEL, "args": ["--url", "{{LinkUrl}}"]}]}}}
    )
    report = dry_run(changed, history)
    assert kinds(report) == {"url:argv-changed": 1}
    assert report.affected[0].after.urls[0].argvs == (("sum", "--url", "https://a.example/"),)


def test_a_fallback_entry_after_a_success_changes_nothing():
    history = [run(1, url("https://a.example/", "93.184.216.34"))]
    two = parse_config({"tools": {"links": {"models": [MODEL, {**MODEL, "command": "other"}]}}})
    assert dry_run(two, history).affected_runs == 0


def test_the_agent_override_is_merged_per_run():
    history = [
        run(1, url("https://a.example/", "93.184.216.34"), agent_id="quiet"),
        run(2, url("https://a.example/", "93.184.216.34"), agent_id="other"),
    ]
    document = {
        "tools": {"links": {"models": [MODEL]}},
        "agents": {"list": [{"id": "quiet", "tools": {"links": {"enabled": False}}}]},
    }
    report = dry_run(parse_config(document), history)
    assert [a.run_id for a in report.affected] == [1]
    assert kinds(report) == {"outcome:disabled": 1}


def test_media_scope_changes_are_counted():
    history = [
        run(
            1,
            outcome="no-links",
            link_text="hi",
            channel="slack",
            media=(("image", "success"), ("audio", "no-attachment")),
        )
    ]
    document = {
        "tools": {"links": {"models": [MODEL]}, "media": {"image": {"scope": {"default": "deny"}}}}
    }
    report = dry_run(parse_config(document), history)
    assert kinds(report) == {"media:image:scope-deny": 1}
    assert describe("media:image:scope-deny", 1) == "1 image decisions would become scope-deny"


def test_the_link_text_of_a_media_run_is_its_body_without_the_link_envelope():
    media_body = "voice note: see https://a.example/ [Audio]\ntranscript"
    outputs = [LinkOutput("https://a.example/", "sum", "A summary")]
    enriched = format_link_body(media_body, outputs)
    recorded = [
        RecordedUrl(
            "https://a.example/",
            False,
            None,
            ("1.2.3.4",),
            (("sum", "x"),),
            True,
            "A summary",
            "sum",
        )
    ]
    assert link_scan_text("orig", enriched, True, recorded) == media_body
    assert link_scan_text("orig", enriched, False, recorded) == "orig"


@pytest.mark.parametrize(
    ("recorded", "succeeded", "planned", "agrees"),
    [
        ((("a",),), True, (("a",), ("b",)), True),
        ((("a",), ("b",)), False, (("a",), ("b",)), True),
        ((("a",),), False, (("a",), ("b",)), False),
        ((("a", "x"),), True, (("a", "y"),), False),
    ],
    ids=["success-prefix", "all-failed-same", "failed-new-fallback", "argv-changed"],
)
def test_chain_agreement(recorded, succeeded, planned, agrees):
    from enrichment.pipeline.dryrun.decisions import UrlVerdict

    assert (
        chain_agrees(
            UrlVerdict("u", False, None, recorded, succeeded), UrlVerdict("u", False, None, planned)
        )
        is agrees
    )


@pytest.mark.parametrize(
    ("outcome", "urls", "gate"),
    [
        ("success", (url("https://a.example/", "1.2.3.4"),), "run"),
        ("skipped", (url("https://a.example/", "1.2.3.4", ok=False),), "run"),
        ("skipped", (url("https://a.example/", blocked=True, reason="x"),), "skipped"),
        ("scope-deny", (), "scope-deny"),
        ("no-links", (), "no-links"),
    ],
    ids=["success", "cli-printed-nothing", "all-blocked", "scope-deny", "no-links"],
)
def test_recorded_outcomes_map_to_gates(outcome, urls, gate):
    assert recorded_decision(run(1, *urls, outcome=outcome)).gate == gate
