"""Alert rules checked against the problems and runs, and their webhook deliveries.

``alerts_check`` is the one evaluator: ``manage.py check_alerts`` (cron) calls it, and so
does ``alerts_check_soon`` after runs are recorded — at most once per
``ALERT_CHECK_AFTER_RUNS_SECONDS`` per process, in a background thread, so a run never waits
for a webhook. A rule is claimed (its ``last_sent_at`` written, row locked) before it posts,
so two processes checking at once send one message.

Webhooks go through the SSRF guard (``pipeline.net.webhook``): public addresses only, unless
the host is listed in ``ALERT_WEBHOOK_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from enrichment.models import AlertDelivery, AlertRule, Problem, ProblemRun, Run
from enrichment.pipeline.net.http import FetchError
from enrichment.pipeline.net.ssrf import is_blocked_message
from enrichment.pipeline.net.webhook import PostAnswer, post_json_guarded
from enrichment.pipeline.problems.alerts import (
    Evaluation,
    alert_text,
    backoff_delays,
    failure_rate,
    is_retryable,
    new_problems,
    should_send,
    slack_payload,
    webhook_policy,
)

logger = logging.getLogger(__name__)

Poster = Callable[..., PostAnswer]


@dataclass(frozen=True)
class RuleCheck:
    rule: AlertRule
    evaluation: Evaluation
    delivery: AlertDelivery | None  # the message sent this time, if one was


def alerts_check(*, now: datetime | None = None, sleep: Callable[[float], None] = time.sleep
                 ) -> list[RuleCheck]:  # fmt: skip
    """Evaluate every enabled rule; post for those that start firing (or still fire after
    their cooldown) and record each delivery."""
    now = now or timezone.now()
    checks = []
    for rule_id in AlertRule.objects.filter(enabled=True).values_list("pk", flat=True):
        claimed = _claim(rule_id, now)
        if claimed is None:
            continue  # disabled or deleted meanwhile, or another process holds it
        rule, evaluation, text = claimed
        delivery = alert_deliver(rule=rule, text=text, sleep=sleep) if text else None
        checks.append(RuleCheck(rule, evaluation, delivery))
    return checks


def _claim(rule_id: int, now: datetime) -> tuple[AlertRule, Evaluation, str] | None:
    with transaction.atomic():
        rules = AlertRule.objects.select_for_update(
            skip_locked=connection.features.has_select_for_update_skip_locked
        )
        rule = rules.filter(pk=rule_id, enabled=True).first()
        if rule is None:
            return None
        evaluation, details = rule_evaluate(rule, now=now)
        send = should_send(
            firing=evaluation.firing,
            last_sent_at=rule.last_sent_at if rule.firing else None,
            now=now,
            cooldown=timedelta(minutes=rule.cooldown_minutes),
        )
        rule.firing = evaluation.firing
        rule.last_value = evaluation.value
        rule.last_checked_at = now
        if send:
            rule.last_sent_at = now
        rule.save(update_fields=["firing", "last_value", "last_checked_at", "last_sent_at"])
    text = ""
    if send:
        text = alert_text(rule_name=rule.name, window_minutes=rule.window_minutes,
                          evaluation=evaluation, details=details, link=_problems_link())  # fmt: skip
    return rule, evaluation, text


def rule_evaluate(rule: AlertRule, *, now: datetime) -> tuple[Evaluation, list[str]]:
    """The rule's measure over its window, and a few lines naming what failed."""
    since = now - timedelta(minutes=rule.window_minutes)
    if rule.kind == AlertRule.Kind.NEW_PROBLEMS:
        # Each new problem is announced once: not again by the next message of this rule.
        if rule.last_sent_at and rule.last_sent_at > since:
            since = rule.last_sent_at
        titles = list(
            Problem.objects.filter(first_seen__gte=since, first_seen__lte=now)
            .exclude(state=Problem.State.IGNORED)
            .order_by("-first_seen")
            .values_list("title", flat=True)[:100]
        )
        return new_problems(titles=titles, threshold=int(rule.threshold)), titles[:10]
    window = {"seen_at__gte": since, "seen_at__lte": now}
    counted = ProblemRun.objects.filter(**window).exclude(problem__state=Problem.State.IGNORED)
    failed = counted.values("run_id").distinct().count()
    total = (
        Run.objects.filter(created_at__gte=since, created_at__lte=now)
        .exclude(outcome=Run.Outcome.RUNNING)
        .count()
    )
    top = (
        counted.order_by()
        .values("problem__title")
        .annotate(runs=Count("id"))
        .order_by("-runs", "problem__title")[:5]
    )
    details = [f"{row['problem__title']} ({row['runs']} runs)" for row in top]
    return failure_rate(failed=failed, total=max(total, failed), threshold_percent=rule.threshold,
                        min_runs=rule.min_runs), details  # fmt: skip


def _problems_link() -> str:
    base = settings.ALERT_LINK_BASE_URL
    return f"{base}/problems/" if base else ""


def alert_deliver(
    *,
    rule: AlertRule,
    text: str,
    sleep: Callable[[float], None] = time.sleep,
    post: Poster = post_json_guarded,
) -> AlertDelivery:
    """POST ``{"text": text}`` to the rule's webhook, retrying with doubling waits on
    connection errors, 429 and 5xx; the delivery record says how it ended."""
    attempts = settings.ALERT_DELIVERY_ATTEMPTS
    delays = backoff_delays(attempts=attempts, base_seconds=settings.ALERT_RETRY_BASE_MS / 1000)
    started = time.monotonic()
    status, code, error, tries = AlertDelivery.Status.FAILED, None, "", 0
    for tries in range(1, attempts + 1):
        retry, code, error = _post_once(rule.webhook_url, text, post)
        if not error:
            status = AlertDelivery.Status.DELIVERED
            break
        if not retry or tries == attempts:
            break
        sleep(delays[tries - 1])
    if error:
        logger.warning("alert %r: delivery failed after %d tries: %s", rule.name, tries, error)
    return AlertDelivery.objects.create(
        rule=rule,
        status=status,
        attempts=tries,
        response_code=code,
        error=error[:2000],
        text=text,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _post_once(url: str, text: str, post: Poster) -> tuple[bool, int | None, str]:
    """(worth retrying, HTTP status, error) of one try; no error means delivered."""
    try:
        answer = post(
            url,
            slack_payload(text),
            policy=webhook_policy(settings.ALERT_WEBHOOK_ALLOWED_HOSTS),
            timeout_seconds=settings.ALERT_TIMEOUT_SECONDS,
        )
    except FetchError as exc:
        # A refusal by the SSRF guard or a malformed URL will be refused again.
        hopeless = is_blocked_message(exc.reason) or exc.reason.startswith("Invalid URL")
        return not hopeless, None, exc.reason
    if answer.ok:
        return False, answer.status, ""
    body = " ".join(answer.body.split())[:300]
    return is_retryable(answer.status), answer.status, f"HTTP {answer.status}: {body}".strip()


def alert_send_test(*, rule: AlertRule) -> AlertDelivery:
    """A test message through the rule's webhook (the admin's "send a test message")."""
    return alert_deliver(rule=rule, text=f"Control UI test message for alert rule {rule.name!r}")


# --- the check after runs are recorded ------------------------------------------------------
_throttle = threading.Lock()
_last_started = float("-inf")
_running: threading.Thread | None = None


def alerts_check_soon(*, interval: float | None = None, clock: Callable[[], float] = time.monotonic
                      ) -> threading.Thread | None:  # fmt: skip
    """Start ``alerts_check`` in a background thread, at most once per ``interval`` seconds
    in this process and never two at once; when no rule is enabled, nothing starts. The
    thread, when one started (tests join it)."""
    global _last_started, _running
    if interval is None:
        interval = settings.ALERT_CHECK_AFTER_RUNS_SECONDS
        if interval <= 0:  # off: only ``manage.py check_alerts`` checks
            return None
    with _throttle:
        now = clock()
        if (_running is not None and _running.is_alive()) or now - _last_started < interval:
            return None
        _last_started = now
        if not AlertRule.objects.filter(enabled=True).exists():
            return None
        _running = threading.Thread(target=_check_in_background, name="alerts-check", daemon=True)
        _running.start()
        return _running


def _check_in_background() -> None:
    try:
        alerts_check()
    except Exception:
        logger.exception("checking alert rules after runs failed")
    finally:
        connection.close()  # this thread's own connection


def alerts_check_reset() -> None:
    """Forget when the last background check started (tests)."""
    global _last_started
    with _throttle:
        _last_started = float("-inf")
