"""The built-in fetcher in-process gives what the ``link-understand`` subprocess gives.

Each case runs the same rendered argv twice against the same local server: once as the
console script through the subprocess runner (as every other CLI runs), once through
``run_in_process`` with a real extraction pool. The ``CommandResult`` (outcome, reason, exit
code, stdout text and byte count, stderr tail) must be identical but for timings and the
``in-process`` type.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from common.workpool import WorkPool
from enrichment.pipeline.config.model import WebFetchConfig
from enrichment.pipeline.fetch.cli_environment import fetch_environment
from enrichment.pipeline.fetch.link_understand import (
    IN_PROCESS_TYPE,
    CliExit,
    build_parser,
    capturing_parser,
    is_builtin,
    parse_request,
    warm_up,
)
from enrichment.pipeline.fetch.link_understand_run import AsyncPageCache, run_in_process
from enrichment.pipeline.net.ssrf import SsrfPolicy
from enrichment.pipeline.runner import CommandResult, run_command
from tests.common import pool_jobs
from tests.enrichment.pipeline.fetch.test_webfetch import (
    ARTICLE,
    LOCAL,
    LocalServer,
    page,
    redirect,
    send,
)
from tests.enrichment.pipeline.fetch.test_webfetch import server as server  # noqa: F401 (fixture)

REPO_ROOT = str(Path(__file__).resolve().parents[4])
SCRIPTS = str(Path(sys.executable).parent)
PAGES = Path(REPO_ROOT) / "bench" / "data" / "extraction"
EMPTY = b"<html><head><title>Only a title</title></head><body><div></div></body></html>"


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkPool]:
    pool = WorkPool(2, initializer=warm_up)
    pool.start()
    yield pool
    pool.close()


def script_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LINK_"))}
    env["PATH"] = SCRIPTS + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = REPO_ROOT
    env["LINK_UNDERSTAND_SSRF_POLICY"] = json.dumps(LOCAL.to_dict())
    return {**env, **extra}


def comparable(result: CommandResult) -> CommandResult:
    return dataclasses.replace(result, duration_ms=0, attempt_type=None)


def slow(handler: object) -> None:
    time.sleep(3)
    send(handler, 200, ARTICLE, {"Content-Type": "text/html"})  # type: ignore[arg-type]


def huge_page() -> bytes:
    paragraph = b"<p>" + b"Waves carry sand along the shore every single day. " * 40 + b"</p>\n"
    return b"<html><body><article>" + paragraph * 1200 + b"</article></body></html>"


def install_routes(server: LocalServer) -> None:
    server.routes.update(
        {
            "/article": page(ARTICLE),
            "/to-private": redirect("http://10.0.0.5/admin"),
            "/loop-a": redirect("/loop-b"),
            "/loop-b": redirect("/loop-a"),
            "/slow": slow,
            "/huge": page(huge_page()),
            "/empty": page(EMPTY),
            "/json": page(b'{"tide": [1, 2]}', "application/json"),
            "/notes.md": page(b"# Notes\n\nPlain markdown passes through.", "text/markdown"),
            "/image": page(b"\x89PNG\r\n\x1a\n", "image/png"),
        }
    )


CASES = [
    ("success", ["--url", "{u}/article", "--format", "markdown"], 20),
    ("success-text-cut", ["--url", "{u}/article", "--format", "text", "--max-chars", "90"], 20),
    ("no-wrap", ["--url", "{u}/article", "--no-wrap"], 20),
    ("json", ["--url", "{u}/json"], 20),
    ("markdown-passthrough", ["--url", "{u}/notes.md"], 20),
    ("http-404", ["--url", "{u}/missing"], 20),
    ("blocked-redirect", ["--url", "{u}/to-private"], 20),
    ("redirect-loop", ["--url", "{u}/loop-a"], 20),
    ("fetch-timeout", ["--url", "{u}/slow", "--timeout", "1"], 20),
    ("entry-timeout", ["--url", "{u}/slow"], 1),
    ("oversized-body", ["--url", "{u}/huge", "--no-cache"], 20),
    ("empty-page", ["--url", "{u}/empty"], 20),
    ("unsupported-type", ["--url", "{u}/image"], 20),
    ("private-address", ["--url", "http://10.0.0.5/"], 20),
    ("not-http", ["--url", "ftp://127.0.0.1/x"], 20),
    ("bad-format", ["--url", "{u}/article", "--format", "pdf"], 20),
    ("base-url-without-file", ["--url", "{u}/article", "--base-url", "{u}/"], 20),
    ("zero-max-chars", ["--url", "{u}/article", "--max-chars", "0"], 20),
    ("no-source", ["--format", "text"], 20),
    ("html-file", ["--html-file", str(PAGES / "blog-night-sky.html"), "--no-wrap"], 20),
    ("html-file-gz", ["--html-file", str(PAGES / "docs-cli-install.html.gz")], 20),
    ("missing-file", ["--html-file", "/nonexistent/page.html"], 20),
]


@pytest.mark.parametrize(("args", "timeout"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_in_process_matches_the_subprocess(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
    args: list[str],
    timeout: float,
) -> None:
    install_routes(server)
    argv = ("link-understand", *(arg.format(u=server.url("")) for arg in args))
    spawned = await run_command(argv, timeout_seconds=timeout, env=script_env())
    inside = await run_in_process(argv, timeout_seconds=timeout, policy=LOCAL, extract=pool.run)
    assert inside.attempt_type == IN_PROCESS_TYPE and spawned.attempt_type is None
    assert comparable(inside) == comparable(spawned)


async def test_the_answers_are_the_ones_a_user_expects(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
) -> None:
    """Guards the comparison above against two equally broken paths."""
    install_routes(server)

    async def run(*args: str, timeout: float = 20) -> CommandResult:
        argv = ("link-understand", *args)
        return await run_in_process(argv, timeout_seconds=timeout, policy=LOCAL, extract=pool.run)

    ok = await run("--url", server.url("/article"))
    assert ok.outcome == "success" and "Anemones, limpets" in ok.stdout_text
    assert "Ignore all previous instructions" not in ok.stdout_text
    origin = server.url("")[:-1] if server.url("").endswith("/") else server.url("")
    assert (await run("--url", server.url("/missing"))).stderr_tail == f"{origin}: HTTP 404"
    blocked = await run("--url", server.url("/to-private"))
    assert blocked.stderr_tail.startswith(f"{origin}: Blocked: ")  # issue 15: Blocked:
    empty = await run("--url", server.url("/empty"))
    assert (empty.exit_code, empty.stderr_tail) == (1, f"{origin}: no readable content")
    late = await run("--url", server.url("/slow"), timeout=1)
    assert (late.outcome, late.reason, late.exit_code) == ("failed", "timed out after 1s", None)


async def test_a_usage_error_says_the_same_each_time() -> None:
    """The parser is reused across runs; what one run printed never leaks into the next."""
    bad = ("link-understand", "--url", "http://127.0.0.1/", "--format", "pdf")
    first, second = [await run_in_process(bad, timeout_seconds=5, policy=LOCAL) for _ in range(2)]
    assert first.exit_code == 2 and "invalid choice: 'pdf'" in first.stderr_tail
    assert comparable(second) == comparable(first)
    assert first.stderr_tail.count("usage:") == 1


ARGV_SEQUENCE = [
    # arguments after the command name, in the order one reused parser sees them
    ["--url", "http://a.test/1", "--format", "text"],
    ["--url", "http://b.test/2?q=a b", "--format", "text"],  # same shape, other URL
    ["--url", "", "--format", "text"],  # empty: the page on stdin
    ["--format", "text", "--url", "http://c.test/3", "--max-chars", "99", "--no-wrap"],
    ["--format", "text", "--url", "http://d.test/4", "--max-chars", "99", "--no-wrap"],
    ["--url", "-5", "--format", "text"],  # a dash value: parsed whole
    ["--url", "--format", "text"],  # --url without a value: an error each time
    ["--url", "http://e.test/5", "--format", "pdf"],  # another shape, a bad choice
    ["--url=http://f.test/6", "--format", "text"],
    ["--url", "http://g.test/7", "--url", "http://h.test/8"],  # the last wins
    ["--url", "http://i.test/9", "--html-file", "x.html"],  # mutually exclusive
    ["--url", "http://j.test/10", "--base-url", "http://k.test/"],  # base-url needs a file
    ["--url", "http://l.test/11", "--format", "text"],  # the first shape again
]


def test_a_reused_parser_answers_every_argv_as_a_new_one_would() -> None:
    """The in-process parser keeps each argv shape's parse; a request's URL, flags and
    errors are still exactly those of a whole parse of its own arguments."""

    def parsed(parser: Any, args: list[str]) -> tuple[Any, ...]:
        try:
            return ("ok", parse_request(parser, args, WebFetchConfig()))
        except CliExit as exit_:
            return ("exit", exit_.status, exit_.stdout, exit_.stderr)

    for args in ARGV_SEQUENCE:
        expected = parsed(build_parser(capture=True), args)
        assert parsed(capturing_parser(), args) == expected, args
    first = parsed(capturing_parser(), ARGV_SEQUENCE[0])[1]
    assert (first.url, first.mode) == ("http://a.test/1", "text")


async def test_cache_hits_match_and_are_shared_with_the_script(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
    redis_url: str,
) -> None:
    """Through Redis (Django's cache with the project's settings), a page fetched by one path
    is a cache hit for the other: same output, even though the page has changed since."""
    from django.core.cache.backends.redis import RedisCache

    shared = RedisCache(redis_url, {"KEY_PREFIX": "controlui"})
    cache = AsyncPageCache(
        get=lambda key: asyncio.to_thread(shared.get, key),
        set=lambda key, value: asyncio.to_thread(shared.set, key, value, 900),
    )
    env = script_env(DJANGO_SETTINGS_MODULE="controlui.settings", REDIS_URL=redis_url)
    for first_inside in (True, False):
        path = f"/cached-{time.time_ns()}"
        server.routes[path] = page(ARTICLE)
        argv = ("link-understand", "--url", server.url(path))
        if first_inside:
            first = await run_in_process(
                argv, timeout_seconds=20, policy=LOCAL, cache=cache, extract=pool.run
            )
        else:
            first = await run_command(argv, timeout_seconds=20, env=env)
        assert first.outcome == "success"
        server.routes[path] = page(b"<html><body><p>Changed since.</p></body></html>")
        spawned = await run_command(argv, timeout_seconds=20, env=env)
        inside = await run_in_process(
            argv, timeout_seconds=20, policy=LOCAL, cache=cache, extract=pool.run
        )
        assert comparable(spawned) == comparable(inside) == comparable(first)
        assert [seen for seen, _headers in server.seen].count(path) == 1


async def test_a_crashed_extraction_worker_fails_the_run_with_a_clear_reason(
    server: LocalServer,  # noqa: F811
) -> None:
    install_routes(server)
    pool = WorkPool(1, name="extraction worker")
    pool.start()

    async def crash(function: object, *args: object) -> object:
        return await pool.run(pool_jobs.die_by_signal)

    try:
        argv = ("link-understand", "--url", server.url("/article"))
        result = await asyncio.wait_for(
            run_in_process(argv, timeout_seconds=20, policy=LOCAL, extract=crash), 30
        )
        assert (result.outcome, result.reason) == (
            "failed",
            "extraction worker crashed (killed by signal 9)",
        )
        # The slot has a fresh worker: the next run goes through.
        after = await run_in_process(argv, timeout_seconds=20, policy=LOCAL, extract=pool.run)
        assert after.outcome == "success"
    finally:
        pool.close()


async def test_a_run_timing_out_in_extraction_leaves_no_worker_stuck(
    server: LocalServer,  # noqa: F811
) -> None:
    install_routes(server)
    pool = WorkPool(1)
    pool.start()

    async def hang(function: object, *args: object) -> object:
        return await pool.run(pool_jobs.hang)

    try:
        argv = ("link-understand", "--url", server.url("/article"))
        late = await run_in_process(argv, timeout_seconds=1, policy=LOCAL, extract=hang)
        assert late.reason == "timed out after 1s"
        after = await asyncio.wait_for(
            run_in_process(argv, timeout_seconds=20, policy=LOCAL, extract=pool.run), 30
        )
        assert after.outcome == "success"
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("argv", "builtin"),
    [
        (("link-understand", "--url", "x"), True),
        ((f"{SCRIPTS}/link-understand", "--url", "x"), False),
        (("./link-understand",), False),
        (("link-understand-extra",), False),
        (("python", "-m", "enrichment.cli.link_understand"), False),
        ((), False),
    ],
    ids=["bare-name", "by-path", "relative-path", "other-name", "module", "empty"],
)
def test_only_the_bare_name_runs_in_process(argv: tuple[str, ...], builtin: bool) -> None:
    assert is_builtin(argv) is builtin


# --- the stored tools.web.fetch settings (issue 15) and the cache rules (issue 17) ----------

SETTINGS_CASES = [
    ("config-max-chars", ["--url", "{u}/article"], {"max_chars": 300}),
    ("flag-beats-config", ["--url", "{u}/article", "--max-chars", "200"], {"max_chars": 300}),
    ("cap-beats-flag", ["--url", "{u}/article", "--max-chars", "900"], {"max_chars_cap": 150}),
    ("config-body-limit", ["--url", "{u}/huge", "--no-wrap"], {"max_response_bytes": 32_000}),
    ("config-no-redirects", ["--url", "{u}/loop-a"], {"max_redirects": 0}),
    ("config-timeout", ["--url", "{u}/slow"], {"timeout_seconds": 1}),
    ("flag-timeout-beats-config", ["--url", "{u}/slow", "--timeout", "1"], {"timeout_seconds": 9}),
    ("user-agent", ["--url", "{u}/ua"], {"user_agent": "TidePool/1.0"}),
]


@pytest.mark.parametrize(
    ("args", "fields"), [c[1:] for c in SETTINGS_CASES], ids=[c[0] for c in SETTINGS_CASES]
)
async def test_in_process_applies_the_stored_fetch_settings_like_the_subprocess(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
    args: list[str],
    fields: dict[str, Any],
) -> None:
    """The subprocess gets ``tools.web.fetch`` in ``LINK_UNDERSTAND_FETCH``; the in-process run
    gets the same ``WebFetchConfig`` and must give the same answer."""
    install_routes(server)
    server.routes["/ua"] = page(ARTICLE)
    settings = WebFetchConfig(ssrf_policy=LOCAL, **fields)
    argv = ("link-understand", *(arg.format(u=server.url("")) for arg in args))
    env = script_env(**fetch_environment(settings))
    spawned = await run_command(argv, timeout_seconds=20, env=env)
    inside = await run_in_process(
        argv, timeout_seconds=20, policy=LOCAL, settings=settings, extract=pool.run
    )
    assert comparable(inside) == comparable(spawned)
    if "user_agent" in fields:
        agents = [headers.get("user-agent") for path, headers in server.seen if path == "/ua"]
        assert agents == ["TidePool/1.0", "TidePool/1.0"]
    if "max_chars" in fields and "--max-chars" not in args:
        assert inside.outcome == "success" and len(inside.stdout_text) < 1000


class DictCache:
    def __init__(self) -> None:
        self.entries: dict[str, str] = {}
        self.asked = 0

    async def get(self, key: str) -> str | None:
        self.asked += 1
        return self.entries.get(key)

    async def set(self, key: str, value: str) -> None:
        self.entries[key] = value


async def test_a_page_cached_under_a_permissive_policy_is_refused_after_tightening(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
) -> None:
    """As the script (``test_linkcli``): the guard runs before the cache is asked, and the
    policy is part of the cache key."""
    server.routes["/post"] = page(ARTICLE)
    store = DictCache()
    cache = AsyncPageCache(get=store.get, set=store.set)
    argv = ("link-understand", "--url", server.url("/post"))

    async def inside(policy: SsrfPolicy) -> CommandResult:
        settings = WebFetchConfig(ssrf_policy=policy)
        return await run_in_process(argv, timeout_seconds=20, policy=policy, settings=settings,
                                    cache=cache, extract=pool.run)  # fmt: skip

    permissive = SsrfPolicy(allow_private_network=True)
    assert (await inside(permissive)).outcome == "success"
    assert (await inside(permissive)).outcome == "success"
    assert len(server.seen) == 1 and len(store.entries) == 1  # the second came from the cache
    asked = store.asked
    refused = await inside(SsrfPolicy())
    assert (
        refused.stderr_tail
        == f"http://127.0.0.1:{server.port}: Blocked: loopback address 127.0.0.1"
    )
    assert store.asked == asked and len(server.seen) == 1  # refused before the cache was asked
    spawned = await run_command(
        argv, timeout_seconds=20, env=script_env(LINK_UNDERSTAND_SSRF_POLICY="{}")
    )
    assert comparable(refused) == comparable(spawned)
    # Under LOCAL the key differs (the policy is in it): a miss, fetched again.
    assert (await inside(LOCAL)).outcome == "success"
    assert len(server.seen) == 2 and len(store.entries) == 2


async def test_a_zero_cache_ttl_turns_the_cache_off(
    server: LocalServer,  # noqa: F811
    pool: WorkPool,
) -> None:
    server.routes["/post"] = page(ARTICLE)
    store = DictCache()
    cache = AsyncPageCache(get=store.get, set=store.set)
    argv = ("link-understand", "--url", server.url("/post"))
    settings = WebFetchConfig(ssrf_policy=LOCAL, cache_ttl_minutes=0)
    for _ in range(2):
        result = await run_in_process(argv, timeout_seconds=20, policy=LOCAL, settings=settings,
                                      cache=cache, extract=pool.run)  # fmt: skip
        assert result.outcome == "success"
    assert len(server.seen) == 2 and store.asked == 0 and store.entries == {}
