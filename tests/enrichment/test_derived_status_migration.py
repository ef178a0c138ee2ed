"""Migration 0016 stores the derived statuses of the runs already in the log, so the history's
status filters find the runs recorded before the release."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from enrichment.services.partitions import is_partitioned

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("enrichment", "0015_problems_and_alerts")
AFTER = ("enrichment", "0016_derived_statuses_stored")


def migrate(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.fixture
def before_release() -> Iterator[object]:
    if is_partitioned():
        # the child tables are partitioned by run_created_at (0018): no way back past it
        pytest.skip("partitioned storage cannot migrate back past 0018")
    apps = migrate(BEFORE)
    yield apps
    migrate(("enrichment", executor_leaf()))


def executor_leaf() -> str:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes("enrichment")[0][1]


def test_runs_stored_before_the_release_get_their_statuses(before_release) -> None:
    Run = before_release.get_model("enrichment", "Run")
    UrlDecision = before_release.get_model("enrichment", "UrlDecision")
    Attempt = before_release.get_model("enrichment", "Attempt")

    def run(*attempts: str, blocked: str = "") -> int:
        stored = Run.objects.create(outcome="skipped")
        row = UrlDecision.objects.create(
            run=stored,
            position=0,
            url="https://example.com/",
            blocked=bool(blocked),
            reason=blocked,
        )
        for position, outcome in enumerate(attempts):
            command = "ssrf" if blocked else f"cli-{position}"
            Attempt.objects.create(
                url_decision=row, position=position, command=command, outcome=outcome
            )
        return stored.pk

    failed = run("failed", "failed")
    fallback = run("failed", "success")
    dns = run("skipped", blocked="hostname does not resolve")
    policy = run("skipped", blocked="resolves to private address 10.0.0.7")
    plain = run("success")
    bare = Run.objects.create(outcome="no-links").pk

    after = migrate(AFTER).get_model("enrichment", "Run")
    flags = {
        row["pk"]: (row["attempts_failed"], row["fallback_used"], row["dns_failed"])
        for row in after.objects.values("pk", "attempts_failed", "fallback_used", "dns_failed")
    }
    assert flags == {
        failed: (True, False, False),
        fallback: (False, True, False),
        dns: (False, False, True),
        policy: (False, False, False),
        plain: (False, False, False),
        bare: (False, False, False),
    }
