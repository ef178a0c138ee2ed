"""One line that says why a link attempt or URL did not give a result.

An attempt record keeps the runner's reason (``exited with code 1``) and the tail of the
CLI's stderr, where the real cause usually is (``HTTP 404 Not Found``). People should not
have to open the tail to learn it, so the page shows one line built from both:

    >>> attempt_cause("failed", "exited with code 1", 1, "fetching…\\nerror: HTTP 404 Not Found\\n")
    'HTTP 404 Not Found (exit code 1)'
    >>> attempt_cause("failed", "timed out after 30s", None, "")
    'timeout: timed out after 30s'
    >>> attempt_cause("failed", "exited with code 2", 2, "socket.gaierror: Name or service not known")
    'DNS failure: the host does not resolve (exit code 2)'
    >>> attempt_cause("failed", "exited with code 3", 3, "boom: upstream said no")
    'exit code 3: boom: upstream said no'

"Blocked" is kept for refusals by the SSRF policy. A host that does not resolve was not
refused by anyone: it is a DNS failure, a category of its own (``url_verdict``).
"""

from __future__ import annotations

import re
from typing import Literal

from enrichment.pipeline.net.ssrf import UNRESOLVED

UrlVerdictKind = Literal["allowed", "blocked", "dns-failure"]

LINE_LIMIT = 160
_HTTP_STATUS = re.compile(
    r"\bHTTP(?:/\d(?:\.\d)?)?[ :]+(?P<code>[1-5]\d\d)\b(?P<text>[ \t]+[A-Z][A-Za-z' -]{1,40})?"
)
_DNS_SIGNS = (
    UNRESOLVED,
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname",
    "getaddrinfo failed",
    "no address associated with hostname",
    "could not resolve host",
)


def url_verdict(blocked: bool | None, reason: str | None) -> UrlVerdictKind:
    """``blocked`` only for a policy refusal; an unresolvable host is a DNS failure."""
    if not blocked:
        return "allowed"
    if (reason or "").strip().lower() == UNRESOLVED:
        return "dns-failure"
    return "blocked"


def is_dns_failure(text: str) -> bool:
    lowered = text.lower()
    return any(sign in lowered for sign in _DNS_SIGNS)


def last_line(text: str) -> str:
    """The last non-blank line, cut to ``LINE_LIMIT`` characters."""
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        if stripped:
            return stripped if len(stripped) <= LINE_LIMIT else stripped[: LINE_LIMIT - 1] + "…"
    return ""


def attempt_cause(outcome: str, reason: str, exit_code: int | None, stderr_tail: str) -> str:
    """The one-line cause of a failed attempt ("" for a success)."""
    if outcome == "success":
        return ""
    reason = (reason or "").strip()
    stderr_tail = stderr_tail or ""
    exit_note = f" (exit code {exit_code})" if exit_code is not None else ""
    if reason.startswith("timed out"):
        return f"timeout: {reason}"
    if reason.lower().startswith(("blocked", "resolves to")):
        return f"blocked by the SSRF policy: {reason}"
    if is_dns_failure(reason) or is_dns_failure(stderr_tail):
        return f"DNS failure: the host does not resolve{exit_note}"
    status = _HTTP_STATUS.search(stderr_tail) or _HTTP_STATUS.search(reason)
    if status is not None:
        text = (status.group("text") or "").strip()
        return f"HTTP {status.group('code')}{' ' + text if text else ''}{exit_note}"
    tail = last_line(stderr_tail)
    if exit_code is not None:
        return f"exit code {exit_code}: {tail}" if tail else f"exit code {exit_code}"
    if reason and tail and tail not in reason:
        return f"{reason}: {tail}"
    return reason or tail or outcome
