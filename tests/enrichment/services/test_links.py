"""The stored config's bare ``link-understand`` runs inside the server (issue 12)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from enrichment.config.cache import config_load
from enrichment.config.changes import config_replace, config_replace_versioned, version_restore
from enrichment.consumers import EnrichConsumer
from enrichment.models import Attempt, EnrichmentConfig, LinkModel, Run
from enrichment.services.runs import EnrichRequest, enrichment_run
from tests.enrichment.pipeline.fetch.test_webfetch import ARTICLE, LocalServer, page, send
from tests.enrichment.pipeline.fetch.test_webfetch import server as server  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("in_memory_layer")]

SCRIPT = str(Path(sys.executable).with_name("link-understand"))


def builtin_config(command: str = "link-understand", *args: str) -> dict[str, Any]:
    return {
        "tools": {
            "links": {
                "models": [
                    {
                        "type": "cli",
                        "command": command,
                        "args": list(args) or ["--url", "{{LinkUrl}}"],
                    }
                ]
            },
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        }
    }


def slow(handler: Any) -> None:
    time.sleep(4)
    send(handler, 200, ARTICLE, {"Content-Type": "text/html"})


async def enrich(body: str) -> dict[str, Any]:
    return await enrichment_run(request=EnrichRequest(body=body))


def without_timings(links: dict[str, Any]) -> dict[str, Any]:
    for url in links["urls"]:
        for attempt in url["attempts"] + ([url["chosen"]] if url["chosen"] else []):
            attempt.pop("durationMs", None)
            attempt.pop("type", None)
    return links


async def test_the_bare_command_runs_in_process_with_the_rendered_argv(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/article"] = page(ARTICLE)
    await sync_to_async(config_replace)(document=builtin_config())
    url = server.url("/article")
    result = await enrich(f"look {url}")
    attempt = result["links"]["urls"][0]["attempts"][0]
    assert attempt["type"] == "in-process"
    assert attempt["argv"] == ["link-understand", "--url", url]
    assert attempt["outcome"] == "success"
    assert "Anemones, limpets" in result["body"]
    stored = await Attempt.objects.aget()
    assert (stored.type, stored.argv) == ("in-process", ["link-understand", "--url", url])


async def test_the_script_by_path_runs_as_a_subprocess_with_the_same_decision(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/article"] = page(ARTICLE)
    server.routes["/missing-too"] = lambda handler: send(handler, 404, b"gone")
    body = f"a {server.url('/article')} b {server.url('/missing-too')}"
    await sync_to_async(config_replace)(document=builtin_config())
    inside = await enrich(body)
    await sync_to_async(config_replace)(
        document=builtin_config(SCRIPT, "--url", "{{LinkUrl}}", "--no-cache")
    )
    spawned = await enrich(body)
    assert [u["attempts"][0]["type"] for u in spawned["links"]["urls"]] == ["cli", "cli"]
    assert [u["attempts"][0]["type"] for u in inside["links"]["urls"]] == ["in-process"] * 2
    # The envelope names the command as configured; everything else is the same text.
    assert spawned["body"].replace(SCRIPT, "link-understand") == inside["body"]
    for links in (inside["links"], spawned["links"]):
        for url in links["urls"]:
            for attempt in url["attempts"]:
                attempt["argv"][0] = attempt["command"] = "<fetcher>"
                attempt["argv"] = [a for a in attempt["argv"] if a != "--no-cache"]
            if url["chosen"]:
                url["chosen"] = url["attempts"][0]
    assert without_timings(spawned["links"]) == without_timings(inside["links"])


async def test_a_saved_change_applies_to_the_very_next_message(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/article"] = page(ARTICLE)
    url = server.url("/article")
    await sync_to_async(config_replace)(document=builtin_config())
    first = await enrich(url)
    await sync_to_async(config_replace)(
        document=builtin_config("link-understand", "--url", "{{LinkUrl}}", "--format", "text")
    )
    second = await enrich(url)
    assert first["links"]["urls"][0]["attempts"][0]["argv"][-1] == url
    assert second["links"]["urls"][0]["attempts"][0]["argv"][-2:] == ["--format", "text"]

    # An edit of one row (as the admin makes it) too.
    model = await LinkModel.objects.aget()
    model.args = ["--url", "{{LinkUrl}}", "--max-chars", "500"]
    await model.asave()
    third = await enrich(url)
    assert third["links"]["urls"][0]["attempts"][0]["argv"][-2:] == ["--max-chars", "500"]


async def test_a_page_read_once_is_served_from_the_cache_to_the_next_message(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/cached-article"] = page(ARTICLE)
    url = server.url("/cached-article")
    await sync_to_async(config_replace)(document=builtin_config())
    first = await enrich(f"look {url}")
    server.routes["/cached-article"] = lambda handler: send(handler, 404, b"gone")
    second = await enrich(f"look {url}")
    assert [path for path, _headers in server.seen] == ["/cached-article"]
    assert second["body"] == first["body"] and "Anemones, limpets" in second["body"]


def test_the_parsed_config_is_not_read_again_while_nothing_changed(
    django_assert_num_queries: Any,
) -> None:
    config_replace(document=builtin_config())
    config_load()
    with django_assert_num_queries(1):  # the version check only
        config, _document = config_load()
    assert config.links.models[0].command == "link-understand"


def sent_statements(captured: CaptureQueriesContext) -> list[str]:
    """The SQL a message sent, without transaction control (SQLite logs BEGIN, PostgreSQL not)."""
    control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(control)]


def test_one_message_costs_a_config_check_the_run_and_one_write_of_its_result(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/article"] = page(ARTICLE)
    config_replace(document=builtin_config())
    async_to_sync(enrich)(f"warm up {server.url('/article')}")
    with CaptureQueriesContext(connection) as captured:
        result = async_to_sync(enrich)(f"look {server.url('/article')}")
    assert result["links"]["outcome"] == "success"
    statements = sent_statements(captured)
    # The config's stamp; the run; its URL rows, attempt rows and final update (one transaction).
    assert len(statements) == 5, statements


def test_each_run_records_the_config_version_in_force_when_it_started() -> None:
    def version_of_next_run() -> int | None:
        result = async_to_sync(enrich)("no links in this one")
        return Run.objects.get(pk=result["runId"]).config_version

    first = config_replace_versioned(document=builtin_config(), source="test").version
    assert first is not None
    assert version_of_next_run() == version_of_next_run() == first.number
    config_replace(document=builtin_config("link-understand", "--url", "{{LinkUrl}}", "-x"))
    assert version_of_next_run() == first.number + 1
    version_restore(number=first.number, author="test")  # the first document, a new number
    assert version_of_next_run() == first.number + 2
    model = LinkModel.objects.get()  # a row edited around the versioned writers
    model.args = ["--url", "{{LinkUrl}}", "-y"]
    model.save()
    assert version_of_next_run() is None


def test_a_change_written_by_another_process_applies_to_the_next_message() -> None:
    """No shared cache needed: ``manage.py import_openclaw_config`` against a running server."""
    config_replace(document=builtin_config())
    assert config_load()[0].links.models[0].args == ("--url", "{{LinkUrl}}")
    # What another process's write looks like from here: rows changed, nothing in memory told.
    LinkModel.objects.filter(config__is_active=True).update(args=["--url", "{{LinkUrl}}", "-x"])
    EnrichmentConfig.objects.filter(is_active=True).update(updated_at=timezone.now())
    assert config_load()[0].links.models[0].args == ("--url", "{{LinkUrl}}", "-x")


async def test_a_disconnect_mid_fetch_interrupts_the_run_and_the_next_one_succeeds(
    server: LocalServer,  # noqa: F811
    user: Any,
) -> None:
    server.routes["/slow"] = slow
    server.routes["/article"] = page(ARTICLE)
    await sync_to_async(config_replace)(document=builtin_config())
    communicator = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
    communicator.scope["user"] = user
    assert (await communicator.connect())[0]
    await communicator.send_json_to(
        {"type": "enrich", "id": "gone", "message": {"body": server.url("/slow")}}
    )
    progress = await communicator.receive_json_from(timeout=10)
    assert progress["text"].startswith("Running link-understand")
    await asyncio.sleep(0.3)
    await communicator.disconnect()
    run = await Run.objects.aget()
    assert run.outcome == "interrupted"
    result = await asyncio.wait_for(enrich(server.url("/article")), 20)
    assert result["links"]["urls"][0]["attempts"][0]["outcome"] == "success"


async def test_the_pending_notice_still_comes_after_five_seconds(
    server: LocalServer,  # noqa: F811
) -> None:
    server.routes["/slow"] = lambda handler: (time.sleep(6), slow(handler))
    await sync_to_async(config_replace)(document=builtin_config())
    frames: list[dict[str, Any]] = []

    async def progress(frame: dict[str, Any]) -> None:
        frames.append(frame)

    result = await enrichment_run(
        request=EnrichRequest(body=server.url("/slow")), on_progress=progress
    )
    assert [frame["text"] for frame in frames][-1] == "Fetching page content..."
    assert result["links"]["urls"][0]["attempts"][0]["outcome"] == "success"


async def test_with_redis_the_pages_are_shared_with_the_console_script(settings, redis_url) -> None:
    """The server reads and writes Redis on its event loop; the script uses Django's cache
    API: each finds what the other stored, and the stored TTL is ``cacheTtlMinutes``."""
    import uuid

    import redis.asyncio as aioredis
    from django.core.cache import cache

    from enrichment.pipeline.config.model import WebFetchConfig
    from enrichment.services.links import page_cache

    prefix = f"t{uuid.uuid4().hex[:10]}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": prefix,
        }
    }
    pages = page_cache(WebFetchConfig(cache_ttl_minutes=2))
    assert pages is not None
    try:
        await pages.set("page-of-the-server", "Summary: é")
        assert await sync_to_async(cache.get)("page-of-the-server") == "Summary: é"
        await sync_to_async(cache.set)("page-of-the-script", "Summary: ü", 60)
        assert await pages.get("page-of-the-script") == "Summary: ü"
        assert await pages.get("never-stored") is None
        client = aioredis.Redis.from_url(redis_url)
        assert 110 < await client.ttl(cache.make_key("page-of-the-server")) <= 120
        await client.aclose()
    finally:
        await sync_to_async(cache.delete_many)(["page-of-the-server", "page-of-the-script"])


def test_start_up_loads_the_tls_certificates_before_the_first_https_link() -> None:
    from enrichment.pipeline.net.http import tls_context
    from enrichment.services.links import start_extraction_pool

    tls_context.cache_clear()
    start_extraction_pool()
    assert tls_context.cache_info().currsize == 1  # loaded: the first link does not wait
    assert tls_context().verify_mode.name == "CERT_REQUIRED"  # and it verifies certificates
