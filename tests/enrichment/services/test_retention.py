"""Retention passes: expired runs leave with their child rows, in batches; the rest stays."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from enrichment.models import Attempt, RetentionPass, Run, UrlDecision
from enrichment.pipeline.retention.policy import RetentionPolicy
from enrichment.services.retention import retention_pass

pytestmark = pytest.mark.django_db
NOW = timezone.now()


def make_run(days_ago: float, outcome: str = "success", **fields: Any) -> Run:
    run = Run.objects.create(
        created_at=NOW - timedelta(days=days_ago),
        outcome=outcome,
        original_body=f"check https://example.com/{days_ago}",
        enriched_body=f"check https://example.com/{days_ago}\n[Link] a page about bread",
        session_key="agent:main:one",
        url_count=1,
        **fields,
    )
    decision = UrlDecision.objects.create(
        run=run, position=0, url=f"https://example.com/{days_ago}", summary="a page about bread"
    )
    Attempt.objects.create(
        url_decision=decision,
        position=0,
        command="summarize",
        outcome="ok" if outcome == "success" else "failed",
        reason="" if outcome == "success" else "exit 2",
        duration_ms=120,
        stderr_tail="page text echoed",
    )
    return run


def test_expired_runs_leave_with_their_url_decisions_and_attempts() -> None:
    old = [make_run(40), make_run(35)]
    young = make_run(10)
    report = retention_pass(policy=RetentionPolicy(days=30), now=NOW)
    assert report.removed == 2
    assert list(Run.objects.values_list("id", flat=True)) == [young.pk]
    assert not UrlDecision.objects.filter(run_id__in=[run.pk for run in old]).exists()
    assert Attempt.objects.count() == 1 and UrlDecision.objects.count() == 1


def test_failures_can_be_kept_longer_and_running_runs_stay() -> None:
    error = make_run(60, outcome="error")
    success = make_run(60)
    running = make_run(400, outcome="running")
    retention_pass(policy=RetentionPolicy(days=30, days_by_outcome={"error": 90}), now=NOW)
    assert set(Run.objects.values_list("id", flat=True)) == {error.pk, running.pk}
    assert not Run.objects.filter(pk=success.pk).exists()


def test_small_batches_remove_everything_due(settings) -> None:
    for day in range(31, 38):
        make_run(day)
    seen: list[tuple[str, int, int]] = []
    report = retention_pass(
        policy=RetentionPolicy(days=30),
        now=NOW,
        batch_size=2,
        progress=lambda what, done, total: seen.append((what, done, total)),
    )
    assert report.removed == 7 and Run.objects.count() == 0
    assert seen == [("removed", n, 7) for n in (2, 4, 6, 7)]


def test_a_dry_run_counts_and_changes_nothing() -> None:
    make_run(40)
    make_run(1)
    report = retention_pass(
        policy=RetentionPolicy(days=30, redact_after_days=0), now=NOW, dry_run=True
    )
    assert (report.due_removal, report.due_redaction) == (1, 2)
    assert report.removed == 0 and Run.objects.count() == 2
    assert not Run.objects.filter(redacted_at__isnull=False).exists()
    assert not RetentionPass.objects.exists()


def test_each_pass_is_recorded() -> None:
    make_run(40)
    retention_pass(policy=RetentionPolicy(days=30), now=NOW)
    record = RetentionPass.objects.get()
    assert (record.removed, record.redacted, record.error) == (1, 0, "")
    assert record.policy == "keep 30 days" and record.finished_at is not None


def test_removed_runs_are_exported_first_as_gzip_json_lines(tmp_path: Path) -> None:
    old = make_run(40, outcome="error")
    make_run(1)
    report = retention_pass(policy=RetentionPolicy(days=30), now=NOW, export_dir=tmp_path)
    assert report.exported_to is not None and report.exported_to.parent == tmp_path
    assert report.exported_to.name.endswith(".jsonl.gz")
    with gzip.open(report.exported_to, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    assert [record["runId"] for record in records] == [old.pk]
    assert records[0]["originalBody"] == old.original_body
    assert records[0]["outcome"] == "error"
    assert records[0]["links"]["urls"][0]["url"] == "https://example.com/40"
    assert list(tmp_path.iterdir()) == [report.exported_to]  # no .partial left
    assert RetentionPass.objects.get().exported_to == str(report.exported_to)


def test_nothing_due_writes_no_export_file(tmp_path: Path) -> None:
    make_run(1)
    report = retention_pass(policy=RetentionPolicy(days=30), now=NOW, export_dir=tmp_path)
    assert report.exported_to is None and list(tmp_path.iterdir()) == []


def test_the_command_says_what_a_dry_run_would_do(settings) -> None:
    settings.RETENTION = RetentionPolicy(days=30, days_by_outcome={"error": 90})
    make_run(40)
    out = StringIO()
    call_command("prune_runs", "--dry-run", stdout=out)
    text = out.getvalue()
    assert "Policy: keep 30 days; error: 90 days" in text
    assert "Dry run: would remove 1 runs and redact 0; nothing changed." in text
    assert Run.objects.count() == 1


def test_the_command_prunes(settings, tmp_path: Path) -> None:
    settings.RETENTION = RetentionPolicy(days=30)
    settings.RETENTION_EXPORT_DIR = str(tmp_path)
    make_run(40)
    out = StringIO()
    call_command("prune_runs", "--batch-size", "1", stdout=out)
    assert "Removed 1 runs, redacted 0" in out.getvalue()
    assert "Exported the removed runs to " + str(tmp_path) in out.getvalue()
    assert Run.objects.count() == 0


def test_the_command_refuses_a_zero_batch(settings) -> None:
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command("prune_runs", "--batch-size", "0", stderr=err)
    assert "--batch-size: must be at least 1" in err.getvalue()


def test_the_export_reads_a_batch_in_a_constant_number_of_queries(tmp_path: Path) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries_for(count: int) -> int:
        Run.objects.all().delete()
        for day in range(count):
            make_run(40 + day)
        with CaptureQueriesContext(connection) as captured:
            retention_pass(policy=RetentionPolicy(days=30), now=NOW, export_dir=tmp_path)
        assert Run.objects.count() == 0
        return len(captured.captured_queries)

    assert queries_for(2) == queries_for(8)
