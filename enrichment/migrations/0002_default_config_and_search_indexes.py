"""Install the default config, and PostgreSQL-only indexes for substring/prefix filters."""

from django.db import migrations

DEFAULT_ARGS = ["--url", "{{LinkUrl}}", "--format", "markdown"]

# Django compiles ``icontains`` on PostgreSQL to ``UPPER(col::text) LIKE UPPER(%s)``, so the
# body indexes are on ``upper(...)`` (EXPLAIN ANALYZE at 1M runs: a rare term went from a
# ~5 s table scan to a bitmap scan of tens of ms). ``url__contains`` is a plain LIKE.
POSTGRES_INDEXES = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS run_session_key_prefix"
    " ON enrichment_run (session_key varchar_pattern_ops, created_at DESC)",
    "CREATE INDEX IF NOT EXISTS run_original_body_upper_trgm"
    " ON enrichment_run USING gin (upper(original_body) gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS run_enriched_body_upper_trgm"
    " ON enrichment_run USING gin (upper(enriched_body) gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS urldecision_url_trgm"
    " ON enrichment_urldecision USING gin (url gin_trgm_ops)",
    # Statistics on the expressions: without them the planner guesses a common word matches
    # a few hundred runs, picks the trigram bitmap and sorts 300,000 rows instead of walking
    # the history index for one page.
    "ANALYZE enrichment_run",
]
POSTGRES_DROP = [
    "DROP INDEX IF EXISTS run_session_key_prefix",
    "DROP INDEX IF EXISTS run_original_body_upper_trgm",
    "DROP INDEX IF EXISTS run_enriched_body_upper_trgm",
    "DROP INDEX IF EXISTS urldecision_url_trgm",
]


def install_default_config(apps, schema_editor):
    EnrichmentConfig = apps.get_model("enrichment", "EnrichmentConfig")
    LinkModel = apps.get_model("enrichment", "LinkModel")
    if EnrichmentConfig.objects.filter(is_active=True).exists():
        return
    config = EnrichmentConfig.objects.create(name="default", is_active=True)
    LinkModel.objects.create(
        config=config, position=0, command="link-understand", args=DEFAULT_ARGS
    )


def postgres_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_INDEXES:
            schema_editor.execute(statement)


def drop_postgres_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_DROP:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("enrichment", "0001_initial")]

    operations = [
        migrations.RunPython(install_default_config, migrations.RunPython.noop),
        migrations.RunPython(postgres_indexes, drop_postgres_indexes),
    ]
