"""A run is always finished, whatever its final save meets (issue 17, item 5).

On PostgreSQL a page text with NUL used to fail the final save and leave the run
``running`` with a 500; run this file with ``DATABASE_URL=postgres://…`` as well.
"""

from __future__ import annotations

import json

import pytest

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.storable import storable_json, storable_text

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
    def refuse(*args, **kwargs):
        raise RuntimeError("database refused the attempts")

    monkeypatch.setattr(Attempt.objects, "bulk_create", refuse)
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
