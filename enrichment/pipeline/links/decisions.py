"""Decision records of a link-understanding run, in the JSON shape of SPEC §9.

One ``LinkDecision`` per run; one ``UrlDecision`` per detected URL with its SSRF verdict and
every CLI attempt in order; ``chosen`` is the attempt that succeeded (or None). A URL the SSRF
check blocked carries a single pseudo-attempt ``{type: "cli", command: "ssrf", outcome:
"skipped", reason}``: the reference records it that way, so a history reader sees why no CLI
ran for that URL without looking anywhere else.

``to_dict`` and ``from_dict`` are exact inverses; ``from_dict`` raises ``ValueError`` naming
the offending field when the document has the wrong shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar, cast

from enrichment.pipeline.runner import AttemptOutcome

RunOutcome = Literal["success", "skipped", "disabled", "scope-deny", "no-links"]

RUN_OUTCOMES: tuple[RunOutcome, ...] = ("success", "skipped", "disabled", "scope-deny", "no-links")
ATTEMPT_OUTCOMES: tuple[AttemptOutcome, ...] = ("success", "skipped", "failed")
SSRF_COMMAND = "ssrf"

_T = TypeVar("_T")


@dataclass(frozen=True)
class Attempt:
    type: str
    command: str
    argv: tuple[str, ...]
    outcome: AttemptOutcome
    reason: str | None
    exit_code: int | None
    duration_ms: int
    stdout_bytes: int
    stderr_tail: str

    def to_dict(self) -> dict[str, object]:
        return {
            "type": self.type,
            "command": self.command,
            "argv": list(self.argv),
            "outcome": self.outcome,
            "reason": self.reason,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "stdoutBytes": self.stdout_bytes,
            "stderrTail": self.stderr_tail,
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "attempt") -> Attempt:
        obj = _mapping(data, path)
        return cls(
            type=_field(obj, "type", str, path),
            command=_field(obj, "command", str, path),
            argv=tuple(_string_list(obj, "argv", path)),
            outcome=_choice(obj, "outcome", ATTEMPT_OUTCOMES, path),
            reason=_optional(obj, "reason", str, path),
            exit_code=_optional(obj, "exitCode", int, path),
            duration_ms=_field(obj, "durationMs", int, path),
            stdout_bytes=_field(obj, "stdoutBytes", int, path),
            stderr_tail=_field(obj, "stderrTail", str, path),
        )


def ssrf_attempt(reason: str, duration_ms: int = 0) -> Attempt:
    """The pseudo-attempt recorded for a URL the SSRF check blocked."""
    return Attempt("cli", SSRF_COMMAND, (), "skipped", reason, None, duration_ms, 0, "")


@dataclass(frozen=True)
class UrlDecision:
    url: str
    blocked: bool
    reason: str | None
    addresses: tuple[str, ...]
    attempts: tuple[Attempt, ...]
    chosen: Attempt | None

    def to_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "blocked": self.blocked,
            "reason": self.reason,
            "addresses": list(self.addresses),
            "attempts": [attempt.to_dict() for attempt in self.attempts],
            "chosen": self.chosen.to_dict() if self.chosen is not None else None,
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "url") -> UrlDecision:
        obj = _mapping(data, path)
        raw_attempts = _field(obj, "attempts", list, path)
        raw_chosen = obj.get("chosen")
        return cls(
            url=_field(obj, "url", str, path),
            blocked=_field(obj, "blocked", bool, path),
            reason=_optional(obj, "reason", str, path),
            addresses=tuple(_string_list(obj, "addresses", path)),
            attempts=tuple(
                Attempt.from_dict(item, f"{path}.attempts[{index}]")
                for index, item in enumerate(raw_attempts)
            ),
            chosen=None if raw_chosen is None else Attempt.from_dict(raw_chosen, f"{path}.chosen"),
        )


@dataclass(frozen=True)
class LinkDecision:
    outcome: RunOutcome
    matched_rule: int | None
    urls: tuple[UrlDecision, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "matchedRule": self.matched_rule,
            "urls": [url.to_dict() for url in self.urls],
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "links") -> LinkDecision:
        obj = _mapping(data, path)
        raw_urls = _field(obj, "urls", list, path)
        return cls(
            outcome=_choice(obj, "outcome", RUN_OUTCOMES, path),
            matched_rule=_optional(obj, "matchedRule", int, path),
            urls=tuple(
                UrlDecision.from_dict(item, f"{path}.urls[{index}]")
                for index, item in enumerate(raw_urls)
            ),
        )


# --- strict readers for from_dict ---------------------------------------------------------------


def _mapping(data: object, path: str) -> Mapping[str, object]:
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: must be an object")
    return cast(Mapping[str, object], data)


def _field(obj: Mapping[str, object], key: str, kind: type[_T], path: str) -> _T:
    value = obj.get(key)
    # bool is an int subclass; a count or exit code must not be true/false.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{path}.{key}: must be {kind.__name__}")
    return value


def _optional(obj: Mapping[str, object], key: str, kind: type[_T], path: str) -> _T | None:
    return None if obj.get(key) is None else _field(obj, key, kind, path)


def _string_list(obj: Mapping[str, object], key: str, path: str) -> list[str]:
    items = _field(obj, key, list, path)
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"{path}.{key}: must be a list of strings")
    return cast(list[str], items)


def _choice(obj: Mapping[str, object], key: str, choices: tuple[_T, ...], path: str) -> _T:
    value = obj.get(key)
    for choice in choices:
        if value == choice:
            return choice
    raise ValueError(f"{path}.{key}: must be one of {', '.join(map(str, choices))}")
