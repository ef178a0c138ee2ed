"""The stage registry: a new stage is one ``StageSpec`` — services, consumers and views stay as
they are, and the run is recorded, served and shown with the new stage's record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from enrichment import stage_specs as registry
from enrichment.config.changes import config_replace
from enrichment.models import Run
from enrichment.pipeline.stages import StageResult
from enrichment.pipeline.templates import MessageContext
from enrichment.stage_specs import StageEnv, StageSpec

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class WordCount:
    """A trivial stage: appends nothing, records how many words the body has."""

    name: str = "wordcount"

    async def run(self, context: MessageContext, emit: Any) -> StageResult:
        await emit({"text": "counting words"})
        return StageResult(context.body, {"words": len(context.body.split())})


@pytest.fixture
def wordcount_stage(monkeypatch):
    spec = StageSpec(name="wordcount", title="Word count", build=lambda env: WordCount())
    monkeypatch.setattr(registry, "STAGES", [*registry.STAGES, spec])
    return spec


def enrich(client, body: str) -> dict[str, Any]:
    response = client.post("/api/enrich", {"body": body}, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_default_run_is_media_then_links() -> None:
    assert [spec.name for spec in registry.STAGES] == ["media", "links"]


def test_a_registered_stage_runs_is_stored_served_and_shown(user_client, wordcount_stage) -> None:
    config_replace(document={})
    result = enrich(user_client, "three little words")
    assert result["wordcount"] == {"words": 3}
    assert result["links"]["outcome"] == "disabled"  # the existing stages are untouched
    assert result["media"] == []

    run = Run.objects.get(pk=result["runId"])
    assert run.stage_records == {"wordcount": {"words": 3}}
    detail = user_client.get(f"/api/decisions/{run.pk}").json()
    assert detail["wordcount"] == {"words": 3}
    assert detail["links"]["outcome"] == "disabled"

    page = user_client.get(f"/decisions/{run.pk}/").content.decode()
    section = re.search(
        r'<article class="card stage-record" id="stage-wordcount">.*?</article>', page, re.S
    )
    assert "<h2>Word count</h2>" in page
    assert section is not None and "<dt>words</dt><dd><code>3</code></dd>" in section.group(0)


def test_a_stage_sees_the_body_earlier_stages_wrote(user_client, monkeypatch) -> None:
    @dataclass(frozen=True)
    class Prefix:
        name: str = "prefix"

        async def run(self, context: MessageContext, emit: Any) -> StageResult:
            return StageResult("[checked] " + context.body, {"prefixed": True})

    seen: list[str] = []

    @dataclass(frozen=True)
    class Spy:
        name: str = "spy"

        async def run(self, context: MessageContext, emit: Any) -> StageResult:
            seen.append(context.body)
            return StageResult(context.body, None)

    monkeypatch.setattr(
        registry,
        "STAGES",
        [
            StageSpec(name="prefix", build=lambda env: Prefix()),
            *registry.STAGES,
            StageSpec(name="spy", build=lambda env: Spy()),
        ],
    )
    config_replace(document={})
    result = enrich(user_client, "hello")
    assert result["body"] == "[checked] hello"
    assert seen == ["[checked] hello"]
    assert Run.objects.get(pk=result["runId"]).enriched_body == "[checked] hello"


def test_a_stage_that_raises_fails_the_run_and_stores_nothing_of_the_others(
    user_client, monkeypatch
) -> None:
    @dataclass(frozen=True)
    class Broken:
        name: str = "broken"

        async def run(self, context: MessageContext, emit: Any) -> StageResult:
            raise RuntimeError("stage exploded")

    monkeypatch.setattr(
        registry, "STAGES", [*registry.STAGES, StageSpec(name="broken", build=lambda e: Broken())]
    )
    config_replace(document={})
    response = user_client.post("/api/enrich", {"body": "x"}, content_type="application/json")
    assert response.status_code >= 400
    assert "stage exploded" in response.json()["detail"]
    run = Run.objects.get()
    assert (run.outcome, run.stage_records, run.url_decisions.count()) == ("error", {}, 0)


def test_stage_env_carries_what_a_stage_needs() -> None:
    names = set(StageEnv.__dataclass_fields__)
    assert names == {
        "config",
        "agent_id",
        "attachments",
        "runner",
        "resolve",
        "link_runner",
        "media_run",
    }
