"""PostgreSQL: a prune pass removes thousands of runs in batches while another session keeps
inserting runs with a 200 ms lock_timeout; no insert waits that long."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.retention.policy import RetentionPolicy
from enrichment.services.retention import retention_pass
from tests.enrichment.lock_probe import LockProbe

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL)"),
]

OLD_RUNS = 6_000

SEED = """
WITH runs AS (
  INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,
    agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,
    media, owner, stage_records, job)
  SELECT now() - interval '60 days' - make_interval(secs => n), '', 'slack', 'direct',
    'agent:main:' || (n %% 50), '', 'see https://example.com/' || n, '', 'success', '', 1,
    '{}', '[]', '', '{}', ''
  FROM generate_series(1, %s) AS n RETURNING id
), decisions AS (
  INSERT INTO enrichment_urldecision (run_id, position, url, blocked, reason, addresses,
    summary)
  SELECT id, 0, 'https://example.com/', false, '', '[]', 'a page' FROM runs RETURNING id
)
INSERT INTO enrichment_attempt (url_decision_id, position, type, command, argv, outcome,
  reason, stderr_tail)
SELECT id, 0, 'cli', 'summarize', '[]', 'ok', '', '' FROM decisions
"""


def database_url() -> str:
    settings = connection.settings_dict
    user = settings["USER"] or "postgres"
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or 5432
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return f"postgres://{user}{password}@{host}:{port}/{settings['NAME']}"


def test_a_prune_under_a_concurrent_writer_never_blocks_an_insert() -> None:
    with connection.cursor() as cursor:
        cursor.execute(SEED, [OLD_RUNS])
    young = Run.objects.create(created_at=timezone.now() - timedelta(days=1), outcome="error")
    with LockProbe(database_url(), lock_timeout_ms=200) as probe:
        report = retention_pass(policy=RetentionPolicy(days=30), batch_size=500)
    assert report.removed == OLD_RUNS
    assert probe.blocked == [] and probe.errors == []
    assert probe.inserted > 0
    assert Run.objects.filter(message_id="probe").count() == probe.inserted
    assert Run.objects.exclude(message_id="probe").get() == young
    assert UrlDecision.objects.count() == 0 and Attempt.objects.count() == 0
