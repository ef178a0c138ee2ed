"""Link pipeline tests: gates, SSRF, fallback, concurrency, progress, decisions, explain."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from enrichment.pipeline.config.model import LinkModel, LinksConfig
from enrichment.pipeline.config.scope import ScopeConfig, ScopeMatch, ScopeRule
from enrichment.pipeline.links.decisions import Attempt, LinkDecision, UrlDecision, ssrf_attempt
from enrichment.pipeline.links.stage import (
    PENDING_NOTICE,
    ProgressEvent,
    explain_links,
    run_link_understanding,
)
from enrichment.pipeline.net.ssrf import SsrfPolicy
from enrichment.pipeline.runner import CommandResult
from enrichment.pipeline.templates import MessageContext

FAKE_CLI = str(Path(__file__).parent.parent / "fake_clis" / "fakecli.py")
POLICY = SsrfPolicy()
PUBLIC = "93.184.216.34"


def resolve(host: str) -> list[str]:
    """Fake DNS: ``private.example`` -> 10.0.0.5, ``nxdomain.example`` fails, else public."""
    if host == "private.example":
        return [PUBLIC, "10.0.0.5"]
    if host == "nxdomain.example":
        raise socket.gaierror("not found")
    return [PUBLIC]


def cli(*args: str, timeout: float | None = None) -> LinkModel:
    return LinkModel(sys.executable, (FAKE_CLI, *args), timeout)


def links_config(*models: LinkModel, **overrides: Any) -> LinksConfig:
    return LinksConfig(models=models, **overrides)


class FakeRunner:
    """Answers by the first argument after the command; records argv and timeouts."""

    def __init__(self, answers: dict[str, CommandResult], delays: dict[str, float] | None = None):
        self.answers = answers
        self.delays = delays or {}
        self.calls: list[tuple[tuple[str, ...], float]] = []

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = 0,
        cwd: str | None = None,
    ) -> CommandResult:
        self.calls.append((tuple(argv), timeout_seconds))
        key = argv[1] if len(argv) > 1 else ""
        await asyncio.sleep(self.delays.get(argv[-1], 0))
        return self.answers[key]


def ok(text: str) -> CommandResult:
    return CommandResult("success", None, 0, 7, text, len(text), "")


FAILED = CommandResult("failed", "exited with code 2", 2, 5, "", 0, "boom")
EMPTY = CommandResult("skipped", "empty output", 0, 3, "", 1, "")


async def run(
    config: LinksConfig, body: str, runner: Any = None, **kwargs: Any
) -> tuple[str, LinkDecision]:
    context = kwargs.pop("context", None) or MessageContext(body=body)
    extra = {"runner": runner} if runner is not None else {}
    result = await run_link_understanding(
        config, context, policy=POLICY, resolve=resolve, **extra, **kwargs
    )
    return result.body, result.decision


# --- gates ------------------------------------------------------------------------------------


NEVER = FakeRunner({})


@pytest.mark.parametrize(
    ("config", "body", "expected"),
    [
        (LinksConfig(), "see https://a.example", LinkDecision("disabled", None)),
        (
            links_config(cli("echo", "x"), enabled=False),
            "see https://a.example",
            LinkDecision("disabled", None),
        ),
        (
            links_config(
                cli("echo", "x"),
                scope=ScopeConfig("allow", (ScopeRule("deny", ScopeMatch(chat_type="group")),)),
            ),
            "see https://a.example",
            LinkDecision("scope-deny", 0),
        ),
        (
            links_config(cli("echo", "x"), scope=ScopeConfig("deny")),
            "see https://a.example",
            LinkDecision("scope-deny", None),
        ),
        (links_config(cli("echo", "x")), "no links here", LinkDecision("no-links", None)),
        (
            links_config(cli("echo", "x")),
            "only [markdown](https://a.example) and http://127.0.0.1/",
            LinkDecision("no-links", None),
        ),
        (
            LinksConfig(enabled=True),
            "see https://a.example and https://b.example",
            LinkDecision(
                "skipped",
                None,
                (
                    UrlDecision("https://a.example", False, None, (), (), None),
                    UrlDecision("https://b.example", False, None, (), (), None),
                ),
            ),
        ),
    ],
    ids=[
        "no-models-disabled",
        "enabled-false",
        "scope-deny-rule",
        "scope-deny-default",
        "no-links",
        "only-markdown-and-private",
        "no-models-lists-urls",
    ],
)
async def test_gates(config: LinksConfig, body: str, expected: LinkDecision) -> None:
    context = MessageContext(body=body, chat_type="group")
    new_body, decision = await run(config, body, NEVER, context=context)
    assert decision == expected
    assert new_body == body
    assert NEVER.calls == []


# --- real CLI runs ----------------------------------------------------------------------------


async def test_success_with_a_real_cli_appends_the_envelope() -> None:
    config = links_config(cli("echo", "Summary of", "{{LinkUrl}}"))
    body, decision = await run(config, "look at https://example.com/page now")
    assert body == (
        "look at https://example.com/page now\n\n[Link]\nURL: https://example.com/page\n"
        f"Source: {sys.executable}\nSummary:\nSummary of https://example.com/page"
    )
    assert decision.outcome == "success" and decision.matched_rule is None
    (url,) = decision.urls
    assert (url.url, url.blocked, url.reason, url.addresses) == (
        "https://example.com/page",
        False,
        None,
        (PUBLIC,),
    )
    (attempt,) = url.attempts
    assert attempt.argv == (
        sys.executable,
        FAKE_CLI,
        "echo",
        "Summary of",
        "https://example.com/page",
    )
    assert (attempt.type, attempt.command, attempt.outcome, attempt.exit_code) == (
        "cli",
        sys.executable,
        "success",
        0,
    )
    assert attempt.stdout_bytes == len("Summary of https://example.com/page\n")
    assert url.chosen == attempt


async def test_seed_example_only_the_bare_link_is_processed() -> None:
    config = links_config(cli("echo", "{{LinkUrl}}"))
    message = "Please check [our docs](https://docs.example.com) and https://status.example.com"
    _body, decision = await run(config, message)
    assert [url.url for url in decision.urls] == ["https://status.example.com"]


async def test_fallback_tries_entries_in_order_until_one_succeeds(tmp_path: Path) -> None:
    log = str(tmp_path / "order.log")
    config = links_config(
        cli("exit", "4", "ignored"),
        cli("log", log, ""),
        cli("log", log, "second", "{{LinkUrl}}"),
        cli("log", log, "never"),
    )
    body, decision = await run(config, "https://a.example")
    (url,) = decision.urls
    assert [(a.outcome, a.reason) for a in url.attempts] == [
        ("failed", "exited with code 4"),
        ("skipped", "empty output"),
        ("success", None),
    ]
    assert url.attempts[0].stderr_tail == "boom"
    assert url.chosen == url.attempts[2]
    assert Path(log).read_text() == "|\nsecond https://a.example|\n"
    assert body.endswith("Summary:\nsecond https://a.example")


async def test_all_entries_failing_is_skipped_and_body_unchanged() -> None:
    config = links_config(cli("exit", "1"), LinkModel("definitely-missing-cli-7f3a"))
    body, decision = await run(config, "  https://a.example  ")
    assert decision.outcome == "skipped"
    assert body == "  https://a.example  "
    (url,) = decision.urls
    assert [a.reason for a in url.attempts] == [
        "exited with code 1",
        "command not found: definitely-missing-cli-7f3a",
    ]
    assert url.chosen is None


async def test_timeouts_come_from_entry_then_config() -> None:
    runner = FakeRunner({"a": ok("x"), "b": ok("y")})
    config = LinksConfig(
        models=(LinkModel("cli", ("b",), 7), LinkModel("cli", ("a",))),
        timeout_seconds=12,
    )
    await run(config, "https://a.example", runner)
    assert [timeout for _argv, timeout in runner.calls] == [7.0]
    runner = FakeRunner({"a": FAILED, "b": ok("y")})
    config = LinksConfig(models=(LinkModel("cli", ("a",)), LinkModel("cli", ("b",), 3)))
    await run(config, "https://a.example", runner)
    assert [timeout for _argv, timeout in runner.calls] == [30.0, 3.0]


async def test_context_variables_are_templated_but_not_the_command() -> None:
    runner = FakeRunner({"--url": ok("x")})
    config = links_config(
        LinkModel("{{SenderName}}", ("--url", "{{ LinkUrl }}", "--who={{SenderName}}", "{{Nope}}"))
    )
    context = MessageContext(body="https://a.example/?q=$(id)", sender_name="Ada")
    await run(config, "", runner, context=context)
    assert runner.calls[0][0] == (
        "{{SenderName}}",
        "--url",
        "https://a.example/?q=$(id)",
        "--who=Ada",
        "",
    )


async def test_links_come_from_raw_body_and_envelope_goes_on_body() -> None:
    runner = FakeRunner({"x": ok("summary")})
    context = MessageContext(body="rewritten by media", raw_body="original https://a.example")
    body, _decision = await run(links_config(LinkModel("cli", ("x",))), "", runner, context=context)
    assert body.startswith("rewritten by media\n\n[Link]\nURL: https://a.example\n")


async def test_max_links_caps_detection() -> None:
    runner = FakeRunner({"x": ok("s")})
    config = links_config(LinkModel("cli", ("x",)), max_links=2)
    _body, decision = await run(
        config, "https://a.example https://b.example https://c.example", runner
    )
    assert [url.url for url in decision.urls] == ["https://a.example", "https://b.example"]


# --- SSRF ---------------------------------------------------------------------------------------


async def test_ssrf_blocked_urls_are_skipped_and_others_still_run() -> None:
    runner = FakeRunner({"x": ok("public summary")})
    message = "https://private.example/a https://nxdomain.example https://ok.example"
    body, decision = await run(links_config(LinkModel("cli", ("x",))), message, runner)
    private, missing, public = decision.urls
    assert (private.blocked, private.reason, private.addresses) == (
        True,
        "resolves to private address 10.0.0.5",
        (PUBLIC, "10.0.0.5"),
    )
    assert private.attempts == (
        ssrf_attempt(
            "Blocked: resolves to private address 10.0.0.5", private.attempts[0].duration_ms
        ),
    )
    assert private.attempts[0].to_dict() | {"durationMs": 0} == {
        "type": "cli",
        "command": "ssrf",
        "argv": [],
        "outcome": "skipped",
        "reason": "Blocked: resolves to private address 10.0.0.5",
        "exitCode": None,
        "durationMs": 0,
        "stdoutBytes": 0,
        "stderrTail": "",
    }
    assert (missing.blocked, missing.reason, missing.chosen) == (
        True,
        "hostname does not resolve",
        None,
    )
    assert public.chosen is not None and not public.blocked
    assert [call[0][-1] for call in runner.calls] == ["x"]  # only the public URL ran a CLI
    assert decision.outcome == "success"
    assert "[Link]\nURL: https://ok.example" in body


async def test_every_url_blocked_is_skipped() -> None:
    _body, decision = await run(
        links_config(LinkModel("cli", ("x",))), "https://private.example", NEVER
    )
    assert decision.outcome == "skipped"
    assert NEVER.calls == []


async def test_policy_opt_in_allows_intranet_urls() -> None:
    runner = FakeRunner({"x": ok("internal")})
    policy = SsrfPolicy(allowed_hostnames=("private.example",), allow_private_network=True)
    result = await run_link_understanding(
        links_config(LinkModel("cli", ("x",))),
        MessageContext(body="https://private.example"),
        policy=policy,
        runner=runner,
        resolve=resolve,
    )
    assert result.decision.outcome == "success"


# --- concurrency ------------------------------------------------------------------------------

THREE_LINKS = "https://a.example https://b.example https://c.example"


async def test_default_concurrency_runs_links_in_parallel() -> None:
    config = links_config(cli("sleep", "1", "done {{LinkUrl}}"))
    started = time.monotonic()
    body, decision = await run(config, THREE_LINKS)
    assert time.monotonic() - started < 2.0
    assert decision.outcome == "success"
    assert [section.split("\n")[1] for section in body.split("\n\n")[1:]] == [
        "URL: https://a.example",
        "URL: https://b.example",
        "URL: https://c.example",
    ]


async def test_concurrency_one_is_sequential() -> None:
    config = links_config(cli("sleep", "1", "done"), concurrency=1)
    started = time.monotonic()
    _body, decision = await run(config, THREE_LINKS)
    assert time.monotonic() - started >= 3.0
    assert decision.outcome == "success"


async def test_outputs_keep_detection_order_when_later_links_finish_first() -> None:
    runner = FakeRunner({"x": ok("s")}, delays={"https://a.example": 0.3, "https://b.example": 0.1})
    config = links_config(LinkModel("cli", ("x", "{{LinkUrl}}")))
    body, decision = await run(config, THREE_LINKS, runner)
    # Calls start concurrently (in whatever order their DNS checks finish); what the user
    # sees, the decision and the envelope, keeps detection order.
    assert sorted(call[0][-1] for call in runner.calls) == [
        "https://a.example",
        "https://b.example",
        "https://c.example",
    ]
    assert [url.url for url in decision.urls] == [
        "https://a.example",
        "https://b.example",
        "https://c.example",
    ]
    assert body.index("[Link 1/3]\nURL: https://a.example") < body.index(
        "[Link 3/3]\nURL: https://c"
    )


# --- progress ---------------------------------------------------------------------------------


async def test_progress_announces_runs_and_the_pending_notice() -> None:
    events: list[ProgressEvent] = []

    async def record(event: ProgressEvent) -> None:
        events.append(event)

    runner = FakeRunner({"x": ok("SECRET PAGE TEXT")}, delays={"https://slow.example": 0.6})
    config = links_config(LinkModel("link-understand", ("x", "{{LinkUrl}}")))
    await run(
        config,
        "https://slow.example https://fast.example",
        runner,
        on_progress=record,
        pending_notice_seconds=0.2,
    )
    assert sorted((event.url, event.text) for event in events) == [
        ("https://fast.example", "Running link-understand for https://fast.example"),
        ("https://slow.example", PENDING_NOTICE),
        ("https://slow.example", "Running link-understand for https://slow.example"),
    ]
    slow = [event.text for event in events if event.url == "https://slow.example"]
    assert slow == ["Running link-understand for https://slow.example", PENDING_NOTICE]
    assert all("SECRET" not in event.text for event in events)


async def test_progress_sink_failure_does_not_fail_the_run() -> None:
    async def broken(event: ProgressEvent) -> None:
        raise ConnectionError("client went away")

    runner = FakeRunner({"x": ok("s")})
    _body, decision = await run(
        links_config(LinkModel("cli", ("x",))), "https://a.example", runner, on_progress=broken
    )
    assert decision.outcome == "success"


async def test_a_raising_runner_becomes_a_failed_attempt() -> None:
    class Exploding(FakeRunner):
        async def __call__(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
            raise RuntimeError("kaboom")

    _body, decision = await run(
        links_config(LinkModel("cli", ("x",))), "https://a.example", Exploding({})
    )
    (url,) = decision.urls
    assert [(a.outcome, a.reason) for a in url.attempts] == [("failed", "runner error: kaboom")]
    assert decision.outcome == "skipped"


# --- decision records ---------------------------------------------------------------------------


ATTEMPT = Attempt(
    "cli",
    "link-understand",
    ("link-understand", "--url", "https://a.example"),
    "failed",
    "exited with code 2",
    2,
    41,
    0,
    "boom",
)
CHOSEN = Attempt(
    "cli", "link-backup", ("link-backup", "https://a.example"), "success", None, 0, 12, 30, ""
)
DECISION = LinkDecision(
    "success",
    1,
    (
        UrlDecision(
            "https://a.example", False, None, ("93.184.216.34",), (ATTEMPT, CHOSEN), CHOSEN
        ),
        UrlDecision(
            "http://10.0.0.5.nip.io",
            True,
            "resolves to private address 10.0.0.5",
            ("10.0.0.5",),
            (ssrf_attempt("resolves to private address 10.0.0.5", 3),),
            None,
        ),
    ),
)


def test_decision_json_shape() -> None:
    data = DECISION.to_dict()
    assert list(data) == ["outcome", "matchedRule", "urls"]
    first = data["urls"][0]  # type: ignore[index]
    assert list(first) == ["url", "blocked", "reason", "addresses", "attempts", "chosen"]
    assert first["attempts"][0] == {
        "type": "cli",
        "command": "link-understand",
        "argv": ["link-understand", "--url", "https://a.example"],
        "outcome": "failed",
        "reason": "exited with code 2",
        "exitCode": 2,
        "durationMs": 41,
        "stdoutBytes": 0,
        "stderrTail": "boom",
    }
    assert first["chosen"]["command"] == "link-backup"
    assert data["urls"][1]["chosen"] is None  # type: ignore[index]


@pytest.mark.parametrize(
    "decision",
    [
        DECISION,
        LinkDecision("no-links", None),
        LinkDecision("scope-deny", 3),
        LinkDecision("disabled", None),
    ],
    ids=["full", "no-links", "scope-deny", "disabled"],
)
def test_decision_round_trip(decision: LinkDecision) -> None:
    assert LinkDecision.from_dict(decision.to_dict()) == decision


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(outcome="maybe"), "links.outcome: must be one of"),
        (lambda d: d.update(urls={}), "links.urls: must be list"),
        (lambda d: d["urls"][0].update(blocked="no"), "links.urls[0].blocked: must be bool"),
        (
            lambda d: d["urls"][0]["attempts"][0].update(exitCode=True),
            "links.urls[0].attempts[0].exitCode: must be int",
        ),
        (
            lambda d: d["urls"][0]["attempts"][0].update(argv=[1]),
            "links.urls[0].attempts[0].argv: must be a list of strings",
        ),
        (lambda d: d["urls"][0].update(chosen=[]), "links.urls[0].chosen: must be an object"),
        (lambda d: d.update(matchedRule="0"), "links.matchedRule: must be int"),
    ],
    ids=["outcome", "urls", "blocked", "exit-code-bool", "argv", "chosen", "matched-rule"],
)
def test_decision_from_dict_rejects_bad_shapes(mutate: Any, message: str) -> None:
    data = DECISION.to_dict()
    mutate(data)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        LinkDecision.from_dict(data)


# --- explain ----------------------------------------------------------------------------------


def test_explain_runs_nothing_and_shows_verdicts_and_argv() -> None:
    config = links_config(
        LinkModel("link-understand", ("--url", "{{LinkUrl}}"), 9),
        LinkModel("link-backup", ("{{LinkUrl}}", "{{SenderName}}")),
        scope=ScopeConfig("deny", (ScopeRule("allow", ScopeMatch(channel="slack")),)),
        timeout_seconds=15,
    )
    context = MessageContext(
        body="https://ok.example https://private.example", surface="slack", sender_name="Ada"
    )
    plan = explain_links(config, context, policy=POLICY, resolve=resolve)
    assert plan.to_dict() == {
        "outcome": "run",
        "enabled": True,
        "scope": {"decision": "allow", "matchedRule": 0},
        "matchedRule": 0,
        "urls": [
            {
                "url": "https://ok.example",
                "blocked": False,
                "reason": None,
                "host": "ok.example",
                "addresses": [PUBLIC],
                "commands": [
                    {
                        "command": "link-understand",
                        "argv": ["link-understand", "--url", "https://ok.example"],
                        "timeoutSeconds": 9.0,
                    },
                    {
                        "command": "link-backup",
                        "argv": ["link-backup", "https://ok.example", "Ada"],
                        "timeoutSeconds": 15.0,
                    },
                ],
            },
            {
                "url": "https://private.example",
                "blocked": True,
                "reason": "resolves to private address 10.0.0.5",
                "host": "private.example",
                "addresses": [PUBLIC, "10.0.0.5"],
                "commands": [],
            },
        ],
    }


@pytest.mark.parametrize(
    ("config", "context", "outcome"),
    [
        (LinksConfig(), MessageContext(body="https://a.example"), "disabled"),
        (
            links_config(LinkModel("x"), scope=ScopeConfig("deny")),
            MessageContext(body="https://a.example"),
            "scope-deny",
        ),
        (links_config(LinkModel("x")), MessageContext(body="nothing"), "no-links"),
        (LinksConfig(enabled=True), MessageContext(body="https://a.example"), "skipped"),
        (links_config(LinkModel("x")), MessageContext(body="https://private.example"), "skipped"),
    ],
    ids=["disabled", "scope-deny", "no-links", "no-models", "all-blocked"],
)
def test_explain_outcomes(config: LinksConfig, context: MessageContext, outcome: str) -> None:
    assert explain_links(config, context, policy=POLICY, resolve=resolve).outcome == outcome


def test_explain_without_resolver_does_no_dns() -> None:
    plan = explain_links(
        links_config(LinkModel("x")), MessageContext(body="https://nxdomain.example"), policy=POLICY
    )
    (url,) = plan.urls
    assert (url.verdict.blocked, url.verdict.addresses) == (False, ())
