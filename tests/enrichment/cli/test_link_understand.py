"""The installed ``link-understand`` console script, run as a real subprocess."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from enrichment.pipeline.fetch.wrapper import END_MARKER, SECURITY_NOTICE, START_MARKER
from tests.enrichment.pipeline.fetch.test_webfetch import (
    ARTICLE,
    LocalServer,
    page,
    redirect,
    send,
)
from tests.enrichment.pipeline.fetch.test_webfetch import server as server  # noqa: F401 (fixture)

SCRIPT = Path(sys.executable).with_name("link-understand")
# The repo root on the path, so the script works even when the editable install predates
# the package (its import finder then has no mapping for `enrichment`).
REPO_ROOT = str(Path(__file__).resolve().parents[3])
ALLOW_LOCAL = json.dumps({"allowedHostnames": ["127.0.0.1"]})


def run(
    *args: str,
    policy: str | None = ALLOW_LOCAL,
    env: dict[str, str] | None = None,
    module: bool = False,
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LINK_"))}
    if policy is not None:
        environment["LINK_UNDERSTAND_SSRF_POLICY"] = policy
    environment["PYTHONPATH"] = REPO_ROOT
    extra = dict(env or {})
    if "PYTHONPATH" in extra:
        environment["PYTHONPATH"] = f"{extra.pop('PYTHONPATH')}{os.pathsep}{REPO_ROOT}"
    environment.update(extra)
    command = [sys.executable, "-m", "enrichment.cli.link_understand"] if module else [str(SCRIPT)]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, env=environment, timeout=60
    )


def failure_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_console_script_is_installed() -> None:
    assert SCRIPT.exists()


def test_prints_wrapped_article(server: LocalServer) -> None:
    server.routes["/post"] = page(ARTICLE)
    result = run("--url", server.url("/post"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(SECURITY_NOTICE + "\n\n\n" + START_MARKER)
    assert result.stdout.endswith(END_MARKER + "\n")
    assert "# Tide pools" in result.stdout and "Anemones, limpets" in result.stdout
    assert "Ignore all previous instructions" not in result.stdout
    assert "Copyright 2025" not in result.stdout


def test_text_format_and_max_chars_via_module(server: LocalServer) -> None:
    server.routes["/post"] = page(ARTICLE)
    result = run(
        "--url", server.url("/post"), "--format", "text", "--max-chars", "800", module=True
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout.removesuffix("\n")
    assert len(text) == 800 and text.endswith(END_MARKER)
    assert "# Tide" not in text and "Tide pools" in text


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        (lambda h: send(h, 404, b"<html>gone</html>"), "HTTP 404"),
        (redirect("http://10.0.0.5/"), "Blocked: private address 10.0.0.5"),
        (redirect("http://169.254.169.254/latest/meta-data/"), "Blocked: "),
        (page(b"\x89PNG\r\n\x1a\n", "image/png"), "unsupported content type image/png"),
        (page(b"<html><head><title>T</title></head><body></body></html>"), "no readable content"),
        (lambda h: (time.sleep(3), send(h, 200, b"late"))[1], "timed out after 0.5s"),
    ],
    ids=["http-404", "redirect-private", "redirect-metadata", "binary", "title-only", "timeout"],
)  # fmt: skip
def test_failures_are_one_line_naming_the_origin(
    server: LocalServer, route: object, expected: str
) -> None:
    server.routes["/p?q=secret"] = route  # type: ignore[assignment]
    line = failure_line(run("--url", server.url("/p?q=secret"), "--timeout", "0.5"))
    assert line.startswith(f"http://127.0.0.1:{server.port}: {expected}")
    assert "secret" not in line  # only the origin is named, never path or query


def test_default_policy_blocks_loopback(server: LocalServer) -> None:
    server.routes["/"] = page(ARTICLE)
    line = failure_line(run("--url", server.url("/"), policy=None))
    assert line == f"http://127.0.0.1:{server.port}: Blocked: loopback address 127.0.0.1"
    assert server.seen == []


def test_private_network_opt_in_via_env(server: LocalServer) -> None:
    server.routes["/"] = page(ARTICLE)
    result = run("--url", server.url("/"), policy='{"allowPrivateNetwork": true}')
    assert result.returncode == 0 and "Tide pools" in result.stdout


def test_html_file_without_wrapper(tmp_path: Path) -> None:
    html = ARTICLE.replace(b"<p>Anemones", b'<p><a href="/life">Anemones</a>')
    path = tmp_path / "page.html"
    path.write_bytes(html)
    result = run("--html-file", str(path), "--base-url", "https://coast.test/blog/", "--no-wrap")
    assert result.returncode == 0, result.stderr
    assert START_MARKER not in result.stdout and SECURITY_NOTICE not in result.stdout
    assert result.stdout.startswith("# Tide pools\n\n")
    assert "[Anemones](https://coast.test/life)" in result.stdout


def test_missing_html_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.html"
    assert failure_line(run("--html-file", str(missing))).startswith(f"{missing}: No such file")


@pytest.mark.parametrize(
    ("args", "policy", "message"),
    [
        (["--url", "http://a.test", "--html-file", "x"], ALLOW_LOCAL, "not allowed with"),
        (["--url", "http://a.test", "--format", "pdf"], ALLOW_LOCAL, "invalid choice: 'pdf'"),
        (["--url", "http://a.test", "--max-chars", "0"], ALLOW_LOCAL, "must be positive"),
        (["--url", "http://a.test", "--max-chars", "lots"], ALLOW_LOCAL, "not an integer"),
        (["--url", "http://a.test", "--timeout", "-1"], ALLOW_LOCAL, "positive number"),
        (["--url", "http://a.test", "--base-url", "http://b"], ALLOW_LOCAL, "--base-url only"),
        (["--url", "http://a.test"], "{nope", "LINK_UNDERSTAND_SSRF_POLICY: not valid JSON"),
        (["--url", "http://a.test"], '{"allowAll": true}', "unknown SSRF policy key"),
        (["--url", "http://a.test"], "[1]", "expected a JSON object"),
    ],
    ids=["two-sources", "bad-format", "zero-max-chars", "junk-max-chars",
         "negative-timeout", "base-url-without-file", "policy-not-json",
         "policy-unknown-key", "policy-not-object"],
)  # fmt: skip
def test_bad_arguments_exit_2(args: list[str], policy: str, message: str) -> None:
    result = run(*args, policy=policy)
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr and "usage: link-understand" in result.stderr


def test_invalid_url_fails_cleanly() -> None:
    assert failure_line(run("--url", "ftp://files.test/x")) == (
        "ftp://files.test: Invalid URL: must be http or https"
    )


SETTINGS = """
SECRET_KEY = "test-only"
INSTALLED_APPS: list[str] = []
CACHES = {{"default": {{"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                        "LOCATION": {location!r}}}}}
"""


def test_django_cache_is_used_when_configured(server: LocalServer, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    (tmp_path / "cli_cache_settings.py").write_text(SETTINGS.format(location=str(cache_dir)))
    env = {"DJANGO_SETTINGS_MODULE": "cli_cache_settings", "PYTHONPATH": str(tmp_path)}
    server.routes["/post"] = page(ARTICLE)
    url = server.url("/post")

    before = time.time()
    first = run("--url", url, env=env)
    written_by = time.time()
    second = run("--url", url, env=env)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert second.stdout == first.stdout and len(server.seen) == 1  # served from the cache

    assert run("--url", url, "--format", "text", env=env).returncode == 0  # other mode: a miss
    assert run("--url", url, "--no-cache", env=env).returncode == 0  # bypass
    assert run("--url", url).returncode == 0  # no settings module: no cache
    assert len(server.seen) == 4

    entries = sorted(cache_dir.glob("*.djcache"), key=lambda entry: entry.stat().st_mtime)
    assert len(entries) == 2
    for entry in entries:
        with entry.open("rb") as handle:
            expires_at = pickle.load(handle)
        # A 15-minute TTL from the moment of writing, whatever the machine's load made of the
        # seconds between the runs.
        assert before + 900 <= expires_at <= time.time() + 900
    with entries[0].open("rb") as handle:  # the entry the first run wrote
        expires_at = pickle.load(handle)
    # 15-minute TTL from the moment of writing (however slow the machine is today).
    assert before + 900 - 1 <= expires_at <= written_by + 900 + 1


def test_malformed_redirect_is_one_line_not_a_traceback(server: LocalServer) -> None:
    server.routes["/go"] = redirect("http:%2F%2F127.0.0.1/x")
    line = failure_line(run("--url", server.url("/go")))
    assert line == f"http://127.0.0.1:{server.port}: Invalid redirect location"


def project_settings_env(tmp_path: Path) -> dict[str, str]:
    """The project's own settings (root logger on stderr at INFO), kept inside ``tmp_path``."""
    return {
        "DJANGO_SETTINGS_MODULE": "controlui.settings",
        "LOG_LEVEL": "DEBUG",
        "CONTROLUI_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SECRET_KEY": "test-only-" + "k" * 40,
    }


def test_no_framework_logs_on_stderr_under_the_project_settings(
    server: LocalServer, tmp_path: Path
) -> None:
    server.routes["/post"] = page(ARTICLE)
    server.routes["/go"] = redirect("http:%2F%2F127.0.0.1/x")
    env = project_settings_env(tmp_path)
    result = run("--url", server.url("/post"), env=env)
    assert result.returncode == 0 and "Tide pools" in result.stdout
    assert result.stderr == ""  # no "INFO httpx: HTTP Request ..." lines
    line = failure_line(run("--url", server.url("/go"), env=env))
    assert line == f"http://127.0.0.1:{server.port}: Invalid redirect location"


def test_page_cached_under_a_permissive_policy_is_refused_after_tightening(
    server: LocalServer, tmp_path: Path
) -> None:
    (tmp_path / "cli_cache_settings.py").write_text(SETTINGS.format(location=str(tmp_path / "c")))
    env = {"DJANGO_SETTINGS_MODULE": "cli_cache_settings", "PYTHONPATH": str(tmp_path)}
    server.routes["/post"] = page(ARTICLE)
    url = server.url("/post")
    permissive = json.dumps({"allowPrivateNetwork": True})
    assert run("--url", url, policy=permissive, env=env).returncode == 0
    assert run("--url", url, policy=permissive, env=env).returncode == 0
    assert len(server.seen) == 1  # the second answer came from the cache
    line = failure_line(run("--url", url, policy=None, env=env))
    assert line == f"http://127.0.0.1:{server.port}: Blocked: loopback address 127.0.0.1"
    assert len(server.seen) == 1
