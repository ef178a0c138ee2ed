"""What went wrong in one run, as failures with a stable fingerprint.

A failure is a kind plus the thing that failed: the host the SSRF guard blocked, the CLI
entry whose attempt failed, the media model that failed, or the (normalised) reason a run
errored. Two runs failing the same way give the same fingerprint, so they group into one
problem, whatever URL, run id or timestamp the messages carry.

Worked example::

    >>> facts = RunFacts(outcome="success", error="", urls=(
    ...     UrlFacts(url="http://10.0.0.5/a", blocked=True, reason="private address"),
    ...     UrlFacts(url="https://example.com/x", blocked=False, reason="", attempts=(
    ...         AttemptFacts(command="summarize", outcome="failed", reason="exit 2"),
    ...         AttemptFacts(command="fallback", outcome="success", reason=""),
    ...     )),
    ...     UrlFacts(url="http://10.0.0.5/b", blocked=True, reason="private address"),
    ... ))
    >>> [(failure.kind, failure.subject) for failure in run_failures(facts)]
    [('blocked-host', '10.0.0.5'), ('command-failed', 'summarize')]

Each failure appears once per run (the second blocked URL of the same host adds nothing):
a problem's count is the number of runs it touched.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# The attempt the links stage records for a URL the SSRF guard refused: the blocked host
# is already the failure, so that attempt is not a second one.
from enrichment.pipeline.links.decisions import SSRF_COMMAND

KINDS = {
    "run-error": "Run failed",
    "run-interrupted": "Run interrupted",
    "run-dead-letter": "Job given up (dead letter)",
    "blocked-host": "Host blocked",
    "command-failed": "CLI entry failed",
    "media-failed": "Media model failed",
    "file-failed": "File extraction failed",
}
MAX_SUBJECT = 300
RUN_FAILURE_OUTCOMES = {
    "error": "run-error",
    "interrupted": "run-interrupted",
    "dead-letter": "run-dead-letter",
}


@dataclass(frozen=True)
class AttemptFacts:
    command: str
    outcome: str
    reason: str = ""


@dataclass(frozen=True)
class UrlFacts:
    url: str
    blocked: bool
    reason: str = ""
    attempts: tuple[AttemptFacts, ...] = ()


@dataclass(frozen=True)
class RunFacts:
    """The parts of a recorded run that say what failed (nothing of its bodies)."""

    outcome: str
    error: str = ""
    urls: tuple[UrlFacts, ...] = ()
    media: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Failure:
    kind: str
    subject: str
    detail: str = field(default="", compare=False)  # one example reason, shown on the page

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.kind, self.subject)

    @property
    def title(self) -> str:
        return f"{KINDS.get(self.kind, self.kind)}: {self.subject}"


def fingerprint(kind: str, subject: str) -> str:
    """A 32-hex-digit digest of kind and subject (stable across processes and versions)."""
    return hashlib.sha256(f"{kind}\0{subject}".encode()).hexdigest()[:32]


def run_failures(facts: RunFacts) -> list[Failure]:
    """The distinct failures of one run, in the order they happened (run, URLs, media)."""
    found: list[Failure] = []
    kind = RUN_FAILURE_OUTCOMES.get(facts.outcome)
    if kind is not None:
        found.append(Failure(kind, normalized_reason(facts.error) or facts.outcome, facts.error))
    for url in facts.urls:
        if url.blocked:
            found.append(Failure("blocked-host", url_host(url.url), url.reason))
        for attempt in url.attempts:
            if attempt.outcome == "failed" and attempt.command != SSRF_COMMAND:
                subject = attempt.command or "(no command)"
                found.append(Failure("command-failed", subject, attempt.reason))
    for record in facts.media:
        found.extend(_media_failures(record))
    return _distinct(found)


def _media_failures(record: Mapping[str, Any]) -> list[Failure]:
    if not isinstance(record, Mapping):
        return []
    found = []
    capability = str(record.get("capability") or "media")
    for attachment in _dicts(record.get("attachments")):
        for attempt in _dicts(attachment.get("attempts")):
            if attempt.get("outcome") != "failed":
                continue
            argv = attempt.get("argv")
            who = attempt.get("provider") or (argv[0] if isinstance(argv, list) and argv else "")
            model = attempt.get("model")
            subject = " ".join(str(part) for part in (capability, who, model) if part)
            found.append(Failure("media-failed", subject, str(attempt.get("reason") or "")))
    for file in _dicts(record.get("files")):
        skipped = file.get("skipped")
        if isinstance(skipped, str) and _is_failure_code(skipped):
            code = skipped.partition(":")[0].strip()
            found.append(Failure("file-failed", code, skipped))
    return found


def _is_failure_code(reason: str) -> bool:
    code = reason.partition(":")[0].strip().lower()
    return code.endswith(("failed", "error", "timeout"))


def _dicts(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _distinct(failures: Sequence[Failure]) -> list[Failure]:
    seen: dict[str, Failure] = {}
    for failure in failures:
        clipped = Failure(failure.kind, failure.subject[:MAX_SUBJECT], failure.detail[:500])
        seen.setdefault(clipped.fingerprint, clipped)
    return list(seen.values())


def url_host(url: str) -> str:
    """The host of a URL, lower-case, as the overview's blocked-host table names it."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        host = None
    return host or "(unparseable URL)"


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_QUOTED = re.compile(r"'[^']{0,200}'|\"[^\"]{0,200}\"")
_SPACE = re.compile(r"\s+")


def normalized_reason(error: str) -> str:
    """The first line of an error with what varies between occurrences taken out.

    >>> normalized_reason("enrichment failed: timeout after 31.5 s fetching https://a.test/x?id=9")
    'enrichment failed: timeout after N.N s fetching <url>'
    >>> normalized_reason("KeyError('run-1234abcd9')")
    'KeyError(<text>)'
    """
    line = next((part for part in error.strip().splitlines() if part.strip()), "")
    line = _URL.sub("<url>", line)
    line = _QUOTED.sub("<text>", line)
    line = _HEX.sub("<id>", line)
    line = _NUMBER.sub("N", line)
    return _SPACE.sub(" ", line).strip()[:MAX_SUBJECT]
