"""PostgreSQL-only: trigram indexes the history text search (``q``) can actually use.

Django compiles ``icontains`` on PostgreSQL to ``UPPER(col::text) LIKE UPPER(%s)``, so the
trigram indexes on the raw body columns from 0002 were never chosen and a ``q`` search read
the whole table (EXPLAIN ANALYZE, 1M runs, a rare term: every row filtered, ~5 s). Indexing the
same ``upper(...)`` expression lets the planner use a bitmap scan for rare terms (tens of ms
instead of a 1M-row scan) and keep walking the history index for common ones; the raw-column
indexes had no other reader, so they go.
"""

from django.db import migrations

CREATE_UPPER = [
    "CREATE INDEX IF NOT EXISTS run_original_body_upper_trgm"
    " ON enrichment_run USING gin (upper(original_body) gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS run_enriched_body_upper_trgm"
    " ON enrichment_run USING gin (upper(enriched_body) gin_trgm_ops)",
    # Statistics on the new expressions: without them the planner guesses a common word
    # matches a few hundred runs, picks the trigram bitmap and sorts 300,000 rows (seconds);
    # with them it walks the history index and stops after one page.
    "ANALYZE enrichment_run",
]
DROP_UPPER = [
    "DROP INDEX IF EXISTS run_original_body_upper_trgm",
    "DROP INDEX IF EXISTS run_enriched_body_upper_trgm",
]
CREATE_RAW = [
    "CREATE INDEX IF NOT EXISTS run_original_body_trgm"
    " ON enrichment_run USING gin (original_body gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS run_enriched_body_trgm"
    " ON enrichment_run USING gin (enriched_body gin_trgm_ops)",
]
DROP_RAW = [
    "DROP INDEX IF EXISTS run_original_body_trgm",
    "DROP INDEX IF EXISTS run_enriched_body_trgm",
]


def on_postgres(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("enrichment", "0002_default_config_and_search_indexes")]

    operations = [
        migrations.RunPython(on_postgres(CREATE_UPPER), on_postgres(DROP_UPPER)),
        migrations.RunPython(on_postgres(DROP_RAW), on_postgres(CREATE_RAW)),
    ]
