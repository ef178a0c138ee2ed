"""PostgreSQL: the decision log stored in monthly partitions (``manage.py partition_runs``).

The first test switches this worker's test database while it holds runs and while another
session keeps inserting; the others need partitioned storage (switched as a deployment would
when run alone) and date their runs from the first monthly partition on. The switch is for
good: .ci/run runs this module in a pytest process of its own, and the rest of the suite has
a pass of its own on partitioned storage (CONTROLUI_TEST_STORAGE=partitioned), where this
module is skipped (its prune drops whole months, the current one there).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from enrichment.models import Attempt, RetentionPass, Run, UrlDecision
from enrichment.pipeline.retention.partitions import add_months, month_name, month_start
from enrichment.pipeline.retention.policy import RetentionPolicy
from enrichment.services import partition_drops, partitions
from enrichment.services.retention import retention_pass
from enrichment.services.runs import run_fail
from tests.enrichment.lock_probe import LockProbe
from tests.enrichment.services.test_retention_postgres import SEED, database_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL)"),
    pytest.mark.skipif(
        os.environ.get("CONTROLUI_TEST_STORAGE") == "partitioned",
        reason="runs in a process of its own (.ci/run)",
    ),
]

LEGACY_RUNS = 3_000


def where(table: str, row_id: int) -> str:
    """The partition holding a row."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT tableoid::regclass::text FROM {table} WHERE id = %s", [row_id])
        return cursor.fetchone()[0]


def exists(table: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [table])
        return cursor.fetchone()[0]


def run_with_link(created_at: datetime, *, outcome: str = "success", word: str = "") -> Run:
    run = Run.objects.create(
        created_at=created_at,
        outcome=outcome,
        channel="slack",
        original_body=f"see https://example.com/{word} about {word}",
        url_count=1,
    )
    decision = UrlDecision.objects.create(
        run=run, position=0, url=f"https://example.com/{word}", summary=f"a page on {word}"
    )
    Attempt.objects.create(url_decision=decision, position=0, command="summarize", outcome="ok")
    return run


@pytest.fixture
def months() -> tuple[datetime, datetime]:
    """Partitioned storage: its first monthly partition and the one after (a month dropped
    by an earlier test is gone: the first is then a later one)."""
    if not partitions.is_partitioned():
        partitions.partitioned_storage_switch()
    first = partitions.partition_status().months[0].start
    return first, add_months(first, 1)


def seed_month(count: int, created_at: datetime) -> None:
    """``count`` runs at ``created_at``, each with one URL decision and one attempt."""
    with connection.cursor() as cursor:
        cursor.execute(MONTH_SEED, [created_at, count, created_at, created_at])


MONTH_SEED = """
WITH runs AS (
  INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,
    agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,
    media, owner, stage_records, job)
  SELECT %s, 'seeded', 'slack', 'direct', 'agent:main:' || (n %% 50), '',
    'see https://example.com/' || n, '', 'success', '', 1, '{}', '[]', '', '{}', ''
  FROM generate_series(1, %s) AS n RETURNING id
), decisions AS (
  INSERT INTO enrichment_urldecision (run_id, run_created_at, position, url, blocked, reason,
    addresses, summary)
  SELECT id, %s, 0, 'https://example.com/', false, '', '[]', 'a page' FROM runs RETURNING id
)
INSERT INTO enrichment_attempt (url_decision_id, run_created_at, position, type, command, argv,
  outcome, reason, stderr_tail)
SELECT id, %s, 0, 'cli', 'summarize', '[]', 'ok', '', '' FROM decisions
"""


def test_the_switch_keeps_every_run_and_never_blocks_an_insert(monkeypatch) -> None:
    assert not partitions.is_partitioned(), "this module must run first in its process"
    with connection.cursor() as cursor:
        cursor.execute(SEED, [LEGACY_RUNS])
    before = run_with_link(timezone.now() - timedelta(hours=1), word="sourdough")
    # a first month the stored runs are not all older than: refused, and nothing changed
    too_early = add_months(month_start(timezone.now()), -1)
    with pytest.raises(CommandError, match="holds rows from .* the first month must be later"):
        call_command("partition_runs", "--first-month", f"{too_early:%Y-%m}")
    assert not partitions.is_partitioned()
    Run.objects.create(outcome="success")  # new rows are not refused by a check left behind
    # a switch that stops half way (killed after the runs' table switched, before its
    # indexes and the child tables): prune passes refuse with the reason, running it again
    # finishes it
    real_lift = partitions._indexes_lift

    def killed(table: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(partitions, "_indexes_lift", killed)
    with pytest.raises(KeyboardInterrupt):
        call_command("partition_runs", stdout=io.StringIO())
    assert partitions.is_partitioned("enrichment_run")
    assert not partitions.is_partitioned("enrichment_urldecision")
    with pytest.raises(partitions.PartitionError, match="stopped half way: run manage.py"):
        retention_pass(policy=RetentionPolicy(days=30))
    monkeypatch.setattr(partitions, "_indexes_lift", real_lift)
    with LockProbe(database_url(), lock_timeout_ms=100) as probe:
        call_command("partition_runs", stdout=io.StringIO())
    assert probe.blocked == [] and probe.errors == [] and probe.inserted > 0
    assert partitions.is_partitioned() and all(
        partitions.is_partitioned(table) for table, _ in partitions.TABLES
    )
    # every row is still there, in the partition of the runs stored before the switch
    assert Run.objects.exclude(message_id="probe").count() == LEGACY_RUNS + 2
    assert UrlDecision.objects.count() == Attempt.objects.count() == LEGACY_RUNS + 1
    assert where("enrichment_run", before.pk) == "enrichment_run_legacy"
    decision = before.url_decisions.get()
    assert [a.command for a in decision.attempts.all()] == ["summarize"]
    # the months ahead exist: a run of next month is stored in its partition, ids go on
    boundary = partitions.partition_status().months[0].start
    assert boundary == add_months(month_start(timezone.now()), 1) or boundary == add_months(
        month_start(timezone.now()), 2
    )
    later = run_with_link(boundary + timedelta(days=3), word="rye")
    assert later.pk > Run.objects.exclude(pk=later.pk).order_by("-pk")[0].pk
    assert where("enrichment_run", later.pk) == f"enrichment_run_{month_name(boundary)}"
    assert where("enrichment_urldecision", later.url_decisions.get().pk).endswith(
        month_name(boundary)
    )
    # the old table's indexes were attached, not rebuilt: same names on the partitioned table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relkind FROM pg_class WHERE relname IN ('run_history', 'run_body_search')"
        )
        assert sorted(kind for (kind,) in cursor.fetchall()) == ["I", "I"]  # partitioned
    # running it again changes nothing
    assert len(partitions.partitioned_storage_switch().months) == len(
        partitions.partition_status().months
    )


def test_history_pages_search_and_detail_read_across_partitions(staff_client, months) -> None:
    first, next_month = months
    legacy = run_with_link(first - timedelta(days=40), word="barley", outcome="error")
    current = run_with_link(first + timedelta(hours=2), word="spelt")
    ahead = run_with_link(next_month + timedelta(days=1), word="emmer")
    assert {where("enrichment_run", r.pk) for r in (legacy, current, ahead)} == {
        "enrichment_run_legacy",
        f"enrichment_run_{month_name(first)}",
        f"enrichment_run_{month_name(next_month)}",
    }
    seen, cursor = [], None
    while True:  # keyset paging, one run a page, across the partitions
        query = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        page = staff_client.get("/api/decisions", query).json()
        seen += [item["runId"] for item in page["items"]]
        if not (cursor := page["nextCursor"]):
            break
    assert seen == [ahead.pk, current.pk, legacy.pk]
    for word, run in (("barley", legacy), ("spelt", current), ("emmer", ahead)):
        found = staff_client.get("/api/decisions", {"q": word}).json()["items"]
        assert [item["runId"] for item in found] == [run.pk]
    errors = staff_client.get("/api/decisions", {"outcome": "error"}).json()["items"]
    assert [item["runId"] for item in errors] == [legacy.pk]
    detail = staff_client.get(f"/api/decisions/{ahead.pk}").json()
    assert detail["links"]["urls"][0]["url"] == "https://example.com/emmer"
    html = staff_client.get("/decisions/", {"url": "example.com/spelt"}).content.decode()
    assert f"/decisions/{current.pk}/" in html and f"/decisions/{ahead.pk}/" not in html


def test_a_prune_drops_expired_months_whole_and_the_rest_row_by_row(tmp_path, months) -> None:
    first, next_month = months
    old = [run_with_link(first + timedelta(days=d), word=f"old{d}") for d in (1, 2, 3)]
    # a URL decision stored without the run's time lives in the default partition; it must
    # go with its run all the same
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO enrichment_urldecision (run_id, position, url, blocked, reason,"
            " addresses, summary) VALUES (%s, 1, 'https://raw.example/', false, '', '[]', '')"
            " RETURNING id",
            [old[0].pk],
        )
        raw_decision = cursor.fetchone()[0]
    assert where("enrichment_urldecision", raw_decision) == "enrichment_urldecision_legacy"
    expired_next = run_with_link(next_month + timedelta(days=2), word="expired")
    kept = run_with_link(next_month + timedelta(days=20), word="kept")
    legacy_old = run_with_link(first - timedelta(days=50), word="legacy")
    now = next_month + timedelta(days=40)  # 30 days: cut at next month + 10 days
    planned = retention_pass(policy=RetentionPolicy(days=30), now=now, dry_run=True)
    # the month's runs counted once (its partition), the rest in every other partition
    assert (planned.dropped_months, planned.due_removal) == ([month_name(first)], 5)
    done = []
    report = retention_pass(
        policy=RetentionPolicy(days=30),
        now=now,
        batch_size=100,
        export_dir=tmp_path,
        progress=lambda what, count, total: done.append((what, count, total)),
    )
    assert report.dropped_months == [month_name(first)]
    assert report.removed == report.due_removal == 5  # 3 in the dropped month, 2 row by row
    assert done[0] == ("removed", 3, 5) and done[-1] == ("removed", 5, 5)
    for table, _column in partitions.TABLES:
        assert not exists(f"{table}_{month_name(first)}")
        assert exists(f"{table}_{month_name(next_month)}")
        # the months ahead of the pass's "now" were created
        assert exists(f"{table}_{month_name(add_months(month_start(now), 3))}")
    assert list(Run.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not UrlDecision.objects.filter(pk=raw_decision).exists()
    assert UrlDecision.objects.count() == Attempt.objects.count() == 1
    (export,) = tmp_path.glob("*.jsonl.gz")
    exported = [json.loads(line) for line in gzip.decompress(export.read_bytes()).splitlines()]
    assert sorted(run["runId"] for run in exported) == sorted(
        r.pk for r in (*old, expired_next, legacy_old)
    )
    assert RetentionPass.objects.get().removed == 5


def test_a_month_holding_a_run_in_progress_is_not_dropped(months) -> None:
    first, next_month = months
    running = Run.objects.create(created_at=first + timedelta(days=1), outcome="running")
    done = run_with_link(first + timedelta(days=2), word="done")
    report = retention_pass(policy=RetentionPolicy(days=30), now=next_month + timedelta(days=40))
    assert report.dropped_months == []
    assert exists(f"enrichment_run_{month_name(first)}")
    assert list(Run.objects.values_list("pk", flat=True)) == [running.pk]
    assert not Run.objects.filter(pk=done.pk).exists()


def test_dropping_a_month_never_blocks_an_insert(months) -> None:
    first, _next = months
    seed_month(2_000, first + timedelta(hours=1))
    seeded = Run.objects.filter(message_id="seeded").first()
    assert where("enrichment_run", seeded.pk) == f"enrichment_run_{month_name(first)}"
    assert where("enrichment_attempt", Attempt.objects.first().pk).endswith(month_name(first))
    now = add_months(first, 2) + timedelta(days=5)  # cut: first month + 1 month + 6 days
    writes_to = add_months(first, 2) + timedelta(days=1)  # a month the pass keeps
    with LockProbe(database_url(), lock_timeout_ms=100, created_at=writes_to) as probe:
        report = retention_pass(policy=RetentionPolicy(days=30), now=now, batch_size=500)
    assert report.dropped_months == [month_name(first)]
    assert report.removed == 2_000
    assert probe.blocked == [] and probe.errors == [] and probe.inserted > 0
    assert Run.objects.count() == probe.inserted
    assert UrlDecision.objects.count() == Attempt.objects.count() == 0


def month_relations(month: str) -> list[int]:
    """The oids of a month's three tables, their indexes, TOAST tables and TOAST indexes."""
    names = [f"{table}_{month}" for table, _column in partitions.TABLES]
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH t AS (SELECT oid, reltoastrelid FROM pg_class WHERE relname = ANY(%s)),"
            " r AS (SELECT oid FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0)"
            " SELECT oid FROM r UNION SELECT indexrelid FROM pg_index WHERE indrelid IN"
            " (SELECT oid FROM r)",
            [names],
        )
        return [oid for (oid,) in cursor.fetchall()]


def relations_left(oids: list[int]) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_class WHERE oid = ANY(%s::oid[])", [oids])
        return cursor.fetchone()[0]


def test_a_dropped_month_leaves_no_relation_and_its_files_go_on_several_connections(
    months, monkeypatch
) -> None:
    first, _next = months
    seed_month(3_000, first + timedelta(hours=1))
    oids = month_relations(month_name(first))
    assert len(oids) >= 30  # 3 tables, their indexes, TOAST
    backends: list[tuple[int, tuple[str, ...]]] = []
    step_run = partition_drops._step_run

    def recorded(step, done):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append((cursor.fetchone()[0], step.indexes))
        step_run(step, done)

    monkeypatch.setattr(partition_drops, "_step_run", recorded)
    # a month of 3,000 runs is split as a month of a million is (it would go whole)
    monkeypatch.setattr(partition_drops, "SPLIT_FROM", 0)
    now = add_months(first, 2) + timedelta(days=5)
    with LockProbe(database_url(), lock_timeout_ms=100, created_at=now) as probe:
        report = retention_pass(policy=RetentionPolicy(days=30), now=now)
    assert report.dropped_months == [month_name(first)] and report.removed == 3_000
    assert relations_left(oids) == 0
    # the runs' indexes went in transactions of their own, beside the tables' drops
    assert any(indexes for _pid, indexes in backends)
    assert len({pid for pid, _indexes in backends}) > 1
    assert probe.blocked == [] and probe.errors == [] and probe.inserted > 0


def test_a_month_left_half_dropped_is_out_of_the_log_and_the_next_pass_drops_it(
    months, monkeypatch
) -> None:
    first, _next = months
    seed_month(500, first + timedelta(hours=1))
    month = month_name(first)
    oids = month_relations(month)
    step_run = partition_drops._step_run

    def failing(step, done):
        if step.table == f"enrichment_run_{month}_expired" and not step.indexes:
            raise RuntimeError("the connection went away")
        step_run(step, done)

    monkeypatch.setattr(partition_drops, "_step_run", failing)
    now = add_months(first, 2) + timedelta(days=5)
    with pytest.raises(partitions.PartitionError, match="the next pass drops what is left"):
        retention_pass(policy=RetentionPolicy(days=30), now=now)
    assert "the connection went away" in RetentionPass.objects.get().error
    # the month left the log whole: no run of it, and no child row outliving its run
    assert exists(f"enrichment_run_{month}_expired") and not exists(f"enrichment_run_{month}")
    assert Run.objects.count() == UrlDecision.objects.count() == Attempt.objects.count() == 0
    assert month not in [m.name for m in partitions.partition_status().months]
    monkeypatch.setattr(partition_drops, "_step_run", step_run)
    report = retention_pass(policy=RetentionPolicy(days=30), now=now)
    assert report.dropped_months == [] and relations_left(oids) == 0
    assert not exists(f"enrichment_run_{month}_expired")


def test_only_the_months_detached_by_a_pass_are_dropped_as_leftovers(months) -> None:
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE enrichment_run_p2020_01_archive (id bigint)")
        cursor.execute("CREATE TABLE enrichment_problem_p2020_01_expired (id bigint)")
        cursor.execute("CREATE TABLE enrichment_attempt_p2020_01_expired (id bigint)")
    try:
        assert partition_drops.expired_tables_drop() == ["enrichment_attempt_p2020_01_expired"]
        assert exists("enrichment_run_p2020_01_archive")
        assert exists("enrichment_problem_p2020_01_expired")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE enrichment_run_p2020_01_archive")
            cursor.execute("DROP TABLE enrichment_problem_p2020_01_expired")


def test_health_and_overview_say_how_the_log_is_stored(staff_client, months) -> None:
    first, _next_month = months
    retention = staff_client.get("/api/health").json()["retention"]
    assert retention["partitioned"] is True
    until = datetime.fromisoformat(retention["partitionsUntil"].replace("Z", "+00:00"))
    assert until >= add_months(month_start(timezone.now()), 4)
    assert retention["partitionsRunningOut"] is False
    html = staff_client.get("/").content.decode()
    assert "monthly partitions" in html and month_name(first) in html
    status = partitions.partition_status()
    assert status.running_out(status.until - timedelta(days=3))
    assert not status.running_out(status.until - timedelta(days=30))


def index_state(name: str) -> tuple[bool, int] | None:
    """(valid, partitions' indexes attached) of a partitioned index; None when absent."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid, (SELECT count(*) FROM pg_inherits WHERE inhparent = c.oid)"
            " FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s",
            [name],
        )
        return cursor.fetchone()


def test_index_migrations_build_partition_by_partition_without_a_long_lock(months) -> None:
    """CREATE INDEX CONCURRENTLY does not exist for a partitioned table: the project's
    operations build each partition's index concurrently and attach it, under a writer."""
    from django.db import models
    from django.db.migrations.loader import MigrationLoader

    from common.migrations import AddIndexWithoutLock, RemoveIndexWithoutLock

    first, _next = months
    seed_month(500, first + timedelta(hours=1))
    before = MigrationLoader(connection).project_state()
    partition_count = len(partitions._partitions("enrichment_run"))
    add = AddIndexWithoutLock(
        "run", models.Index(fields=["agent_id", "-created_at"], name="run_agent_probe")
    )
    remove = RemoveIndexWithoutLock("run", "run_url_count")
    added = before.clone()
    add.state_forwards("enrichment", added)
    removed = before.clone()
    remove.state_forwards("enrichment", removed)
    with LockProbe(database_url(), lock_timeout_ms=100, created_at=first) as probe:
        with connection.schema_editor(atomic=False) as editor:
            add.database_forwards("enrichment", editor, before, added)
        assert index_state("run_agent_probe") == (True, partition_count)
        with connection.schema_editor(atomic=False) as editor:
            remove.database_forwards("enrichment", editor, before, removed)
        assert index_state("run_url_count") is None
        with connection.schema_editor(atomic=False) as editor:  # back again
            remove.database_backwards("enrichment", editor, removed, before)
            add.database_backwards("enrichment", editor, added, before)
    assert index_state("run_url_count") == (True, partition_count)
    assert index_state("run_agent_probe") is None
    assert probe.blocked == [] and probe.errors == [] and probe.inserted > 0


@contextmanager
def reader_holding_the_runs(seconds: float) -> Iterator[None]:
    """Another session in a transaction that read the runs (a long report query): dropping
    a partition must wait for it, and must not queue every insert behind itself meanwhile."""
    import psycopg

    ready = threading.Event()

    def hold() -> None:
        with psycopg.connect(database_url()) as other:
            other.execute("SELECT count(*) FROM enrichment_run")
            ready.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    ready.wait(timeout=10)
    try:
        yield
    finally:
        thread.join()


def test_a_month_drop_waits_for_a_long_reader_in_short_tries(months) -> None:
    first, _next = months
    seed_month(100, first + timedelta(hours=1))
    now = add_months(first, 2) + timedelta(days=5)
    with (
        reader_holding_the_runs(1.0),
        LockProbe(database_url(), lock_timeout_ms=100, created_at=now) as probe,
    ):
        report = retention_pass(policy=RetentionPolicy(days=30), now=now)
    assert report.dropped_months == [month_name(first)] and report.removed == 100
    assert probe.blocked == [] and probe.errors == [] and probe.inserted > 0


def test_a_reader_that_never_lets_go_fails_the_pass_with_a_reason(months, monkeypatch) -> None:
    first, _next = months
    seed_month(100, first + timedelta(hours=1))
    monkeypatch.setattr(partitions, "LOCK_RETRIES", 3)
    now = add_months(first, 2) + timedelta(days=5)
    with reader_holding_the_runs(2.0), pytest.raises(partitions.PartitionError) as refused:
        retention_pass(policy=RetentionPolicy(days=30), now=now)
    assert "a lock on the decision log was not granted within 50 ms in 3 tries" in str(
        refused.value
    )
    assert exists(f"enrichment_run_{month_name(first)}")
    assert Run.objects.count() == 100  # nothing removed, nothing half done
    assert "not granted" in RetentionPass.objects.get().error


@contextmanager
def session_locking(table: str) -> Iterator[None]:
    """Another session holding ``table`` exclusively (a month being dropped, a long
    maintenance step on it) until the block ends."""
    import psycopg

    with psycopg.connect(database_url()) as other:
        other.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield
        other.rollback()


def test_a_run_is_closed_while_another_month_is_held(months) -> None:
    """Closing a run writes the run's own month only: a lock held on another month's
    partition does not hold it up (by id alone the UPDATE would wait on every month)."""
    first, _next = months
    run = Run.objects.create(outcome=Run.Outcome.RUNNING, channel="slack", original_body="hi")
    assert where("enrichment_run", run.pk) != f"enrichment_run_{month_name(first)}"
    with session_locking(f"enrichment_run_{month_name(first)}"):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '500ms'")
        try:
            run_fail(run=run, error="the model went away", duration_ms=7)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    stored = Run.objects.get(pk=run.pk)
    assert (stored.outcome, stored.error, stored.duration_ms) == ("error", "the model went away", 7)
    assert stored.finished_at is not None


def test_a_first_month_for_a_log_partitioned_already_is_refused(months) -> None:
    before = partitions.partition_status()
    later = add_months(before.months[-1].start, 6)
    with pytest.raises(CommandError, match="partitioned already: its first month stays"):
        call_command("partition_runs", "--first-month", f"{later:%Y-%m}")
    assert partitions.partition_status() == before


def test_row_by_row_removal_and_redaction_touch_their_months_only(months) -> None:
    """A month not yet expired whole is pruned and redacted row by row while another session
    holds a later month: each batch names its time span, so neither waits for it."""
    first, _next = months
    later = f"enrichment_run_{month_name(add_months(first, 2))}"
    partitions.partitions_ensure(now=first)
    assert exists(later)
    expired = run_with_link(first + timedelta(days=1), word="expired")
    aging = run_with_link(first + timedelta(days=25), word="aging")
    now = first + timedelta(days=41)  # cut at first + 11 days; redaction before + 34 days
    with session_locking(later):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '500ms'")
        try:
            report = retention_pass(
                policy=RetentionPolicy(days=30, redact_after_days=7), now=now, batch_size=10
            )
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    assert (report.dropped_months, report.removed, report.redacted) == ([], 1, 1)
    assert not Run.objects.filter(pk=expired.pk).exists()
    kept = Run.objects.get(pk=aging.pk)
    assert kept.original_body == "" and kept.redacted_at == now
    assert UrlDecision.objects.get(run=kept).summary == ""
