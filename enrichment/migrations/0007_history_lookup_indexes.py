"""PostgreSQL indexes for the history's case-insensitive channel and session-key "contains".

``channel__iexact`` compiles to ``UPPER(channel::text) = UPPER(%s)``: an index on that
expression keeps the filter an index scan (newest first) instead of a table scan at 1M
runs. ``session_key__icontains`` is ``UPPER(session_key) LIKE UPPER(…)``, served by a trigram index for
fragments of three characters or more (shorter ones are refused by the filter).
"""

from django.db import migrations

from common.migrations import postgres_statements

POSTGRES_INDEXES = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS run_channel_upper_history"
    " ON enrichment_run (upper(channel::text), created_at DESC, id DESC)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS run_session_key_trgm"
    " ON enrichment_run USING gin (upper(session_key::text) gin_trgm_ops)",
    "ANALYZE enrichment_run",
]
POSTGRES_DROP = [
    "DROP INDEX CONCURRENTLY IF EXISTS run_channel_upper_history",
    "DROP INDEX CONCURRENTLY IF EXISTS run_session_key_trgm",
]



class Migration(migrations.Migration):
    dependencies = [("enrichment", "0006_config_versions")]

    # CONCURRENTLY: inserts go on while the indexes build (README "Upgrading").
    atomic = False

    operations = [postgres_statements(POSTGRES_INDEXES, POSTGRES_DROP)]
