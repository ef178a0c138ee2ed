"""``link-understand`` as OpenClaw 2026.9's link model: run exactly as its link runner runs a
CLI model (``dist/link-understanding/apply.runtime.js``): every argument naming
``LinkUrl``/``LinkFinalUrl`` removed, the others templated, the fetched page on stdin, and
``OPENCLAW_LINK_URL``/``OPENCLAW_LINK_FINAL_URL`` in the environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from enrichment.config.openclaw_export import export_openclaw, names_link_url
from enrichment.pipeline.config.model import default_config
from enrichment.pipeline.fetch.link_understand import EMPTY_STDIN, stdin_cache_key
from enrichment.pipeline.fetch.link_understand_run import run_in_process
from enrichment.pipeline.fetch.wrapper import END_MARKER, START_MARKER
from enrichment.pipeline.net.ssrf import SsrfPolicy
from enrichment.pipeline.runner import run_command

SCRIPT = Path(sys.executable).with_name("link-understand")
REPO_ROOT = str(Path(__file__).resolve().parents[3])
PAGE = b"""<!doctype html><html><head><title>Harbour bridge reopens</title></head><body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/sport">Sport results</a></li>
<li><a href="/weather">Weather forecast</a></li><li><a href="/contact">Contact the newsroom</a></li>
</ul></nav>
<main><article><h1>Harbour bridge reopens after repairs</h1>
<p>The harbour bridge reopened on Monday after six weeks of repairs to its deck and railings.
Engineers replaced more than two hundred steel plates and repainted the whole span.</p>
<p>Traffic was light in the morning, but by the evening rush the queues were back. The city
council said the work finished three days ahead of schedule and under budget.</p>
<p>Read the <a href="../reports/bridge.pdf">full engineering report</a> for the details.</p>
</article></main><footer>Copyright 2026 Harbour News</footer></body></html>"""
LINK_URL = "https://news.example/b/42"
FINAL_URL = "https://news.example/articles/bridge"


def openclaw_argv(command: str, args: list[str]) -> list[str]:
    """What OpenClaw 2026.9's ``buildLinkCliArgs`` makes of a link model (no other template
    variable is set in these tests, so rendering the rest changes nothing)."""
    return [command, *(arg for arg in args if not names_link_url(arg))]


def run_as_openclaw(
    argv: list[str],
    page: bytes,
    *,
    link_url: str | None = LINK_URL,
    final_url: str | None = FINAL_URL,
    fetch: dict[str, object] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LINK_", "OPENCLAW_"))
    }  # noqa: E501
    env["PATH"] = f"{SCRIPT.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = REPO_ROOT
    if link_url is not None:
        env["OPENCLAW_LINK_URL"] = link_url
    if final_url is not None:
        env["OPENCLAW_LINK_FINAL_URL"] = final_url
    if fetch is not None:
        env["LINK_UNDERSTAND_FETCH"] = json.dumps(fetch)
    return subprocess.run(argv, input=page, capture_output=True, env=env, timeout=60, check=False)


def one_line(result: subprocess.CompletedProcess[bytes]) -> str:
    assert result.returncode == 1 and result.stdout == b"", result
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def exported_builtin_args() -> list[str]:
    """The default link model (``link-understand --url {{LinkUrl}} --format markdown``) as the
    current export writes it for OpenClaw."""
    config = {"tools": {"links": {"models": [
        {"command": m.command, "args": list(m.args)} for m in default_config().links.models
    ]}}}  # fmt: skip
    return list(export_openclaw(config).document["tools"]["links"]["models"][0]["args"])


def test_run_as_openclaws_link_runner_prints_the_main_content_not_the_menu() -> None:
    argv = openclaw_argv("link-understand", exported_builtin_args())
    assert argv == ["link-understand", "--format", "markdown"]
    result = run_as_openclaw(argv, PAGE)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert START_MARKER in text and END_MARKER in text
    assert "Engineers replaced more than two hundred steel plates" in text
    assert "under budget" in text
    for menu in ("Sport results", "Weather forecast", "Contact the newsroom"):
        assert menu not in text
    # Relative links resolve against the final URL (after redirects), not the first one.
    assert "(https://news.example/reports/bridge.pdf)" in text
    assert result.stderr == b""


def test_without_a_final_url_the_first_url_places_relative_links() -> None:
    argv = ["link-understand", "--format", "markdown", "--no-wrap"]
    result = run_as_openclaw(argv, PAGE, final_url=None)
    assert result.returncode == 0
    assert "(https://news.example/reports/bridge.pdf)" in result.stdout.decode()
    bare = run_as_openclaw(argv, PAGE, link_url=None, final_url=None)
    assert bare.returncode == 0 and "(../reports/bridge.pdf)" in bare.stdout.decode()


def test_text_format_and_max_chars_apply_to_stdin_too() -> None:
    result = run_as_openclaw(
        ["link-understand", "--format", "text", "--no-wrap", "--max-chars", "150"], PAGE
    )
    assert result.returncode == 0
    text = result.stdout.decode().rstrip("\n")
    assert len(text) == 150 and "#" not in text and text.startswith("Harbour bridge reopens")


MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("page", "fetch", "env", "line"),
    [
        (b"", None, {}, f"stdin: {EMPTY_STDIN}"),
        (b" \n\t\n", None, {}, f"stdin: {EMPTY_STDIN}"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, None, {}, "stdin: binary data (image/png), not a page"),  # noqa: E501
        (b"<html>\x00\x01\x02 text</html>", None, {}, "stdin: binary data, not a page"),
        (b"<p>x</p>" * (2_000_000 // 8 + 1), None, {}, "stdin: the page is larger than maxResponseBytes (2000000 bytes)"),  # noqa: E501
        (b"<p>x</p>" * 5000, {"maxResponseBytes": 32000}, {}, "stdin: the page is larger than maxResponseBytes (32000 bytes)"),  # noqa: E501
        (b"a" * (12 * MIB), {"maxResponseBytes": 50_000_000}, {}, "stdin: the page is larger than maxResponseBytes (10000000 bytes)"),  # noqa: E501
        (PAGE, None, {"final_url": "javascript:alert(1)"}, "OPENCLAW_LINK_FINAL_URL: not an http(s) URL: 'javascript:alert(1)'"),  # noqa: E501
        (PAGE, None, {"final_url": None, "link_url": "file:///etc/passwd"}, "OPENCLAW_LINK_URL: not an http(s) URL: 'file:///etc/passwd'"),  # noqa: E501
        (b"<html><head><title>Only a title</title></head><body><div></div></body></html>", None, {}, "stdin: no readable content"),  # noqa: E501
    ],
    ids=["empty", "blank", "png", "nul-bytes", "over-default-limit", "over-configured-limit",
         "limit-clamped-to-10mb", "bad-final-url", "bad-link-url", "title-only"],
)  # fmt: skip
def test_hostile_stdin_fails_with_one_line_naming_the_problem(
    page: bytes, fetch: dict[str, object] | None, env: dict[str, str | None], line: str
) -> None:
    result = run_as_openclaw(["link-understand", "--format", "markdown"], page, fetch=fetch,
                             **env)  # type: ignore[arg-type]  # fmt: skip
    assert one_line(result) == line


def test_a_page_exactly_at_the_limit_is_read() -> None:
    body = b"<html><body><article><p>" + b"word " * 6000 + b"</p></article></body></html>"
    padded = body + b" " * (32000 - len(body))
    result = run_as_openclaw(
        ["link-understand", "--no-wrap"], padded, fetch={"maxResponseBytes": 32000}
    )  # noqa: E501
    assert result.returncode == 0 and result.stdout.decode().startswith("word word")


def test_a_terminal_on_stdin_is_refused_instead_of_waiting() -> None:
    master, slave = os.openpty()
    try:
        env = {**os.environ, "PYTHONPATH": REPO_ROOT}
        result = subprocess.run(
            [str(SCRIPT)], stdin=slave, capture_output=True, env=env, timeout=30
        )  # noqa: E501
    finally:
        os.close(master)
        os.close(slave)
    assert result.returncode == 1
    assert result.stderr.decode().strip().startswith("stdin: no page (stdin is a terminal)")


async def test_the_server_runs_the_stdin_form_as_the_script_does_with_no_stdin() -> None:
    """Our own runner gives a CLI no stdin; in-process and subprocess fail alike, clearly."""
    argv = ("link-understand", "--format", "markdown")
    env = {
        **os.environ,
        "PYTHONPATH": REPO_ROOT,
        "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}",
    }  # noqa: E501
    spawned = await run_command(argv, timeout_seconds=30, env=env)
    inside = await run_in_process(argv, timeout_seconds=30, policy=SsrfPolicy())
    for result in (spawned, inside):
        assert (result.outcome, result.reason, result.exit_code) == (
            "failed",
            "exited with code 1",
            1,
        )  # noqa: E501
        assert result.stderr_tail == f"stdin: {EMPTY_STDIN}"


def test_the_stdin_cache_key_follows_the_address_and_the_content() -> None:
    key = stdin_cache_key(FINAL_URL, PAGE, "markdown", 100, True)
    assert re.fullmatch(r"link-understand:[0-9a-f]{64}", key)
    others = {
        stdin_cache_key("https://news.example/other", PAGE, "markdown", 100, True),
        stdin_cache_key(FINAL_URL, PAGE + b" ", "markdown", 100, True),
        stdin_cache_key(FINAL_URL, PAGE, "text", 100, True),
        stdin_cache_key(FINAL_URL, PAGE, "markdown", 100, False),
    }
    assert key not in others and len(others) == 4


def test_a_stdin_page_is_cached_under_django_settings(tmp_path: Path) -> None:
    """With a settings module the second run with the same address and page is served from
    the cache: shown by a cache file appearing after the first run."""
    settings = tmp_path / "cache_settings.py"
    settings.write_text(
        "SECRET_KEY = 'x'\nCACHES = {'default': {'BACKEND': "
        "'django.core.cache.backends.filebased.FileBasedCache', "
        f"'LOCATION': {str(tmp_path / 'cache')!r}}}}}\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO_ROOT}",
           "DJANGO_SETTINGS_MODULE": "cache_settings", "OPENCLAW_LINK_FINAL_URL": FINAL_URL}  # fmt: skip
    first = subprocess.run([str(SCRIPT)], input=PAGE, capture_output=True, env=env, timeout=60)
    assert first.returncode == 0, first.stderr
    assert list((tmp_path / "cache").glob("*.djcache"))
    second = subprocess.run([str(SCRIPT)], input=PAGE, capture_output=True, env=env, timeout=60)
    assert second.stdout == first.stdout
