"""Retention and redaction of the decision log: the writes.

What goes is decided by the pure core (``enrichment.pipeline.retention``); this module walks
the runs it names in small batches, oldest first, each batch its own short transaction:
a batch holds the row locks of a few hundred runs for milliseconds, and inserts of new runs
never wait for it (a DELETE takes no table lock that blocks INSERT). The child rows of a
removed run (its URL decisions and their attempts) go in the same transaction; nothing
else is touched (problems keep their own counts and history: no row of theirs refers to a
run by foreign key).

With partitioned storage on PostgreSQL (``manage.py partition_runs``) a pass first creates
the months ahead, then drops whole every month whose runs have all expired (its partitions,
with its URL decisions and attempts: the month leaves the log in one short transaction, then
its files are removed on several connections at once, ``partition_drops``), and removes what
else is due row by row as above.

``retention_pass`` is the periodic job: ``manage.py prune_runs`` runs it (cron), and a task
engine can schedule the same function.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from enrichment.models import Attempt, RetentionPass, Run, UrlDecision
from enrichment.pipeline.retention.partitions import MonthPartition, droppable, outside
from enrichment.pipeline.retention.policy import (
    Cut,
    RetentionPolicy,
    redact_content,
    redaction_before,
    retention_cuts,
)
from enrichment.selectors.records import decision_record
from enrichment.services import partition_drops, partitions

# Called after each batch: (what, done so far, total due when the pass began).
Progress = Callable[[str, int, int], None]


@dataclass
class PassReport:
    removed: int = 0
    redacted: int = 0
    due_removal: int = 0
    due_redaction: int = 0
    exported_to: Path | None = None
    cuts: list[Cut] = field(default_factory=list)
    # Months dropped whole (partitioned storage): their partition names (``p2026_09``).
    dropped_months: list[str] = field(default_factory=list)


def _ignore(_what: str, _done: int, _total: int) -> None:
    return None


def retention_pass(
    *,
    policy: RetentionPolicy | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
    batch_size: int | None = None,
    export_dir: Path | None = None,
    progress: Progress = _ignore,
) -> PassReport:
    """Remove the expired runs, then redact the content of the kept ones past
    ``redact_after_days``; record the pass (``RetentionPass``). ``dry_run`` counts and
    changes nothing (and records nothing)."""
    policy = policy if policy is not None else settings.RETENTION
    now = now or timezone.now()
    batch_size = batch_size or settings.RETENTION_BATCH_SIZE
    if export_dir is None and settings.RETENTION_EXPORT_DIR:
        export_dir = Path(settings.RETENTION_EXPORT_DIR)
    report = PassReport(cuts=retention_cuts(policy, Run.Outcome.values, now))
    # Months dropped whole (partitioned storage) are counted one partition each; the rest
    # with a query that skips those partitions (counting a month's million runs twice
    # would double the cost of a pass).
    due_months = months_due(policy, now) if partitions.is_partitioned() else []
    month_runs = [partitions.month_runs(month) for month in due_months]
    elsewhere = _within(outside(due_months))
    report.due_removal = sum(month_runs) + sum(
        _expired(cut).filter(elsewhere).count() for cut in report.cuts
    )
    before = redaction_before(policy, now)
    if before is not None:
        report.due_redaction = _unredacted(before).count()
    if dry_run:
        report.dropped_months = [month.name for month in due_months]
        return report
    record = RetentionPass.objects.create(started_at=now, policy=policy.describe())
    export = _Export(export_dir) if export_dir is not None else None
    try:
        try:
            detached: list[str] = []
            if partitions.is_partitioned():
                # months a pass before detached but did not finish dropping go first
                partition_drops.expired_tables_drop()
                partitions.partitions_ensure(now=now)
                report.removed, report.dropped_months, detached = months_detach(
                    list(zip(due_months, month_runs, strict=True)),
                    batch_size=batch_size,
                    export=export,
                    progress=lambda done: progress("removed", done, report.due_removal),
                )
            # the detached months' files are removed on other connections meanwhile; the
            # block ends when they are gone
            with partition_drops.dropping(detached):
                report.removed += runs_remove(
                    cuts=report.cuts,
                    batch_size=batch_size,
                    export=export,
                    progress=lambda done: progress(
                        "removed", report.removed + done, report.due_removal
                    ),
                )
        finally:
            report.exported_to = export.close() if export is not None else None
        if before is not None:
            report.redacted = runs_redact(
                policy=policy,
                before=before,
                now=now,
                batch_size=batch_size,
                progress=lambda done: progress("redacted", done, report.due_redaction),
            )
    except Exception as exc:
        _record_finish(record, report, error=f"{type(exc).__name__}: {exc}"[:2000])
        raise
    _record_finish(record, report)
    return report


def _record_finish(record: RetentionPass, report: PassReport, error: str = "") -> None:
    record.finished_at = timezone.now()
    record.removed = report.removed
    record.redacted = report.redacted
    record.exported_to = str(report.exported_to or "")
    record.error = error
    record.save(update_fields=["finished_at", "removed", "redacted", "exported_to", "error"])


def _expired(cut: Cut):  # type: ignore[no-untyped-def]
    return Run.objects.filter(outcome=cut.outcome, created_at__lt=cut.before)


def _within(ranges: list[tuple[datetime | None, datetime | None]]) -> Q:
    """Runs created in any of these ``[start, end)`` ranges (``None``: unbounded)."""
    found = Q(pk__in=[])
    for start, end in ranges:
        if start is None and end is None:
            return Q()  # all of time (an empty Q would vanish from an OR)
        bounds = {"created_at__gte": start} if start is not None else {}
        if end is not None:
            bounds["created_at__lt"] = end
        found |= Q(**bounds)
    return found


def _unredacted(before: datetime):  # type: ignore[no-untyped-def]
    return Run.objects.filter(redacted_at__isnull=True, created_at__lt=before).exclude(
        outcome=Run.Outcome.RUNNING
    )


@dataclass(frozen=True)
class _Batch:
    """Ids of runs and the span of their creation times: with the span in the WHERE
    clause, partitioned storage reads the batch's months only, not every month's index."""

    ids: list[int]
    first: datetime
    last: datetime

    @property
    def span(self) -> tuple[datetime, datetime]:
        return self.first, self.last

    def runs(self):  # type: ignore[no-untyped-def]
        return Run.objects.filter(id__in=self.ids, created_at__range=self.span)

    def delete(self) -> int:
        """DELETE the runs (their URL decisions and attempts gone already) in one statement
        with the time span: Django's ``delete()`` would collect them and delete by id
        alone."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {connection.ops.quote_name(Run._meta.db_table)}"
                f" WHERE id IN ({', '.join(['%s'] * len(self.ids))})"
                " AND created_at BETWEEN %s AND %s",
                [*self.ids, *map(connection.ops.adapt_datetimefield_value, self.span)],
            )
            return int(cursor.rowcount)


def _batches(queryset, batch_size: int) -> Iterator[_Batch]:  # type: ignore[no-untyped-def]
    """The oldest matching runs, a batch at a time, until none match. The caller removes or
    changes each batch so that it no longer matches.

    Each batch starts at the previous batch's last creation time: the index entries of the
    runs already removed (or redacted) stay in the index until a VACUUM, and a walk from
    the oldest end would step over all of them again for every batch (quadratic at
    millions of runs)."""
    since, previous = None, None
    while True:
        page = queryset if since is None else queryset.filter(created_at__gte=since)
        rows = list(page.order_by("created_at", "id").values_list("id", "created_at")[:batch_size])
        if not rows:
            return
        if rows == previous:  # the caller changed nothing: stop rather than loop for ever
            raise RuntimeError(f"runs {rows[0][0]}..{rows[-1][0]} still match after their batch")
        since, previous = rows[-1][1], rows
        yield _Batch([run_id for run_id, _created_at in rows], rows[0][1], rows[-1][1])


def months_due(policy: RetentionPolicy, now: datetime) -> list[MonthPartition]:
    """The months (partitioned storage) whose runs have all expired and that hold no run of
    an outcome kept forever (the expired runs of a month that does go row by row)."""
    due = droppable(partitions.partition_status().months, policy, Run.Outcome.values, now)
    return [month for month in due.months if not partitions.month_holds(month, due.kept_outcomes)]


def months_detach(
    months: list[tuple[MonthPartition, int]],
    *,
    batch_size: int,
    export: _Export | None = None,
    progress: Callable[[int], None] = lambda _done: None,
) -> tuple[int, list[str], list[str]]:
    """Take whole these months out of the log (partitioned storage; ``months_due``, each
    with its runs counted); each month's runs are exported first when ``export`` is given.
    Returns the runs removed, the months and their tables, for
    ``partition_drops.dropping`` to drop."""
    removed, dropped, tables = 0, [], []
    for month, count in months:
        if export is not None:
            for ids in partitions.month_run_ids(month, batch_size):
                export.write(ids)
        tables += partition_drops.month_detach(month)
        removed += count
        dropped.append(month.name)
        progress(removed)
    return removed, dropped, tables


def runs_remove(
    *,
    cuts: list[Cut],
    batch_size: int,
    export: _Export | None = None,
    progress: Callable[[int], None] = lambda _done: None,
) -> int:
    """Remove the runs of every cut with their URL decisions and attempts, a batch per
    transaction. With ``export``, each batch is first appended to the pass's gzip JSON-lines
    file (a run whose removal then fails is exported again by the next pass)."""
    removed = 0
    for cut in cuts:
        for batch in _batches(_expired(cut), batch_size):
            ids = batch.ids
            if export is not None:
                export.write(ids)
            with transaction.atomic():
                Attempt.objects.filter(url_decision__run_id__in=ids).delete()
                UrlDecision.objects.filter(run_id__in=ids).delete()
                removed += batch.delete()
            progress(removed)
    return removed


class _Export:
    """``runs-removed-<time>.jsonl.gz``: one run's API record (``GET /api/decisions/{id}``)
    per line. Written as ``.partial`` and renamed when the pass ends."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S-%f")
        self.path = directory / f"runs-removed-{stamp}.jsonl.gz"
        self.partial = self.path.with_name(self.path.name + ".partial")
        # Open across the batches of a pass (closed by ``close``, in runs_remove's finally).
        self.file = gzip.open(self.partial, "wt", encoding="utf-8")  # noqa: SIM115
        self.lines = 0

    def write(self, ids: list[int]) -> None:
        runs = Run.objects.filter(id__in=ids).order_by("created_at", "id")
        for run in runs.prefetch_related("url_decisions__attempts"):
            self.file.write(json.dumps(decision_record(run), default=str) + "\n")
            self.lines += 1
        self.file.flush()

    def close(self) -> Path | None:
        self.file.close()
        if not self.lines:
            self.partial.unlink()
            return None
        self.partial.rename(self.path)
        return self.path


def runs_redact(
    *,
    policy: RetentionPolicy,
    before: datetime,
    now: datetime,
    batch_size: int,
    progress: Callable[[int], None] = lambda _done: None,
) -> int:
    """Drop or mask the chat content of finished runs created before ``before``: the bodies
    (PostgreSQL's full-text column follows them: redacted text is no longer found), the URL
    summaries, the text in media and stage records, the CLI stderr tails. Outcomes, URLs and
    their verdicts, reasons, timings and exit codes stay. ``redacted_at`` says when."""
    redacted = 0
    for batch in _batches(_unredacted(before), batch_size):
        ids = batch.ids
        with transaction.atomic():
            runs = list(
                batch.runs()
                .filter(redacted_at__isnull=True)
                .select_for_update()
                .only("id", "media", "stage_records")
            )
            for run in runs:
                run.media = redact_content(run.media, policy)
                run.stage_records = redact_content(run.stage_records, policy)
            batch.runs().bulk_update(runs, ["media", "stage_records"])
            batch.runs().update(
                original_body=_redacted("original_body", policy),
                enriched_body=_redacted("enriched_body", policy),
                redacted_at=now,
            )
            UrlDecision.objects.filter(run_id__in=ids).update(summary=_redacted("summary", policy))
            Attempt.objects.filter(url_decision__run_id__in=ids).update(
                stderr_tail=_redacted("stderr_tail", policy)
            )
        redacted += len(ids)
        progress(redacted)
    return redacted


def _redacted(column: str, policy: RetentionPolicy) -> Case:
    """Empty text stays empty (nothing was there to redact); any other becomes the
    policy's replacement."""
    return Case(When(**{column: ""}, then=Value("")), default=Value(policy.redacted_text("x")))
