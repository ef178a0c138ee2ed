"""Alert rules as pure decisions: is a rule firing, should it send, and what it says.

A rule watches a window (the last N minutes) for one of two things:

- ``failure-rate``: the share of finished runs that had a failure is above the threshold
  (a percentage), once at least ``min_runs`` runs finished in the window (3 failures in 4
  runs is noise, not an outage);
- ``new-problems``: at least ``threshold`` problems were first seen in the window.

A firing rule sends when it starts firing, then again only after ``cooldown`` while it keeps
firing, so a long outage is one message per cooldown, not one per check.

    >>> evaluation = failure_rate(failed=30, total=120, threshold_percent=20, min_runs=10)
    >>> evaluation.firing, evaluation.value
    (True, 25.0)
    >>> should_send(firing=True, last_sent_at=None, now=datetime(2026, 1, 1),
    ...             cooldown=timedelta(minutes=30))
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from enrichment.pipeline.net.ssrf import SsrfPolicy, check_url

FAILURE_RATE = "failure-rate"
NEW_PROBLEMS = "new-problems"
RULE_KINDS = (FAILURE_RATE, NEW_PROBLEMS)
# Slack (and most chat webhooks) cut messages far beyond this; we keep them readable.
MAX_TEXT = 3000


@dataclass(frozen=True)
class Evaluation:
    firing: bool
    value: float  # the failure rate in percent, or the number of new problems
    summary: str  # one line for people: what was measured against what


def failure_rate(*, failed: int, total: int, threshold_percent: float, min_runs: int) -> Evaluation:
    rate = round(100 * failed / total, 1) if total else 0.0
    firing = total >= max(min_runs, 1) and rate > threshold_percent
    summary = f"{failed} of {total} runs failed ({rate:g}%, threshold {threshold_percent:g}%)"
    if total < min_runs:
        summary += f"; fewer than {min_runs} runs, not judged"
    return Evaluation(firing, rate, summary)


def new_problems(*, titles: Sequence[str], threshold: int) -> Evaluation:
    count = len(titles)
    firing = count >= max(threshold, 1)
    summary = f"{count} new problem{'s' if count != 1 else ''} (threshold {max(threshold, 1)})"
    return Evaluation(firing, float(count), summary)


def should_send(
    *, firing: bool, last_sent_at: datetime | None, now: datetime, cooldown: timedelta
) -> bool:
    """Send when firing and nothing was sent within the cooldown."""
    return firing and (last_sent_at is None or now - last_sent_at >= cooldown)


def alert_text(
    *,
    rule_name: str,
    window_minutes: int,
    evaluation: Evaluation,
    details: Sequence[str] = (),
    link: str = "",
) -> str:
    """The message (plain text, Slack mrkdwn-safe: ``<``, ``>`` and ``&`` are escaped)."""
    lines = [f"Control UI alert: {rule_name}", f"Last {window_minutes} min: {evaluation.summary}"]
    lines += [f"• {detail}" for detail in details[:10]]
    if link:
        lines.append(link)
    text = "\n".join(_slack_escape(line) for line in lines)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _slack_escape(text: str) -> str:
    # Slack reads <...> as links and mentions (<!channel>): text from runs must not ping.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_payload(text: str) -> dict[str, str]:
    return {"text": text}


def backoff_delays(*, attempts: int, base_seconds: float, cap_seconds: float = 60.0) -> list[float]:
    """The waits between ``attempts`` tries: base, 2×base, 4×base … each at most ``cap``.

    >>> backoff_delays(attempts=4, base_seconds=0.5)
    [0.5, 1.0, 2.0]
    """
    return [min(base_seconds * 2**index, cap_seconds) for index in range(max(attempts - 1, 0))]


def is_retryable(status: int | None) -> bool:
    """A connection failure (no status), 429 or a 5xx is worth another try; other 4xx are not
    (the URL or the payload is wrong, and will be wrong again)."""
    return status is None or status == 429 or status >= 500


def webhook_policy(allowed_hosts: Sequence[str]) -> SsrfPolicy:
    """The SSRF policy of webhook deliveries: the default (public addresses only), plus the
    hosts an operator listed in ``ALERT_WEBHOOK_ALLOWED_HOSTS`` (an intranet chat server, or
    127.0.0.1 in tests), which may then resolve to private addresses. Cloud metadata stays
    blocked whatever is listed."""
    return SsrfPolicy(allowed_hostnames=tuple(allowed_hosts))


def webhook_url_error(url: str, *, allowed_hosts: Sequence[str] = ()) -> str | None:
    """Why ``url`` cannot be a webhook, judged from its text (no DNS: deliveries check the
    resolved addresses again, at connection), or None when it can be.

    >>> webhook_url_error("http://169.254.169.254/latest")
    'the SSRF guard refuses this host: cloud metadata address 169.254.169.254'
    >>> webhook_url_error("https://hooks.slack.com/services/T0/B0/x") is None
    True
    """
    text = url.strip()
    if not text:
        return "enter a webhook URL"
    if len(text) > MAX_URL:
        return f"the URL is too long (limit {MAX_URL} characters)"
    verdict = check_url(text, webhook_policy(allowed_hosts))
    if verdict.blocked:
        if verdict.host is None:
            return f"not an http(s) URL ({verdict.reason})"
        return f"the SSRF guard refuses this host: {verdict.reason}"
    return None


MAX_URL = 2000
