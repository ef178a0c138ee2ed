"""The values a dry run compares: a recorded run as the decision log keeps it
(``RecordedRun``), and a decision in the terms a dry run can predict (``RunDecision``, one
``UrlVerdict`` per URL). ``evaluate`` builds them; ``report`` counts and shows them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from enrichment.pipeline.templates import MessageContext


@dataclass(frozen=True)
class RecordedUrl:
    url: str
    blocked: bool
    reason: str | None
    addresses: tuple[str, ...]
    argvs: tuple[tuple[str, ...], ...]  # CLI attempts in order (the SSRF pseudo-attempt left out)
    succeeded: bool  # the fallback chain ended with a success
    summary: str = ""
    source: str | None = None  # command of the successful attempt


@dataclass(frozen=True)
class RecordedRun:
    run_id: int
    outcome: str
    matched_rule: int | None
    channel: str = ""
    chat_type: str = ""
    session_key: str = ""
    agent_id: str = ""
    message_id: str = ""
    link_text: str = ""
    urls: tuple[RecordedUrl, ...] = ()
    media: tuple[tuple[str, str], ...] = ()  # (capability, outcome) of each media decision
    # What decided its scope under the config it ran with (``ScopeSource.text``); "" unknown.
    scope_source: str = ""

    def context(self) -> MessageContext:
        return MessageContext(
            body=self.link_text,
            channel=self.channel or None,
            chat_type=self.chat_type or None,
            session_key=self.session_key or None,
            message_sid=self.message_id or None,
            agent_id=self.agent_id or None,
        )


@dataclass(frozen=True)
class UrlVerdict:
    url: str
    blocked: bool | None  # None: unknown (no recorded DNS answer)
    reason: str | None
    argvs: tuple[tuple[str, ...], ...]
    succeeded: bool = False  # recorded side only: the chain stopped at a success

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "blocked": self.blocked,
            "reason": self.reason,
            "argv": [list(argv) for argv in self.argvs],
        }


@dataclass(frozen=True)
class RunDecision:
    gate: str
    matched_rule: int | None
    urls: tuple[UrlVerdict, ...] = ()
    media: tuple[tuple[str, str], ...] = ()
    scope_source: str = ""  # ``ScopeSource.text``: "global rule 1 (deny)"; "" when unknown

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.gate,
            "matchedRule": self.matched_rule,
            "ruleNumber": None if self.matched_rule is None else self.matched_rule + 1,
            "scopeSource": self.scope_source,
            "urls": [url.to_dict() for url in self.urls],
            "media": [{"capability": c, "outcome": o} for c, o in self.media],
        }
