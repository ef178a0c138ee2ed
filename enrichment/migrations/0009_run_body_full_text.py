"""PostgreSQL full-text search for the history's ``q`` filter.

``enrichment_run.body_search`` is a stored generated ``tsvector`` of the two bodies (the
summaries are appended to the enriched one), ``simple`` configuration (no stemming, no stop
words, any language), of their first 100,000 characters (a tsvector holds at most 1 MB: a
longer body must still be storable). It is not a model field: Django never reads or writes
it, PostgreSQL keeps it current on every insert and update. A GIN index answers
``body_search @@ plainto_tsquery('simple', q)`` (``enrichment.selectors.text_search``): a rare
term is a few index pages instead of two trigram scans that read every run's "ref", "the" …
(p95 81 ms at 1M runs). Stored rather than an expression index, so that checking a row (a
walk of the history index for a common word, a recheck of a lossy bitmap page) reads the
vector instead of parsing the bodies again. The two trigram indexes on the upper-cased
bodies served the old ``icontains`` only and are dropped.

At 1M runs this migration rewrites the table (a few minutes) under an ACCESS EXCLUSIVE
lock: inserts wait meanwhile. A stored generated column cannot be added without that
rewrite; this migration is kept as it was (a database migrated past it must keep the same
column), and README "Upgrading" says how to deploy it. Its indexes build CONCURRENTLY. SQLite keeps its substring
search: nothing to do there.
"""

from django.db import migrations

from common.migrations import postgres_statements

POSTGRES_FORWARD = [
    "ALTER TABLE enrichment_run ADD COLUMN IF NOT EXISTS body_search tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,"
    " left(original_body || ' ' || enriched_body, 100000))) STORED",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS run_body_search ON enrichment_run USING gin (body_search)",
    "DROP INDEX CONCURRENTLY IF EXISTS run_original_body_upper_trgm",
    "DROP INDEX CONCURRENTLY IF EXISTS run_enriched_body_upper_trgm",
    "ANALYZE enrichment_run",
]
POSTGRES_BACKWARD = [
    "DROP INDEX CONCURRENTLY IF EXISTS run_body_search",
    "ALTER TABLE enrichment_run DROP COLUMN IF EXISTS body_search",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS run_original_body_upper_trgm"
    " ON enrichment_run USING gin (upper(original_body) gin_trgm_ops)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS run_enriched_body_upper_trgm"
    " ON enrichment_run USING gin (upper(enriched_body) gin_trgm_ops)",
]


class Migration(migrations.Migration):
    dependencies = [("enrichment", "0008_history_sorts_saved_views")]

    # The indexes build and drop CONCURRENTLY; the ADD COLUMN still rewrites the table under
    # an exclusive lock (README "Upgrading": the one migration that needs a quiet moment).
    atomic = False

    operations = [postgres_statements(POSTGRES_FORWARD, POSTGRES_BACKWARD)]
