"""The pure retention policy: which runs go, which settings are refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from enrichment.pipeline.retention.policy import (
    MASK,
    OUTCOMES,
    PolicyError,
    RetentionPolicy,
    expires_at,
    is_expired,
    policy_from_environment,
    redact_content,
    redaction_before,
    retention_cuts,
)

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def test_the_outcomes_are_the_run_model_s() -> None:
    from enrichment.models import Run

    assert tuple(Run.Outcome.values) == OUTCOMES


def test_no_setting_keeps_everything_forever() -> None:
    policy = policy_from_environment({})
    assert not policy.prunes
    assert retention_cuts(policy, OUTCOMES, NOW) == []
    assert redaction_before(policy, NOW) is None
    assert policy.describe() == "keep forever"


def test_per_outcome_days_override_the_default_and_running_runs_stay() -> None:
    policy = policy_from_environment(
        {"RETENTION_DAYS": "30", "RETENTION_DAYS_BY_OUTCOME": "error=90, success=7"}
    )
    cuts = {cut.outcome: cut.before for cut in retention_cuts(policy, OUTCOMES, NOW)}
    assert cuts["error"] == NOW - timedelta(days=90)
    assert cuts["success"] == NOW - timedelta(days=7)
    assert cuts["no-links"] == NOW - timedelta(days=30)
    assert "running" not in cuts
    assert policy.describe() == "keep 30 days; error: 90 days; success: 7 days"


def test_only_per_outcome_days_prune_only_those_outcomes() -> None:
    policy = policy_from_environment({"RETENTION_DAYS_BY_OUTCOME": "success=1"})
    assert [cut.outcome for cut in retention_cuts(policy, OUTCOMES, NOW)] == ["success"]


def test_a_running_run_goes_only_when_named() -> None:
    policy = RetentionPolicy(days=1, days_by_outcome={"running": 10})
    assert not is_expired(policy, outcome="running", created_at=NOW - timedelta(days=5), now=NOW)
    assert is_expired(policy, outcome="running", created_at=NOW - timedelta(days=11), now=NOW)


@pytest.mark.parametrize(
    ("created", "expired"),
    [(timedelta(days=30, seconds=1), True), (timedelta(days=30), False), (timedelta(0), False)],
    ids=["just-past", "exactly-at-the-cut", "new"],
)
def test_expiry_is_strictly_before_the_cut(created: timedelta, expired: bool) -> None:
    policy = RetentionPolicy(days=30)
    assert is_expired(policy, outcome="success", created_at=NOW - created, now=NOW) is expired


def test_expires_at_is_creation_plus_days() -> None:
    policy = RetentionPolicy(days=30, days_by_outcome={"error": 90})
    assert expires_at(policy, outcome="error", created_at=NOW) == NOW + timedelta(days=90)
    assert expires_at(RetentionPolicy(), outcome="error", created_at=NOW) is None


def test_zero_redaction_days_redacts_at_once() -> None:
    policy = policy_from_environment({"REDACT_AFTER_DAYS": "0"})
    assert redaction_before(policy, NOW) == NOW
    assert not policy.prunes


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"RETENTION_DAYS": "thirty"}, "RETENTION_DAYS: expected a whole number of days"),
        ({"RETENTION_DAYS": "-1"}, "between 0 and 36500"),
        ({"RETENTION_DAYS": "99999999"}, "between 0 and 36500"),
        ({"RETENTION_DAYS_BY_OUTCOME": "failure=3"}, "unknown outcome 'failure'"),
        ({"RETENTION_DAYS_BY_OUTCOME": "error"}, "expected outcome=days, got 'error'"),
        ({"RETENTION_DAYS_BY_OUTCOME": "=3"}, "expected outcome=days"),
        ({"RETENTION_DAYS_BY_OUTCOME": "error=1,error=2"}, "given twice"),
        ({"RETENTION_DAYS_BY_OUTCOME": "error="}, "no days given for 'error'"),
        ({"RETENTION_DAYS_BY_OUTCOME": "error=1.5"}, "(error): expected a whole number"),
        ({"REDACT_AFTER_DAYS": "soon"}, "REDACT_AFTER_DAYS"),
        ({"REDACTION_MODE": "shred"}, "REDACTION_MODE: expected drop or mask"),
    ],
    ids=[
        "words",
        "negative",
        "huge",
        "unknown-outcome",
        "no-equals",
        "no-outcome",
        "repeated",
        "no-days",
        "fraction",
        "bad-redaction",
        "bad-mode",
    ],
)
def test_bad_settings_are_refused_with_the_setting_named(
    environ: dict[str, str], message: str
) -> None:
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        policy_from_environment(environ)


def test_blank_entries_are_ignored() -> None:
    policy = policy_from_environment(
        {"RETENTION_DAYS_BY_OUTCOME": " , error=3 ,", "RETENTION_DAYS": " "}
    )
    assert policy.days is None and dict(policy.days_by_outcome) == {"error": 3}


@pytest.mark.parametrize("mode", ["drop", "mask"])
def test_redaction_takes_content_and_keeps_decisions(mode: str) -> None:
    policy = RetentionPolicy(redact_after_days=0, redact_mode=mode)
    record = [
        {
            "attachmentIndex": 0,
            "decision": {"type": "skip", "reason": "too large"},
            "outputs": [{"kind": "audio.transcription", "text": "secret words", "model": "m"}],
            "empty": {"text": ""},
        }
    ]
    redacted = redact_content(record, policy)
    replacement = "" if mode == "drop" else MASK
    assert redacted == [
        {
            "attachmentIndex": 0,
            "decision": {"type": "skip", "reason": "too large"},
            "outputs": [{"kind": "audio.transcription", "text": replacement, "model": "m"}],
            "empty": {"text": ""},
        }
    ]
    assert "secret" not in repr(redacted)
