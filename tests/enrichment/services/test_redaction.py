"""Redaction: a run's chat content goes, its decisions stay, and every view says so."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from enrichment import selectors
from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.retention.policy import MASK, RetentionPolicy
from enrichment.selectors import HistoryFilters
from enrichment.services.retention import retention_pass
from tests.enrichment.test_api import streamed

pytestmark = pytest.mark.django_db
NOW = timezone.now()
SECRET = "zanzibarquokka"

MEDIA = [
    {
        "capability": "audio",
        "outcome": "success",
        "attachments": [
            {
                "attachmentIndex": 0,
                "attempts": [
                    {
                        "type": "cli",
                        "outcome": "failed",
                        "reason": "exit 2",
                        "durationMs": 31,
                        "stderrTail": f"could not hear {SECRET}",
                    },
                ],
            }
        ],
        "outputs": [{"kind": "audio.transcription", "text": f"they said {SECRET}"}],
    }
]


def make_run(days_ago: float, outcome: str = "success") -> Run:
    run = Run.objects.create(
        created_at=NOW - timedelta(days=days_ago),
        outcome=outcome,
        original_body=f"my {SECRET} recipe https://example.com/bread",
        enriched_body=f"my {SECRET} recipe https://example.com/bread\n[Link] {SECRET} page",
        url_count=2,
        duration_ms=350,
        media=MEDIA,
        stage_records={"notes": {"text": SECRET, "kind": "note"}},
    )
    kept = UrlDecision.objects.create(
        run=run, position=0, url="https://example.com/bread", summary=f"{SECRET} page"
    )
    UrlDecision.objects.create(
        run=run, position=1, url="http://10.0.0.1/", blocked=True, reason="private address"
    )
    Attempt.objects.create(
        url_decision=kept,
        position=0,
        command="summarize",
        outcome="failed",
        reason="exit 3",
        exit_code=3,
        duration_ms=40,
        stderr_tail=f"{SECRET} in stderr",
    )
    return run


def redact(days: int = 7, mode: str = "drop") -> int:
    policy = RetentionPolicy(redact_after_days=days, redact_mode=mode)
    return retention_pass(policy=policy, now=NOW).redacted


def everything_stored(run: Run) -> str:
    run.refresh_from_db()
    rows = [
        run.original_body,
        run.enriched_body,
        run.media,
        run.stage_records,
        list(run.url_decisions.values()),
        list(Attempt.objects.filter(url_decision__run=run).values()),
    ]
    return json.dumps(rows, default=str)


def test_old_runs_lose_their_content_and_keep_their_decisions() -> None:
    old = make_run(10, outcome="error")
    young = make_run(1)
    assert redact(days=7) == 1
    assert SECRET not in everything_stored(old)
    assert SECRET in everything_stored(young) and young.redacted_at is None
    old.refresh_from_db()
    assert old.redacted_at == NOW
    assert (old.original_body, old.enriched_body) == ("", "")
    assert (old.outcome, old.url_count, old.duration_ms) == ("error", 2, 350)
    decisions = list(old.url_decisions.order_by("position").values("url", "blocked", "reason"))
    assert decisions == [
        {"url": "https://example.com/bread", "blocked": False, "reason": ""},
        {"url": "http://10.0.0.1/", "blocked": True, "reason": "private address"},
    ]
    attempt = Attempt.objects.get(url_decision__run=old)
    assert (attempt.outcome, attempt.reason, attempt.exit_code, attempt.duration_ms) == (
        "failed",
        "exit 3",
        3,
        40,
    )
    media_attempt = old.media[0]["attachments"][0]["attempts"][0]
    assert media_attempt == {
        "type": "cli",
        "outcome": "failed",
        "reason": "exit 2",
        "durationMs": 31,
        "stderrTail": "",
    }
    assert old.stage_records == {"notes": {"text": "", "kind": "note"}}


def test_zero_days_redacts_every_finished_run_at_once_but_not_a_running_one() -> None:
    done = make_run(0.001)
    running = make_run(0.001, outcome="running")
    assert redact(days=0) == 1
    assert SECRET not in everything_stored(done)
    assert SECRET in everything_stored(running)


def test_mask_mode_leaves_a_marker() -> None:
    run = make_run(10)
    redact(mode="mask")
    run.refresh_from_db()
    assert run.original_body == MASK and run.enriched_body == MASK
    assert UrlDecision.objects.get(run=run, position=0).summary == MASK
    assert UrlDecision.objects.get(run=run, position=1).summary == ""  # nothing was there


def test_a_second_pass_finds_nothing_left_to_redact() -> None:
    make_run(10)
    assert redact() == 1
    assert redact() == 0


def test_text_search_no_longer_finds_redacted_text() -> None:
    old = make_run(10)
    young = make_run(1)
    filters = HistoryFilters.from_params({"q": SECRET})
    before = [run.pk for run in selectors.decision_list(filters=filters).items]
    assert sorted(before) == sorted([old.pk, young.pk])
    redact()
    after = [run.pk for run in selectors.decision_list(filters=filters).items]
    assert after == [young.pk]
    # The URL filter reads the decisions, which stay.
    by_url = HistoryFilters.from_params({"url": "example.com/bread"})
    assert old.pk in [run.pk for run in selectors.decision_list(filters=by_url).items]


def test_the_run_page_says_what_was_redacted_and_when(user_client) -> None:
    run = make_run(10)
    redact()
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert 'id="redacted"' in html and 'id="body-redacted"' in html
    assert NOW.strftime("%Y-%m-%d %H:%M") + " UTC" in html
    assert "message body, enriched body, link summaries" in html
    assert SECRET not in html
    assert "https://example.com/bread" in html  # the decisions are still shown
    fresh = make_run(1)
    html = user_client.get(f"/decisions/{fresh.pk}/").content.decode()
    assert 'id="redacted"' not in html and SECRET in html


def test_the_api_and_exports_say_when_a_run_was_redacted(user_client) -> None:
    run = make_run(10)
    fresh = make_run(1)
    redact()
    detail = user_client.get(f"/api/decisions/{run.pk}").json()
    assert detail["redactedAt"] is not None and detail["redacted"][:2] == [
        "message body",
        "enriched body",
    ]
    assert SECRET not in json.dumps(detail)
    assert user_client.get(f"/api/decisions/{fresh.pk}").json()["redacted"] == []
    items = {item["runId"]: item for item in user_client.get("/api/decisions").json()["items"]}
    assert items[run.pk]["redactedAt"] is not None and items[fresh.pk]["redactedAt"] is None
    response = user_client.get("/api/decisions/export?format=csv")
    rows = {int(row["runId"]): row for row in csv.DictReader(io.StringIO(streamed(response)))}
    assert rows[run.pk]["redactedAt"] and not rows[fresh.pk]["redactedAt"]
