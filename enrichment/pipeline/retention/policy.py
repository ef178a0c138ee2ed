"""What the decision log keeps, and for how long: the pure core of retention and redaction.

A policy says how many days a run is kept (``days``, one number for every outcome; unset:
forever), per outcome where it differs (``days_by_outcome``: keep failures longer), and after
how many days the chat content of a kept run is redacted (``redact_after_days``; 0: at once,
unset: never). The decisions themselves stay until the run is removed. Given a policy and
"now", the core answers which runs go: one ``(outcome, before)`` cut per outcome::

    >>> from datetime import datetime, timezone
    >>> policy = RetentionPolicy(days=30, days_by_outcome={"error": 90})
    >>> now = datetime(2026, 12, 5, tzinfo=timezone.utc)
    >>> [(cut.outcome, cut.before.date().isoformat()) for cut in
    ...  retention_cuts(policy, ["success", "error", "running"], now)]
    [('success', '2026-11-05'), ('error', '2026-09-06')]

A run still ``running`` is never removed by the default (only when named per outcome): a run
in progress must not vanish under its worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

# The outcomes of a run (``Run.Outcome``; a test keeps the two equal).
OUTCOMES = (
    "running",
    "success",
    "skipped",
    "disabled",
    "scope-deny",
    "no-links",
    "error",
    "interrupted",
    "dead-letter",
)
NEVER_BY_DEFAULT = frozenset({"running"})
REDACTION_MODES = ("drop", "mask")
MASK = "[redacted]"
MAX_DAYS = 36_500  # a hundred years: a larger number is a typo, not a policy


class PolicyError(ValueError):
    """A retention setting that cannot be a policy (the message names the setting)."""


@dataclass(frozen=True)
class RetentionPolicy:
    days: int | None = None
    days_by_outcome: Mapping[str, int] = field(default_factory=dict)
    redact_after_days: int | None = None
    redact_mode: str = "drop"  # drop: the text becomes ""; mask: it becomes MASK

    @property
    def prunes(self) -> bool:
        return self.days is not None or bool(self.days_by_outcome)

    def days_for(self, outcome: str) -> int | None:
        if outcome in self.days_by_outcome:
            return self.days_by_outcome[outcome]
        if outcome in NEVER_BY_DEFAULT:
            return None
        return self.days

    def describe(self) -> str:
        """``"keep 30 days; error: 90 days; redact after 7 days"``, ``"keep forever"``."""
        parts = [f"keep {self.days} days" if self.days is not None else "keep forever"]
        parts += [f"{outcome}: {days} days" for outcome, days in self.days_by_outcome.items()]
        if self.redact_after_days is not None:
            parts.append(f"redact ({self.redact_mode}) after {self.redact_after_days} days")
        return "; ".join(parts)

    def redacted_text(self, text: str) -> str:
        if not text:
            return text
        return MASK if self.redact_mode == "mask" else ""


@dataclass(frozen=True)
class Cut:
    """Remove the runs of ``outcome`` created before ``before``."""

    outcome: str
    before: datetime


def retention_cuts(policy: RetentionPolicy, outcomes: Iterable[str], now: datetime) -> list[Cut]:
    """One cut per outcome that has a retention; outcomes kept forever have none."""
    cuts = []
    for outcome in dict.fromkeys([*outcomes, *policy.days_by_outcome]):
        days = policy.days_for(outcome)
        if days is not None:
            cuts.append(Cut(outcome, now - timedelta(days=days)))
    return cuts


def is_expired(
    policy: RetentionPolicy, *, outcome: str, created_at: datetime, now: datetime
) -> bool:
    days = policy.days_for(outcome)
    return days is not None and created_at < now - timedelta(days=days)


def expires_at(policy: RetentionPolicy, *, outcome: str, created_at: datetime) -> datetime | None:
    """When a run of this outcome created then becomes due for removal (None: never)."""
    days = policy.days_for(outcome)
    return None if days is None else created_at + timedelta(days=days)


def redaction_before(policy: RetentionPolicy, now: datetime) -> datetime | None:
    """Runs created before this have their content redacted (None: no redaction).

    0 days redacts every finished run at once (the caller leaves running runs alone)."""
    if policy.redact_after_days is None:
        return None
    return now - timedelta(days=policy.redact_after_days)


def parse_days(name: str, text: str) -> int | None:
    """A number of days from a setting; blank: unset."""
    text = text.strip()
    if not text:
        return None
    try:
        days = int(text)
    except ValueError:
        raise PolicyError(f"{name}: expected a whole number of days, got {text!r}") from None
    if not 0 <= days <= MAX_DAYS:
        raise PolicyError(f"{name}: days must be between 0 and {MAX_DAYS}, got {days}")
    return days


def parse_days_by_outcome(name: str, text: str, outcomes: Sequence[str]) -> dict[str, int]:
    """``"error=90,success=30"`` -> ``{"error": 90, "success": 30}``; unknown outcomes,
    repeats and malformed entries are refused with the entry named.

    >>> parse_days_by_outcome("X", " error=90, success = 30 ", ["success", "error"])
    {'error': 90, 'success': 30}
    """
    result: dict[str, int] = {}
    for entry in text.split(","):
        if not entry.strip():
            continue
        outcome, separator, days_text = entry.partition("=")
        outcome = outcome.strip()
        if not separator or not outcome:
            raise PolicyError(f"{name}: expected outcome=days, got {entry.strip()!r}")
        if outcome not in outcomes:
            known = ", ".join(outcomes)
            raise PolicyError(f"{name}: unknown outcome {outcome!r} (one of {known})")
        if outcome in result:
            raise PolicyError(f"{name}: outcome {outcome!r} given twice")
        days = parse_days(f"{name} ({outcome})", days_text)
        if days is None:
            raise PolicyError(f"{name}: no days given for {outcome!r}")
        result[outcome] = days
    return result


def policy_from_environment(environ: Mapping[str, str]) -> RetentionPolicy:
    """The policy of ``RETENTION_DAYS``, ``RETENTION_DAYS_BY_OUTCOME``,
    ``REDACT_AFTER_DAYS`` and ``REDACTION_MODE``; a bad value raises ``PolicyError``."""
    mode = environ.get("REDACTION_MODE", "").strip() or "drop"
    if mode not in REDACTION_MODES:
        raise PolicyError(f"REDACTION_MODE: expected drop or mask, got {mode!r}")
    return RetentionPolicy(
        days=parse_days("RETENTION_DAYS", environ.get("RETENTION_DAYS", "")),
        days_by_outcome=parse_days_by_outcome(
            "RETENTION_DAYS_BY_OUTCOME", environ.get("RETENTION_DAYS_BY_OUTCOME", ""), OUTCOMES
        ),
        redact_after_days=parse_days("REDACT_AFTER_DAYS", environ.get("REDACT_AFTER_DAYS", "")),
        redact_mode=mode,
    )


# What redaction takes from a run (the run page and the API's ``redacted`` list say so).
REDACTED_CONTENT = (
    "message body",
    "enriched body",
    "link summaries",
    "media and stage text",
    "CLI stderr",
)

# Keys whose string values are chat or page content in a run's JSON records (media outputs,
# records of stages without a table of their own); everything else (kinds, providers,
# timings, reasons, outcomes) is a decision and stays.
CONTENT_KEYS = frozenset(
    {
        "text",
        "summary",
        "content",
        "body",
        "excerpt",
        "transcript",
        "description",
        "title",
        "stderrTail",
    }
)


def redact_content(value: object, policy: RetentionPolicy) -> object:
    """``value`` with the strings under content keys redacted, at any depth.

    >>> redact_content({"outputs": [{"kind": "image.description", "text": "a cat"}]},
    ...                RetentionPolicy(redact_mode="mask"))
    {'outputs': [{'kind': 'image.description', 'text': '[redacted]'}]}
    """
    if isinstance(value, dict):
        return {
            key: policy.redacted_text(item)
            if key in CONTENT_KEYS and isinstance(item, str)
            else redact_content(item, policy)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_content(item, policy) for item in value]
    return value
