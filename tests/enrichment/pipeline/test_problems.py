"""Failures, fingerprints, trends and alert decisions of the pure core (no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from enrichment.pipeline.problems.alerts import (
    alert_text,
    backoff_delays,
    failure_rate,
    is_retryable,
    new_problems,
    should_send,
    webhook_url_error,
)
from enrichment.pipeline.problems.fingerprint import (
    AttemptFacts,
    RunFacts,
    UrlFacts,
    fingerprint,
    normalized_reason,
    run_failures,
)
from enrichment.pipeline.problems.trend import hourly_add, last_days, last_hours, sparkline

NOW = datetime(2026, 12, 4, 23, 30, tzinfo=UTC)


def kinds(facts: RunFacts) -> list[tuple[str, str]]:
    return [(failure.kind, failure.subject) for failure in run_failures(facts)]


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (RunFacts(outcome="success"), []),
        (RunFacts(outcome="error", error="boom at 12:31"), [("run-error", "boom at N:N")]),
        (RunFacts(outcome="error", error=""), [("run-error", "error")]),
        (RunFacts(outcome="interrupted", error="cancelled"), [("run-interrupted", "cancelled")]),
        (
            RunFacts(outcome="success", urls=(UrlFacts("http://EVIL.test:8080/x", True, "r"),)),
            [("blocked-host", "evil.test")],
        ),
        (
            RunFacts(outcome="success", urls=(UrlFacts("http://[::1/x", True, "invalid"),)),
            [("blocked-host", "(unparseable URL)")],
        ),
        (
            RunFacts(
                outcome="success",
                urls=(
                    UrlFacts("http://10.0.0.5/", True, "", (AttemptFacts("ssrf", "failed"),)),
                    UrlFacts("https://a.test/", False, "", (AttemptFacts("cli", "failed", "x"),)),
                    UrlFacts("https://b.test/", False, "", (AttemptFacts("cli", "failed", "y"),)),
                    UrlFacts("https://c.test/", False, "", (AttemptFacts("ok", "success"),)),
                ),
            ),
            [("blocked-host", "10.0.0.5"), ("command-failed", "cli")],
        ),
        (
            RunFacts(
                outcome="success",
                media=(
                    {
                        "capability": "image",
                        "outcome": "success",
                        "attachments": [
                            {
                                "attempts": [
                                    {
                                        "type": "provider",
                                        "provider": "openai",
                                        "model": "m",
                                        "outcome": "failed",
                                        "reason": "HTTP 500",
                                    },
                                    {"type": "cli", "argv": ["describe", "x"], "outcome": "failed"},
                                ]
                            }
                        ],
                    },
                    {
                        "capability": "file",
                        "files": [{"skipped": "fetch-failed: HTTP 404"}, {"skipped": "binary"}],
                    },
                ),
            ),  # fmt: skip
            [
                ("media-failed", "image openai m"),
                ("media-failed", "image describe"),
                ("file-failed", "fetch-failed"),
            ],
        ),
        # Hostile shapes in stored JSON: ignored, never an exception.
        (
            RunFacts(
                outcome="success",
                media=(
                    "junk",
                    {"attachments": "x"},
                    {"attachments": [{"attempts": [None, 3]}]},
                    {"files": [{"skipped": 5}]},
                ),  # type: ignore[arg-type]
            ),  # fmt: skip
            [],
        ),
    ],
    ids=[
        "success",
        "error-normalized",
        "error-empty",
        "interrupted",
        "blocked-host-lowercase",
        "unparseable-url",
        "ssrf-attempt-not-double-counted",
        "media-and-files",
        "hostile-json",
    ],  # fmt: skip
)
def test_run_failures(facts: RunFacts, expected: list[tuple[str, str]]) -> None:
    assert kinds(facts) == expected


def test_same_failure_twice_in_one_run_is_one_failure() -> None:
    facts = RunFacts(
        outcome="success",
        urls=(UrlFacts("http://10.0.0.5/a", True), UrlFacts("http://10.0.0.5/b", True)),
    )
    assert kinds(facts) == [("blocked-host", "10.0.0.5")]


def test_fingerprint_ignores_what_varies_and_separates_kinds() -> None:
    one = run_failures(RunFacts(outcome="error", error="timeout after 12 s on https://a/1"))
    two = run_failures(RunFacts(outcome="error", error="timeout after 31 s on https://b/2"))
    assert one[0].fingerprint == two[0].fingerprint
    assert fingerprint("blocked-host", "x") != fingerprint("command-failed", "x")
    assert len(one[0].fingerprint) == 32


@pytest.mark.parametrize(
    "error",
    ["x" * 100_000, "\x00\n\n<script>alert(1)</script>", "'" * 5000, "\u202e\ud7ff🎉" * 300],
    ids=["huge", "nul-and-html", "quotes", "unicode"],
)
def test_hostile_errors_give_a_bounded_subject(error: str) -> None:
    (failure,) = run_failures(RunFacts(outcome="error", error=error))
    assert 0 < len(failure.subject) <= 300
    assert len(failure.detail) <= 500
    assert normalized_reason(error) == failure.subject or failure.subject == "error"


def test_trend_keeps_a_week_of_hours_and_sums_days() -> None:
    hourly: dict[str, int] = {}
    for hours_ago in (0, 0, 1, 30, 24 * 7 + 1):
        hourly = hourly_add(hourly, at=NOW - timedelta(hours=hours_ago), now=NOW)
    assert sum(hourly.values()) == 4  # the one older than a week is gone
    assert last_hours(hourly, now=NOW)[-2:] == [1, 2]
    assert sum(last_hours(hourly, now=NOW)) == 3
    assert last_days(hourly, now=NOW) == [0, 0, 0, 0, 0, 1, 3]
    assert last_days({"garbage": 3, "2026-12-04T01": "x"}, now=NOW) == [0] * 7  # type: ignore[dict-item]


def test_sparkline_scales_to_the_peak() -> None:
    line = sparkline([0, 1, 4], width=30, height=20)
    assert [bar.height for bar in line.bars] == [1.0, 5.0, 20.0]
    assert line.total == 5 and line.peak == 4
    assert all(bar.y + bar.height == 20 for bar in line.bars)
    assert sparkline([]).bars == ()


def test_failure_rate_needs_enough_runs_and_a_rate_above_the_threshold() -> None:
    assert failure_rate(failed=3, total=4, threshold_percent=20, min_runs=10).firing is False
    assert failure_rate(failed=2, total=10, threshold_percent=20, min_runs=10).firing is False
    assert failure_rate(failed=3, total=10, threshold_percent=20, min_runs=10).firing is True
    assert failure_rate(failed=0, total=0, threshold_percent=0, min_runs=0).firing is False


def test_new_problems_threshold_is_at_least_one() -> None:
    assert new_problems(titles=[], threshold=0).firing is False
    assert new_problems(titles=["a"], threshold=0).firing is True
    assert new_problems(titles=["a"], threshold=2).firing is False


def test_should_send_at_start_then_after_the_cooldown() -> None:
    cooldown = timedelta(minutes=30)
    assert should_send(firing=True, last_sent_at=None, now=NOW, cooldown=cooldown)
    recent = NOW - timedelta(minutes=5)
    assert not should_send(firing=True, last_sent_at=recent, now=NOW, cooldown=cooldown)
    assert should_send(firing=True, last_sent_at=NOW - cooldown, now=NOW, cooldown=cooldown)
    assert not should_send(firing=False, last_sent_at=None, now=NOW, cooldown=cooldown)


def test_alert_text_cannot_ping_or_link_and_is_bounded() -> None:
    evaluation = new_problems(titles=["<!channel> x"], threshold=1)
    text = alert_text(rule_name="r", window_minutes=5, evaluation=evaluation,
                      details=["<!channel> & <http://evil|click>"] + ["y" * 1000] * 10)  # fmt: skip
    assert "<" not in text and ">" not in text
    assert "&lt;!channel&gt; &amp;" in text
    assert len(text) <= 3000


def test_backoff_doubles_up_to_the_cap() -> None:
    assert backoff_delays(attempts=5, base_seconds=1, cap_seconds=5) == [1, 2, 4, 5]
    assert backoff_delays(attempts=1, base_seconds=1) == []


@pytest.mark.parametrize(("status", "retry"), [(None, True), (429, True), (500, True),
                                               (503, True), (400, False), (404, False)])  # fmt: skip
def test_retryable_answers(status: int | None, retry: bool) -> None:
    assert is_retryable(status) is retry


@pytest.mark.parametrize(
    ("url", "allowed", "error"),
    [
        ("https://hooks.slack.com/services/T/B/x", (), None),
        ("http://127.0.0.1:9/hook", ("127.0.0.1",), None),
        ("http://127.0.0.1:9/hook", (), "the SSRF guard refuses this host: loopback address"),
        ("http://169.254.169.254/", ("169.254.169.254",), "cloud metadata"),
        ("http://metadata.google.internal/", (), "refuses this host"),
        ("http://10.0.0.5/", (), "private address"),
        ("ftp://example.com/", (), "not an http(s) URL"),
        ("javascript:alert(1)", (), "not an http(s) URL"),
        ("", (), "enter a webhook URL"),
        ("https://a.test/" + "x" * 3000, (), "too long (limit 2000"),
    ],
    ids=[
        "public",
        "allowed-local",
        "loopback",
        "metadata-even-if-listed",
        "metadata-name",
        "private",
        "ftp",
        "javascript",
        "empty",
        "too-long",
    ],  # fmt: skip
)
def test_webhook_url_error(url: str, allowed: tuple[str, ...], error: str | None) -> None:
    found = webhook_url_error(url, allowed_hosts=allowed)
    if error is None:
        assert found is None
    else:
        assert found is not None and error in found
