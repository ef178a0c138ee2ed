"""The derived statuses (attempts failed, fallback succeeded, DNS failure) stored on the run,
so the history filters any mix of them on ``enrichment_run`` alone (before: OR'd EXISTS over
the attempts, ~0.5 s at 200,000 runs on PostgreSQL).

Deploys without locks (README "Deploying a release"): the columns come with a database
default (no table rewrite), the runs already stored are filled in batches of their own
transaction each, and the index builds CONCURRENTLY on PostgreSQL."""

from django.db import migrations, models
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from common.migrations import AddIndexWithoutLock

BATCH = 5000
# As written by the links stage when this migration was made (frozen here on purpose).
SSRF_COMMAND = "ssrf"
UNRESOLVED = "hostname does not resolve"


def fill_stored_runs(apps, schema_editor):
    Run = apps.get_model("enrichment", "Run")
    UrlDecision = apps.get_model("enrichment", "UrlDecision")
    Attempt = apps.get_model("enrichment", "Attempt")
    database = schema_editor.connection.alias

    def attempts(outcome):
        rows = Attempt.objects.using(database).filter(
            url_decision__run=OuterRef("pk"), outcome=outcome
        )
        return Q(Exists(rows.exclude(command=SSRF_COMMAND)))

    failed, succeeded = attempts("failed"), attempts("success")
    unresolved = Q(
        Exists(
            UrlDecision.objects.using(database).filter(
                run=OuterRef("pk"), blocked=True, reason=UNRESOLVED
            )
        )
    )
    with_urls = Exists(UrlDecision.objects.using(database).filter(run=OuterRef("pk")))
    runs = Run.objects.using(database)
    last = runs.order_by("-id").values_list("id", flat=True).first() or 0
    for low in range(0, last + 1, BATCH):
        runs.filter(with_urls, id__gte=low, id__lt=low + BATCH).update(
            attempts_failed=ExpressionWrapper(failed & ~succeeded, output_field=BooleanField()),
            fallback_used=ExpressionWrapper(failed & succeeded, output_field=BooleanField()),
            dns_failed=ExpressionWrapper(unresolved, output_field=BooleanField()),
        )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("enrichment", "0015_problems_and_alerts"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="attempts_failed",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="CLI attempts failed and no URL got a result.",
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="dns_failed",
            field=models.BooleanField(
                db_default=False, default=False, help_text="A link's host did not resolve."
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="fallback_used",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="An attempt failed; a later CLI entry of the chain succeeded.",
            ),
        ),
        migrations.RunPython(fill_stored_runs, migrations.RunPython.noop, elidable=True),
        *(
            AddIndexWithoutLock(
                model_name="run",
                index=models.Index(
                    condition=models.Q((flag, True)),
                    fields=["-created_at", "-id"],
                    include=("outcome", "channel", "chat_type"),
                    name=f"run_{flag}_history",
                ),
            )
            for flag in ("attempts_failed", "fallback_used", "dns_failed")
        ),
    ]
