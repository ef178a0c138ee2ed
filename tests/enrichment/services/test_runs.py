"""A run is always finished, whatever its final save meets (issue 17, item 5).

On PostgreSQL a page text with NUL used to fail the final save and leave the run
``running`` with a 500; run this file with ``DATABASE_URL=postgres://…`` as well.
"""

from __future__ import annotations

import json
import os

import pytest

from common.storable import storable_json, storable_text
from enrichment.models import Attempt, Run, UrlDecision

pytestmark = pytest.mark.django_db(transaction=True)


def enrich(client, body: str):
    return client.post("/api/enrich", json.dumps({"body": body}), content_type="application/json")


def test_storable_text_replaces_nul_and_lone_surrogates_only() -> None:
    assert storable_text("a\x00b\udc00c🎉") == "a\ufffdb\ufffdc🎉"
    assert storable_json({"k\x00": ["x\x00", 3, None]}) == {"k\ufffd": ["x\ufffd", 3, None]}


def test_page_text_with_nul_is_stored_and_the_run_finishes(user_client, summarizer) -> None:
    response = enrich(user_client, "read http://127.0.0.1/nul")
    assert response.status_code == 200, response.content[:300]
    run = Run.objects.get(pk=response.json()["runId"])
    assert run.outcome == Run.Outcome.SUCCESS
    assert "Summary\ufffd of http://127.0.0.1/nul" in run.enriched_body
    assert "\x00" not in run.enriched_body
    assert "\x00" not in UrlDecision.objects.get(run=run).summary
    detail = user_client.get(f"/api/decisions/{run.pk}")
    assert detail.status_code == 200


def test_a_final_save_that_raises_closes_the_run_as_an_error(
    user_client, summarizer, monkeypatch
) -> None:
    from enrichment.services import runs as services

    insert = services.rows_insert

    def refuse(rows):
        if rows and isinstance(rows[0], Attempt):
            raise RuntimeError("database refused the attempts")
        insert(rows)

    monkeypatch.setattr(services, "rows_insert", refuse)
    response = enrich(user_client, "read http://127.0.0.1/a")
    assert response.status_code == 503
    run = Run.objects.get()
    assert response.json()["detail"].startswith(
        f"enrichment ran but its result could not be stored (run {run.pk})"
    )
    assert run.outcome == Run.Outcome.ERROR
    assert "database refused the attempts" in run.error
    assert run.finished_at is not None
    # The transaction of the final save was rolled back as a whole: no half-written rows.
    assert not UrlDecision.objects.filter(run=run).exists()


# --- runs finishing together are stored together (services.runs_finish_gathered) ----------


def _finished_run(number: int, *, attempt_ms: int = 30):
    """A started run and a links record of one URL with one successful attempt."""
    from enrichment.pipeline.links.decisions import Attempt as Tried
    from enrichment.pipeline.links.decisions import LinkDecision
    from enrichment.pipeline.links.decisions import UrlDecision as Decided
    from enrichment.pipeline.links.stage import LinkResult
    from enrichment.pipeline.stages import StagesResult
    from enrichment.services import runs as services

    url = f"http://127.0.0.1/page-{number}"
    ((_, run),) = services.runs_start([services.Start(services.EnrichRequest(body=f"see {url}"))])
    tried = Tried("cli", "summarize", ("summarize", url), "success", None, 0, attempt_ms, 12, "")
    decision = LinkDecision("success", None, (Decided(url, False, None, (), (tried,), tried),))
    body = f"see {url}\n\nsummary of {url}"
    result = StagesResult(body, {"links": LinkResult(body, decision)})
    return services.Finish(run, result, duration_ms=40 + number)


def test_runs_stored_together_keep_their_own_rows(summarizer) -> None:
    from enrichment.services import runs as services

    finishes = [_finished_run(n) for n in range(3)]
    assert services.runs_finish_gathered(finishes) == [f.run for f in finishes]

    for number, finish in enumerate(finishes):
        run = Run.objects.get(pk=finish.run.pk)
        assert run.outcome == Run.Outcome.SUCCESS and run.duration_ms == 40 + number
        assert run.enriched_body.endswith(f"summary of http://127.0.0.1/page-{number}")
        (row,) = UrlDecision.objects.filter(run=run)
        assert row.url == f"http://127.0.0.1/page-{number}" and row.chosen_position == 0
        # Its run's time and duration, copied (a rare fragment's runs are put in time or
        # duration order from their URL rows).
        assert (row.run_created_at, row.run_duration_ms) == (run.created_at, 40 + number)
        (attempt,) = Attempt.objects.filter(url_decision=row)
        assert attempt.argv == ["summarize", f"http://127.0.0.1/page-{number}"]


def test_a_run_update_stores_exactly_what_the_orms_update_stores(summarizer) -> None:
    """``run_update`` writes its statement out instead of compiling the ORM's ``update``;
    every kind of value (text with quotes and placeholders, NULL, JSON, booleans, a time)
    comes back as the ORM's own update stores it, also with a field named twice."""
    from django.utils import timezone

    from enrichment.services import runs as services
    from enrichment.services.run_rows import run_update

    (_, run), (_, twin), (_, other) = services.runs_start(
        [services.Start(services.EnrichRequest(body=f"run {n}")) for n in range(3)]
    )
    values = {
        "enriched_body": "naïve ☃ 'quoted' \\ %s %(x)s ?",
        "duration_ms": None,
        "finished_at": timezone.now(),
        "outcome": "success",
        "error": "",
        "media": [{"kind": "audio", "text": "ünïcode", "nested": {"n": 1.5, "none": None}}],
        "stage_records": {"extra": ["a", 2, True]},
        "attempts_failed": True,
        "fallback_used": False,
        "dns_failed": True,
    }
    for name, value in values.items():
        setattr(run, name, value)
    run_update(run, [*values, "stage_records", "media"])  # two stages may name one field
    Run.objects.filter(pk=twin.pk).update(**values)

    stored = Run.objects.values(*values).get(pk=run.pk)
    assert stored == Run.objects.values(*values).get(pk=twin.pk)
    assert stored == values
    untouched = Run.objects.get(pk=other.pk)  # only the run's own row changed
    assert (untouched.outcome, untouched.enriched_body) == (Run.Outcome.RUNNING, "")


def _new_runs(count: int, tag: str) -> list[Run]:
    from datetime import UTC, datetime

    return [
        Run(
            created_at=datetime(2026, 12, 7, 9, 30, n, 123456, tzinfo=UTC),
            message_id=f"{tag}-{n}",
            channel="Slack ☃",
            session_key="agent:main:slack:'; DROP TABLE x; --",
            original_body=f"body {n}: 'quoted' \\ %s %(x)s ? ünïcode",
            config_snapshot={"tools": {"links": {"models": [{"command": "x", "n": n}]}}},
            config_version=None if n % 2 else n,
            owner="host:1",
            job=f"job-{tag}-{n}",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [1, 3, 5])
def test_runs_inserted_are_stored_exactly_as_bulk_create_stores_them(
    summarizer, monkeypatch, count
) -> None:
    """``rows_insert`` writes its INSERT out instead of compiling ``bulk_create``: the rows,
    their ids (in order) and every value match the ORM's own, also when the database's
    parameter limit splits them into several statements (5 runs, 2 per statement)."""
    from django.db import connection

    from enrichment.services.run_rows import rows_insert

    if count == 5:
        monkeypatch.setattr(connection.ops, "bulk_batch_size", lambda fields, objs: 2)
    ours, theirs = _new_runs(count, "ours"), _new_runs(count, "theirs")
    rows_insert(ours)
    Run.objects.bulk_create(theirs)

    fields = [f.attname for f in Run._meta.concrete_fields if not f.primary_key]
    assert all(run.pk is not None and not run._state.adding for run in ours)
    for mine, twin in zip(ours, theirs, strict=True):
        stored = Run.objects.values(*fields).get(pk=mine.pk)
        expected = Run.objects.values(*fields).get(pk=twin.pk)
        assert stored["message_id"] == mine.message_id  # the id came back in row order
        assert stored == {**expected, "message_id": mine.message_id, "job": mine.job}


def test_a_runs_rows_inserted_point_where_bulk_create_points_them(summarizer) -> None:
    """URL decisions and their attempts, given as objects pointing at objects, are stored
    by ``rows_insert`` as ``bulk_create`` stores them: the same values, each attempt under
    its own decision, each decision under its run."""
    from enrichment.services.run_rows import rows_insert

    def rows(tag: str, insert) -> tuple[Run, list[UrlDecision]]:
        (run,) = _new_runs(1, tag)
        rows_insert([run])
        decisions = [
            UrlDecision(
                run=run,
                run_created_at=run.created_at,
                position=n,
                url=f"http://{tag}.test/{n}?q='%s'",
                blocked=n == 1,
                reason="" if n != 1 else "Blocked: private address",
                addresses=["10.0.0.1"] if n == 1 else [],
                chosen_position=None if n == 1 else 0,
                summary=f"summary ☃ {n}",
            )
            for n in range(3)
        ]
        attempts = [
            Attempt(
                url_decision=decision,
                run_created_at=run.created_at,
                position=k,
                command="summarize",
                argv=["summarize", decision.url, {"k": k}],
                outcome="success" if k else "failed",
                exit_code=None if k else 2,
                duration_ms=10 + k,
                stderr_tail="" if k else "usage: …",
            )
            for decision in decisions
            for k in range(2)
        ]
        insert(decisions)
        insert(attempts)
        return run, decisions

    def stored(run: Run) -> list[tuple[object, ...]]:
        fields = ["position", "blocked", "reason", "addresses", "chosen_position", "summary"]
        skip = {"id", "url_decision_id", "argv"}
        attempt_fields = [f.attname for f in Attempt._meta.concrete_fields if f.attname not in skip]
        return [
            (
                *(getattr(decision, name) for name in fields),
                decision.url.split(".test", 1)[1],
                decision.run_created_at,
                [
                    tuple(getattr(attempt, name) for name in attempt_fields)
                    + (attempt.argv[1:2] == [decision.url], attempt.argv[2])
                    for attempt in decision.attempts.order_by("position")
                ],
            )
            for decision in run.url_decisions.order_by("position")
        ]

    ours, our_decisions = rows("ours", rows_insert)
    theirs, _ = rows("theirs", lambda objs: type(objs[0]).objects.bulk_create(objs))
    assert all(d.pk is not None and d.run_id == ours.pk for d in our_decisions)
    assert stored(ours) == stored(theirs)
    assert len(stored(ours)) == 3 and all(len(d[-1]) == 2 for d in stored(ours))


def test_a_run_gone_before_it_is_stored_with_others_fails_alone(summarizer) -> None:
    from django.db import DatabaseError

    from enrichment.services import runs as services

    finishes = [_finished_run(n) for n in range(3)]
    Run.objects.filter(pk=finishes[1].run.pk).delete()  # pruned while it ran
    with pytest.raises(DatabaseError, match="not stored"):
        services.runs_finish(finishes)
    assert not UrlDecision.objects.exists()  # the whole batch was rolled back

    stored, gone, also_stored = services.runs_finish_gathered(finishes)
    assert isinstance(gone, Exception)
    for run in (stored, also_stored):
        assert Run.objects.get(pk=run.pk).outcome == Run.Outcome.SUCCESS
        assert UrlDecision.objects.filter(run=run).count() == 1


def test_a_run_the_database_refuses_fails_alone_and_the_others_are_stored(summarizer) -> None:
    from common.errors import ServiceUnavailable
    from enrichment.services import runs as services

    # A negative duration breaks the attempts' CHECK constraint (SQLite and PostgreSQL).
    finishes = [_finished_run(0), _finished_run(1, attempt_ms=-1), _finished_run(2)]
    stored, refused, also_stored = services.runs_finish_gathered(finishes)

    assert isinstance(refused, ServiceUnavailable)
    bad = Run.objects.get(pk=finishes[1].run.pk)
    assert refused.detail.startswith(
        f"enrichment ran but its result could not be stored (run {bad.pk})"
    )
    assert bad.outcome == Run.Outcome.ERROR and bad.finished_at is not None
    assert not UrlDecision.objects.filter(run=bad).exists()  # nothing half-written
    for finish in (stored, also_stored):
        run = Run.objects.get(pk=finish.pk)
        assert (
            run.outcome == Run.Outcome.SUCCESS and UrlDecision.objects.filter(run=run).count() == 1
        )


async def test_concurrent_enrichments_each_answer_with_their_own_stored_run(summarizer) -> None:
    import asyncio

    from enrichment.services import runs as services

    urls = [f"http://127.0.0.1/together-{n}" for n in range(6)]
    results = await asyncio.gather(
        *(
            services.enrichment_run(request=services.EnrichRequest(body=f"read {url}"))
            for url in urls
        )
    )

    assert len({result["runId"] for result in results}) == len(urls)
    for url, result in zip(urls, results, strict=True):
        run = await Run.objects.aget(pk=result["runId"])
        assert run.outcome == Run.Outcome.SUCCESS and run.enriched_body == result["body"]
        assert f"Summary of {url}" in run.enriched_body
        assert [row.url async for row in UrlDecision.objects.filter(run=run)] == [url]
        assert await Attempt.objects.filter(url_decision__run=run, outcome="success").acount() == 1


def test_runs_started_together_are_one_insert_each_with_its_own_job(summarizer) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from enrichment.services import runs as services

    starts = [
        services.Start(services.EnrichRequest(body=f"message {n}", channel="chat"), job=f"job-{n}")
        for n in range(3)
    ]
    with CaptureQueriesContext(connection) as queries:
        outcomes = services.runs_start_gathered(starts)

    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 1
    for number, (config, run) in enumerate(outcomes):
        stored = Run.objects.get(pk=run.pk)
        assert (stored.job, stored.original_body) == (f"job-{number}", f"message {number}")
        assert stored.outcome == Run.Outcome.RUNNING and stored.channel == "chat"
        assert (
            config.links.models[0].command == summarizer["tools"]["links"]["models"][0]["command"]
        )


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="PostgreSQL refuses an overlong message id (SQLite stores it)",
)
def test_a_message_the_database_refuses_fails_alone_and_the_others_start(summarizer) -> None:
    from enrichment.services import runs as services

    starts = [
        services.Start(services.EnrichRequest(body="first", message_id="m1")),
        services.Start(services.EnrichRequest(body="refused", message_id="m" * 201)),
        services.Start(services.EnrichRequest(body="third", message_id="m3")),
    ]
    first, refused, third = services.runs_start_gathered(starts)

    assert isinstance(refused, Exception) and "too long" in str(refused)
    assert [run.original_body for run in Run.objects.order_by("pk")] == ["first", "third"]
    assert (first[1].message_id, third[1].message_id) == ("m1", "m3")


def test_a_stored_run_keeps_its_derived_statuses_and_the_history_filters_any_mix(
    user_client, summarizer
) -> None:
    """The statuses are stored with the run's decisions: a fallback, a failure and a DNS
    failure, each found by ``?status=`` alone and in any mix (one query on the runs)."""
    from enrichment.pipeline.links.decisions import Attempt as Tried
    from enrichment.pipeline.links.decisions import LinkDecision
    from enrichment.pipeline.links.decisions import UrlDecision as Decided
    from enrichment.pipeline.links.stage import LinkResult
    from enrichment.pipeline.stages import StagesResult
    from enrichment.services import runs as services
    from tests.enrichment.test_api import streamed

    def finish(number: int, decided: tuple[Decided, ...], outcome: str) -> Run:
        finished = _finished_run(number)
        result = StagesResult(
            "body", {"links": LinkResult("body", LinkDecision(outcome, None, decided))}
        )
        services.runs_finish([services.Finish(finished.run, result, duration_ms=10)])
        return Run.objects.get(pk=finished.run.pk)

    def tried(command: str, outcome: str) -> Tried:
        return Tried("cli", command, (command,), outcome, None, 0, 5, 0, "")

    url = "http://127.0.0.1/x"
    broken, working = tried("broken", "failed"), tried("summarize", "success")
    fallback = finish(0, (Decided(url, False, None, (), (broken, working), working),), "success")
    failed = finish(1, (Decided(url, False, None, (), (broken,), None),), "skipped")
    guard = Tried("cli", "ssrf", (), "skipped", "hostname does not resolve", None, 0, 0, "")
    dns = Decided("http://nowhere.invalid/", True, "hostname does not resolve", (), (guard,), None)
    unresolved = finish(2, (dns,), "skipped")
    plain = finish(3, (Decided(url, False, None, (), (working,), working),), "success")

    assert (fallback.fallback_used, fallback.attempts_failed, fallback.dns_failed) == (
        True,
        False,
        False,
    )
    assert (failed.attempts_failed, failed.fallback_used) == (True, False)
    assert unresolved.dns_failed and not unresolved.attempts_failed
    assert not (plain.attempts_failed or plain.fallback_used or plain.dns_failed)

    def listed(query: str) -> set[int]:
        response = user_client.get("/api/decisions?" + query)
        assert response.status_code == 200, response.content
        return {item["runId"] for item in response.json()["items"]}

    assert listed("status=fallback") == {fallback.pk}
    assert listed("status=fallback&status=dns-failure") == {fallback.pk, unresolved.pk}
    assert listed("status=attempts-failed&status=fallback&status=dns-failure") == {
        fallback.pk,
        failed.pk,
        unresolved.pk,
    }
    exported = user_client.get("/api/decisions/export", {"format": "json"})
    items = json.loads(streamed(exported))
    statuses = {item["runId"]: item["statuses"] for item in items}
    assert statuses[failed.pk] == ["attempts-failed"] and statuses[plain.pk] == []


def test_finishing_a_run_removed_meanwhile_says_so_and_writes_nothing(summarizer) -> None:
    """A run pruned (or deleted in the admin) while it ran: its result is not stored
    half-way and the error names the run."""
    from django.db import DatabaseError

    from enrichment.services import runs as services

    finish = _finished_run(1)
    Run.objects.filter(pk=finish.run.pk).delete()
    with pytest.raises(
        DatabaseError, match=rf"run {finish.run.pk} is not stored: its enriched_body"
    ):
        services.runs_finish([finish])
    assert not UrlDecision.objects.exists() and not Attempt.objects.exists()
