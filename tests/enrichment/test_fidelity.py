"""Issue 15: the last deviations from the reference notes, each checked through a public
surface — ``PUT/GET /api/config``, ``POST /api/enrich``, ``POST /api/files/extract`` and the
``link-understand`` script — with real subprocesses (``/bin/sh``, ``/bin/echo``), a fake
OpenAI-compatible provider and web pages served from 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from enrichment.models import Run
from tests.enrichment.cli.test_link_understand import REPO_ROOT, failure_line, run
from tests.enrichment.conftest import SUMMARIZER
from tests.enrichment.pipeline.fetch.test_webfetch import ARTICLE, LocalServer, page, redirect, send
from tests.enrichment.pipeline.fetch.test_webfetch import server as server  # noqa: F401 (fixture)
from tests.enrichment.test_admin import change_url, form_errors, form_values

WAV = b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(2100)  # above the 1024-byte audio minimum
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)
PROVIDER_ENV = (
    "OPENAI",
    "GROQ",
    "DEEPGRAM",
    "GOOGLE",
    "GEMINI",
    "MISTRAL",
    "ANTHROPIC",
    "MINIMAX",
    "MINIMAX_PORTAL",
    "ZAI",
    "MOONSHOT",
)


# --- helpers --------------------------------------------------------------------------------


def put_config(client: Client, document: dict[str, Any]):
    return client.put("/api/config", json.dumps(document), content_type="application/json")


def get_config(client: Client) -> dict[str, Any]:
    response = client.get("/api/config")
    assert response.status_code == 200
    return response.json()


def enrich(client: Client, payload: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/enrich", json.dumps(payload), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def links_document(*models: dict[str, Any], **links: Any) -> dict[str, Any]:
    return {
        "tools": {
            "links": {"models": list(models), **links},
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        }
    }


def summarizer_model(**extra: Any) -> dict[str, Any]:
    return {"type": "cli", "command": sys.executable, "args": [SUMMARIZER, "{{LinkUrl}}"], **extra}


def media_document(media: dict[str, Any]) -> dict[str, Any]:
    return {"tools": {"links": {"models": []}, "media": media}}


def attachment(data: bytes, name: str, mime: str) -> dict[str, str]:
    return {"data": base64.b64encode(data).decode("ascii"), "name": name, "mime": mime}


def record(result: dict[str, Any], capability: str) -> dict[str, Any]:
    return next(item for item in result["media"] if item["capability"] == capability)


def attempts(result: dict[str, Any], capability: str) -> list[dict[str, Any]]:
    return record(result, capability)["attachments"][0]["attempts"]


class ProviderServer(ThreadingHTTPServer):
    """An OpenAI-compatible API on 127.0.0.1; any path prefix (``/groq/v1``...) is accepted,
    so several "providers" can share it and the test sees which one was called."""

    calls: list[dict[str, Any]]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class ProviderHandler(BaseHTTPRequestHandler):
    server: ProviderServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        call: dict[str, Any] = {"path": self.path, "auth": self.headers.get("Authorization")}
        if self.path.endswith("/chat/completions"):
            call["json"] = json.loads(body)
            answer = {"choices": [{"message": {"content": "a red bicycle"}}]}
        else:
            answer = {"text": "call me back"}
        self.server.calls.append(call)
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def provider() -> Iterator[ProviderServer]:
    httpd = ProviderServer(("127.0.0.1", 0), ProviderHandler)
    httpd.calls = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings) -> None:
    """No provider keys and no local media CLIs from the host: discovery sees only what a
    test puts there."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(f"{name}_API_KEY", raising=False)
        monkeypatch.delenv(f"{name}_BASE_URL", raising=False)
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()


# --- 1. numbers are kept as given or refused --------------------------------------------------


def test_fractional_link_timeouts_are_stored_as_given(staff_client: Client) -> None:
    document = links_document(summarizer_model(timeoutSeconds=1.9), timeoutSeconds=2.5)
    document["tools"]["web"]["fetch"]["cacheTtlMinutes"] = 0.5
    document["agents"] = {"list": [{"id": "ops", "tools": {"links": {"timeoutSeconds": 1.25}}}]}
    assert put_config(staff_client, document).status_code == 200
    stored = get_config(staff_client)
    assert stored["tools"]["links"]["models"][0]["timeoutSeconds"] == 1.9
    assert stored["tools"]["links"]["timeoutSeconds"] == 2.5
    assert stored["tools"]["web"]["fetch"]["cacheTtlMinutes"] == 0.5
    assert stored["agents"]["list"][0]["tools"]["links"]["timeoutSeconds"] == 1.25


def test_whole_numbers_come_back_as_whole_numbers(staff_client: Client) -> None:
    document = links_document(summarizer_model(timeoutSeconds=20), timeoutSeconds=30)
    assert put_config(staff_client, document).status_code == 200
    assert b'"timeoutSeconds": 20' in staff_client.get("/api/config").content
    stored = get_config(staff_client)
    assert stored["tools"]["links"]["timeoutSeconds"] == 30
    assert isinstance(stored["tools"]["links"]["timeoutSeconds"], int)
    assert isinstance(stored["tools"]["links"]["models"][0]["timeoutSeconds"], int)


def test_fractional_media_numbers_are_kept(staff_client: Client) -> None:
    media = {"image": {"timeoutSeconds": 2.5, "models": [{"provider": "openai"}]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    assert get_config(staff_client)["tools"]["media"]["image"]["timeoutSeconds"] == 2.5


@pytest.mark.parametrize(
    ("patch", "path", "message"),
    [
        ({"links": {"maxLinks": 2.5}}, "tools.links.maxLinks", "must be an integer"),
        ({"links": {"concurrency": 1.5}}, "tools.links.concurrency", "must be an integer"),
        ({"links": {"timeoutSeconds": 0.5}}, "tools.links.timeoutSeconds", "at least 1"),
        ({"web": {"fetch": {"timeoutSeconds": 2.5}}}, "tools.web.fetch.timeoutSeconds", "integer"),
        ({"web": {"fetch": {"maxChars": 100.5}}}, "tools.web.fetch.maxChars", "integer"),
        (
            {"web": {"fetch": {"maxResponseBytes": 3_000_000_000}}},
            "tools.web.fetch.maxResponseBytes",
            "must be at most 2147483647",
        ),
        ({"links": {"maxLinks": 10**20}}, "tools.links.maxLinks", "must be at most"),
        ({"web": {"fetch": {"maxRedirects": 1.5}}}, "tools.web.fetch.maxRedirects", "integer"),
        ({"web": {"fetch": {"cacheTtlMinutes": -0.5}}}, "tools.web.fetch.cacheTtlMinutes", "least"),
        (
            {"media": {"image": {"maxChars": 1.5}}},
            "tools.media.image.maxChars",
            "must be an integer",
        ),
        (
            {"media": {"audio": {"maxBytes": 10.5}}},
            "tools.media.audio.maxBytes",
            "must be an integer",
        ),
        (
            {"media": {"image": {"attachments": {"maxAttachments": 1.5}}}},
            "tools.media.image.attachments.maxAttachments",
            "must be an integer",
        ),
        ({"media": {"concurrency": 1.5}}, "tools.media.concurrency", "must be an integer"),
    ],
    ids=[
        "max-links",
        "concurrency",
        "timeout-below-1",
        "fetch-timeout",
        "max-chars",
        "max-response-bytes-overflow",
        "max-links-overflow",
        "max-redirects",
        "negative-ttl",
        "media-max-chars",
        "media-max-bytes",
        "media-max-attachments",
        "media-concurrency",
    ],
)
def test_numbers_that_cannot_be_kept_are_refused_naming_the_path(
    staff_client: Client, patch: dict[str, Any], path: str, message: str
) -> None:
    before = get_config(staff_client)
    document = links_document(summarizer_model())
    for key, value in patch.items():
        block = document["tools"].setdefault(key, {})
        for inner_key, inner_value in value.items():
            if isinstance(inner_value, dict) and isinstance(block.get(inner_key), dict):
                block[inner_key].update(inner_value)
            else:
                block[inner_key] = inner_value
    response = put_config(staff_client, document)
    assert response.status_code == 422, response.content
    errors = " | ".join(response.json()["errors"])
    assert path in errors and message in errors, errors
    assert get_config(staff_client) == before  # nothing changed


def test_a_fractional_timeout_is_what_the_cli_gets(staff_client: Client) -> None:
    """1.5 s, not 1 s: the kill comes after about 1.5 s and the reason says so."""
    slow = {
        "type": "cli",
        "command": "/bin/sh",
        "args": ["-c", "exec /bin/sleep 5"],
        "timeoutSeconds": 1.5,
    }
    assert put_config(staff_client, links_document(slow)).status_code == 200
    result = enrich(staff_client, {"body": "see http://127.0.0.1/slow"})
    [attempt] = result["links"]["urls"][0]["attempts"]
    assert attempt["outcome"] == "failed"
    assert attempt["reason"] == "timed out after 1.5s"
    assert attempt["durationMs"] >= 1400


def test_a_cli_finishing_inside_a_fractional_timeout_succeeds(staff_client: Client) -> None:
    """1.9 s truncated to 1 s would kill a CLI that needs 1.2 s."""
    command = {
        "type": "cli",
        "command": "/bin/sh",
        "args": ["-c", "/bin/sleep 1.2 && echo slow but fine"],
        "timeoutSeconds": 1.9,
    }
    assert put_config(staff_client, links_document(command)).status_code == 200
    result = enrich(staff_client, {"body": "see http://127.0.0.1/slow"})
    chosen = result["links"]["urls"][0]["chosen"]
    assert chosen["outcome"] == "success" and chosen["durationMs"] >= 1200
    assert result["body"].endswith("slow but fine")


def test_admin_keeps_fractional_timeouts_and_refuses_what_the_api_refuses(
    staff_client: Client,
) -> None:
    """The admin runs the same validators: 1.9 / 2.5 / 0.5 are stored as typed, the
    fractional fetch timeout is a field error (as it is a 422 from the API)."""
    assert put_config(staff_client, links_document(summarizer_model())).status_code == 200
    values = form_values(staff_client.get(change_url()).content.decode())
    values["link_models-0-timeout_seconds"] = "1.9"
    values["links_timeout_seconds"] = "2.5"
    values["fetch_cache_ttl_minutes"] = "0.5"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 302, form_errors(response)
    stored = get_config(staff_client)["tools"]
    assert stored["links"]["models"][0]["timeoutSeconds"] == 1.9
    assert stored["links"]["timeoutSeconds"] == 2.5
    assert stored["web"]["fetch"]["cacheTtlMinutes"] == 0.5

    values = form_values(staff_client.get(change_url()).content.decode())
    values["fetch_timeout_seconds"] = "2.5"
    response = staff_client.post(change_url(), values)
    assert response.status_code == 200
    assert "fetch_timeout_seconds" in response.context["adminform"].form.errors
    assert get_config(staff_client)["tools"] == stored


# --- 2. auto-discovery follows the notes' provider order -----------------------------------


def test_audio_auto_discovery_tries_groq_before_deepgram(
    staff_client: Client, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DEEPGRAM", "GROQ", "MISTRAL"):  # alphabetical order would pick deepgram
        monkeypatch.setenv(f"{name}_API_KEY", f"key-{name.lower()}")
        monkeypatch.setenv(f"{name}_BASE_URL", f"{provider.base}/{name.lower()}/v1")
    assert put_config(staff_client, media_document({})).status_code == 200
    result = enrich(
        staff_client, {"body": "hi", "attachments": [attachment(WAV, "a.wav", "audio/wav")]}
    )
    chosen = record(result, "audio")["attachments"][0]["chosen"]
    assert (chosen["provider"], chosen["model"]) == ("groq", "whisper-large-v3-turbo")
    assert [call["path"] for call in provider.calls] == ["/groq/v1/audio/transcriptions"]


def test_image_auto_discovery_tries_openai_before_anthropic(
    staff_client: Client, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC", "OPENAI", "ZAI"):
        monkeypatch.setenv(f"{name}_API_KEY", f"key-{name.lower()}")
        monkeypatch.setenv(f"{name}_BASE_URL", f"{provider.base}/{name.lower()}/v1")
    assert put_config(staff_client, media_document({})).status_code == 200
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    chosen = record(result, "image")["attachments"][0]["chosen"]
    assert (chosen["provider"], chosen["model"]) == ("openai", "gpt-5-mini")
    assert [call["path"] for call in provider.calls] == ["/openai/v1/chat/completions"]


# --- 3. default image models -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider_id", "env", "model"),
    [
        ("anthropic", "ANTHROPIC", "claude-opus-4-6"),
        ("google", "GOOGLE", "gemini-3-flash-preview"),
        ("minimax", "MINIMAX", "MiniMax-VL-01"),
        ("minimax-portal", "MINIMAX_PORTAL", "MiniMax-VL-01"),
        ("zai", "ZAI", "glm-4.6v"),
    ],
)
def test_image_entry_without_a_model_uses_the_provider_default(
    staff_client: Client,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    provider_id: str,
    env: str,
    model: str,
) -> None:
    monkeypatch.setenv(f"{env}_API_KEY", "secret")
    entry = {"provider": provider_id, "baseUrl": f"{provider.base}/v1"}
    assert (
        put_config(staff_client, media_document({"image": {"models": [entry]}})).status_code == 200
    )
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    chosen = record(result, "image")["attachments"][0]["chosen"]
    assert chosen == {
        "type": "provider",
        "outcome": "success",
        "provider": provider_id,
        "model": model,
    }
    [call] = provider.calls
    assert call["json"]["model"] == model and call["auth"] == "Bearer secret"
    assert result["body"] == "[Image]\nDescription:\na red bicycle"


def test_minimax_portal_is_an_image_provider_for_shared_entries(
    staff_client: Client, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared entry inherits its provider's capabilities from the registry (notes §7.1, §9)."""
    monkeypatch.setenv("MINIMAX_PORTAL_API_KEY", "secret")
    entry = {"provider": "minimax-portal", "baseUrl": f"{provider.base}/v1"}
    assert put_config(staff_client, media_document({"models": [entry]})).status_code == 200
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    assert record(result, "image")["outcome"] == "success"


# --- 4. user text without the placeholder and its parenthetical ----------------------------------


@pytest.mark.parametrize(
    ("body", "user_text"),
    [
        ("<media:audio> (voice) hello there", "hello there"),
        ("<MEDIA:audio>(voice note)   hello there", "hello there"),
        ("<media:audio> hello (there)", "hello (there)"),
    ],
    ids=["parenthetical", "upper-case-no-space", "later-parenthesis-stays"],
)
def test_placeholder_and_its_parenthetical_are_not_user_text(
    staff_client: Client,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    user_text: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": f"{provider.base}/v1"}
    assert (
        put_config(staff_client, media_document({"audio": {"models": [entry]}})).status_code == 200
    )
    result = enrich(
        staff_client, {"body": body, "attachments": [attachment(WAV, "a.wav", "audio/wav")]}
    )
    assert result["body"] == f"[Audio]\nUser text:\n{user_text}\nTranscript:\ncall me back"


def test_placeholder_with_only_a_parenthetical_has_no_user_text(
    staff_client: Client, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": f"{provider.base}/v1"}
    assert (
        put_config(staff_client, media_document({"audio": {"models": [entry]}})).status_code == 200
    )
    result = enrich(
        staff_client,
        {"body": "<media:audio> (voice)", "attachments": [attachment(WAV, "a.wav", "audio/wav")]},
    )
    assert result["body"] == "[Audio]\nTranscript:\ncall me back"


# --- 5. the configured prompt is trimmed ---------------------------------------------------------


def test_configured_prompt_is_trimmed_before_the_length_instruction(staff_client: Client) -> None:
    echo = {"type": "cli", "command": "/bin/echo", "args": ["{{Prompt}}"]}
    media = {"image": {"prompt": "  Summarize  ", "models": [echo]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    assert result["body"] == "[Image]\nDescription:\nSummarize Respond in at most 500 characters."


def test_blank_prompt_falls_back_to_the_default(staff_client: Client) -> None:
    echo = {"type": "cli", "command": "/bin/echo", "args": ["{{Prompt}}"], "prompt": "   "}
    media = {"image": {"maxChars": 80, "models": [echo]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    assert result["body"].endswith("\nDescribe the image. Respond in at most 80 characters.")


def test_provider_request_carries_the_trimmed_prompt(
    staff_client: Client, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    entry = {
        "provider": "openai",
        "baseUrl": f"{provider.base}/v1",
        "prompt": "\n Name the colour \t",
    }
    media = {"image": {"maxChars": 40, "models": [entry]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    enrich(staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]})
    [call] = provider.calls
    text = call["json"]["messages"][0]["content"][0]["text"]
    assert text == "Name the colour Respond in at most 40 characters."


# --- 6. CLI attempts keep their provider label -----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "outcome", "reason"),
    [("/bin/true", "skipped", "empty output"), ("/bin/false", "failed", "exited with code 1")],
    ids=["empty-output", "non-zero-exit"],
)
def test_cli_attempt_keeps_the_configured_provider_label(
    staff_client: Client, command: str, outcome: str, reason: str
) -> None:
    labelled = {"type": "cli", "command": command, "provider": "local-vision"}
    unlabelled = {"type": "cli", "command": command}
    media = {"image": {"models": [labelled, unlabelled]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    first, second = attempts(result, "image")
    assert (first["outcome"], first["reason"], first["provider"]) == (
        outcome,
        reason,
        "local-vision",
    )
    assert first["model"] == command
    assert (second["outcome"], second["reason"]) == (outcome, reason)
    assert "provider" not in second


def test_cli_attempt_skipped_before_running_keeps_its_label(staff_client: Client) -> None:
    labelled = {"type": "cli", "command": "/bin/echo", "args": ["x"], "provider": "local-asr"}
    media = {"audio": {"models": [labelled]}}
    assert put_config(staff_client, media_document(media)).status_code == 200
    tiny = attachment(b"RIFF" + bytes(100), "tiny.wav", "audio/wav")
    result = enrich(staff_client, {"body": "", "attachments": [tiny]})
    [attempt] = attempts(result, "audio")
    assert attempt["outcome"] == "skipped" and attempt["reason"].startswith("tooSmall: ")
    assert attempt["provider"] == "local-asr"


def test_successful_cli_attempt_still_reports_cli(staff_client: Client) -> None:
    labelled = {"type": "cli", "command": "/bin/echo", "args": ["a cat"], "provider": "local"}
    assert (
        put_config(staff_client, media_document({"image": {"models": [labelled]}})).status_code
        == 200
    )
    result = enrich(
        staff_client, {"body": "", "attachments": [attachment(PNG, "a.png", "image/png")]}
    )
    chosen = record(result, "image")["attachments"][0]["chosen"]
    assert (chosen["provider"], chosen["model"], chosen["outcome"]) == (
        "cli",
        "/bin/echo",
        "success",
    )


# --- 7. web fetch: no Content-Type, tiny pages -----------------------------------------------------


def untyped(body: bytes):
    return lambda handler: send(handler, 200, body)  # no Content-Type header at all


def wrapped_text(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_untyped_plain_text_is_returned(server: LocalServer) -> None:
    server.routes["/notes"] = untyped(b"Shopping list: eggs, milk and bread.\n")
    stdout = wrapped_text(run("--url", server.url("/notes"), "--no-wrap"))
    assert stdout == "Shopping list: eggs, milk and bread.\n"


def test_untyped_cp1252_text_is_returned(server: LocalServer) -> None:
    server.routes["/menu"] = untyped("Caf\u00e9 cr\u00e8me \u2013 2 \u20ac".encode("cp1252"))
    stdout = wrapped_text(run("--url", server.url("/menu"), "--no-wrap"))
    assert stdout == "Caf\u00e9 cr\u00e8me \u2013 2 \u20ac\n"


def test_untyped_html_shell_is_returned_as_text(server: LocalServer) -> None:
    body = b"<html><body><div id=app>Hi</div></body></html>"
    server.routes["/app"] = untyped(body)
    stdout = wrapped_text(run("--url", server.url("/app"), "--no-wrap"))
    assert stdout == body.decode() + "\n"


def test_untyped_binary_still_fails(server: LocalServer) -> None:
    server.routes["/blob"] = untyped(PNG)
    line = failure_line(run("--url", server.url("/blob")))
    assert line.endswith("unsupported content type application/octet-stream")


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (b"<html><body><p>Hello there</p></body></html>", "Hello there"),
        (
            b"<html><head><title>Greeting</title></head><body><p>Hello there</p></body>",
            "# Greeting\n\nHello there",
        ),
        (b"<!doctype html><p>Opening hours: 9-17</p>", "Opening hours: 9-17"),
    ],
    ids=["two-words", "with-title", "fragment"],
)
def test_tiny_html_page_gives_its_visible_text(
    server: LocalServer, html: bytes, expected: str
) -> None:
    server.routes["/tiny"] = page(html)
    stdout = wrapped_text(run("--url", server.url("/tiny"), "--no-wrap"))
    assert stdout == expected + "\n"


@pytest.mark.parametrize(
    "html",
    [
        b"<html><head><title>Just a title</title></head><body></body></html>",
        b"<html><head><title>Same</title></head><body><h1>Same</h1></body></html>",
        b"<html><body>Loading...</body></html>",
    ],
    ids=["title-only", "title-as-heading", "placeholder-word"],
)
def test_pages_without_readable_text_still_fail(server: LocalServer, html: bytes) -> None:
    server.routes["/empty"] = page(html)
    assert failure_line(run("--url", server.url("/empty"))).endswith(": no readable content")


# --- 8. SSRF reasons start with "Blocked:" --------------------------------------------------------


def test_name_resolving_to_loopback_has_a_blocked_attempt(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from enrichment import resolver

    answers = {"intranet.example": ["127.0.0.1"], "unknown.example": []}
    monkeypatch.setattr(resolver, "resolve_host", lambda host: answers[host])
    assert put_config(staff_client, links_document(summarizer_model())).status_code == 200
    result = enrich(staff_client, {"body": "http://intranet.example/ http://unknown.example/"})
    blocked, unresolved = result["links"]["urls"]
    [attempt] = blocked["attempts"]
    assert (attempt["command"], attempt["outcome"]) == ("ssrf", "skipped")
    assert attempt["reason"] == "Blocked: resolves to loopback address 127.0.0.1"
    assert blocked["reason"] == "resolves to loopback address 127.0.0.1"  # the verdict itself
    # A name that does not resolve was not refused: its reason does not say "Blocked".
    assert unresolved["attempts"][0]["reason"] == "hostname does not resolve"
    stored = Run.objects.get(pk=result["runId"])
    assert stored.url_decisions.get(position=0).attempts.get().reason == attempt["reason"]


def _loopback_hostname() -> str:
    name = socket.gethostname()
    try:
        answers = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        answers = set()
    if not answers or not all(a.startswith("127.") or a == "::1" for a in answers):
        pytest.skip(f"this machine's name {name!r} does not resolve to loopback only")
    return name


def test_script_and_api_give_the_same_blocked_reason(
    staff_client: Client, server: LocalServer
) -> None:
    """Real DNS, no fakes: the machine's own name resolves to loopback."""
    name = _loopback_hostname()
    url = server.url("/", host=name)
    line = failure_line(run("--url", url, policy=None))
    assert line.startswith(f"http://{name}:{server.port}: Blocked: resolves to loopback address ")
    document = links_document(summarizer_model())
    document["tools"]["web"]["fetch"]["ssrfPolicy"] = {}
    assert put_config(staff_client, document).status_code == 200
    result = enrich(staff_client, {"body": f"look {url}"})
    [attempt] = result["links"]["urls"][0]["attempts"]
    assert line.endswith(": " + attempt["reason"])
    assert server.seen == []  # nothing ever connected


def test_script_literal_private_address_is_blocked(server: LocalServer) -> None:
    line = failure_line(run("--url", server.url("/"), policy=None))
    assert line == f"http://127.0.0.1:{server.port}: Blocked: loopback address 127.0.0.1"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("http://wiki.internal/", "Blocked hostname wiki.internal"),
        ("http://10.0.0.5/", "Blocked: private address 10.0.0.5"),
        ("http://metadata.google.internal/", "Blocked: cloud metadata hostname"),
    ],
    ids=["internal-name", "private-literal", "metadata-name"],
)
def test_script_redirect_to_a_refused_host_says_blocked_once(
    server: LocalServer, target: str, message: str
) -> None:
    server.routes["/hop"] = redirect(target)
    line = failure_line(run("--url", server.url("/hop")))
    assert line.startswith(f"http://127.0.0.1:{server.port}: {message}")
    assert "Blocked: blocked" not in line and "blocked hostname" not in line


@pytest.mark.parametrize(
    ("url", "inside"),
    [
        ("http://wiki.internal/notes.txt", "(blocked hostname wiki.internal)"),
        ("http://10.20.30.40/notes.txt", "(private address 10.20.30.40)"),
    ],
    ids=["internal-name", "private-literal"],
)
def test_attachment_on_a_refused_host_is_skipped_as_blocked(
    staff_client: Client, url: str, inside: str
) -> None:
    assert put_config(staff_client, media_document({})).status_code == 200
    result = enrich(staff_client, {"body": "see file", "attachments": [{"url": url}]})
    [file] = record(result, "file")["files"]
    assert file["skipped"] == (
        f"fetch-failed: blocked: Attachment 1 URL refused by the SSRF policy {inside}"
    )


# --- 10. a whitespace-only text file is a notice, not nothing ----------------------------------------


@pytest.mark.parametrize(
    ("data", "name"),
    [(b"   \n\t  \r\n", "blank.txt"), ("  \n".encode("utf-16"), "blank16.txt")],
    ids=["utf8", "utf16"],
)
def test_whitespace_only_file_gives_the_no_text_block(
    staff_client: Client, data: bytes, name: str
) -> None:
    upload = SimpleUploadedFile(name, data, content_type="text/plain")
    body = staff_client.post("/api/files/extract", {"file": upload}).json()
    assert body["skipped"] is None
    assert (
        body["block"] == f'<file name="{name}" mime="text/plain">\n[No extractable text]\n</file>'
    )


def test_whitespace_only_attachment_is_appended_to_the_body(staff_client: Client) -> None:
    assert put_config(staff_client, media_document({})).status_code == 200
    result = enrich(
        staff_client,
        {"body": "see the file", "attachments": [attachment(b" \n \n", "notes.txt", "text/plain")]},
    )
    assert result["body"] == (
        'see the file\n\n<file name="notes.txt" mime="text/plain">\n[No extractable text]\n</file>'
    )


def test_zero_byte_file_is_still_skipped_as_empty(staff_client: Client) -> None:
    upload = SimpleUploadedFile("void.txt", b"", content_type="text/plain")
    body = staff_client.post("/api/files/extract", {"file": upload}).json()
    assert (body["block"], body["skipped"]) == (None, "empty")


# --- further deviation (web-fetch notes A2/A8): tools.web.fetch reaches link-understand ----------


def test_script_takes_its_fetch_settings_from_the_environment(server: LocalServer) -> None:
    server.routes["/post"] = page(ARTICLE)
    server.routes["/hop"] = redirect("/post")
    settings = {"maxChars": 300, "userAgent": "FidelityBot/1.0", "maxRedirects": 0}
    env = {"LINK_UNDERSTAND_FETCH": json.dumps(settings)}
    result = run("--url", server.url("/post"), env=env)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.removesuffix("\n")) <= 300
    assert server.headers_for("/post")["user-agent"] == "FidelityBot/1.0"
    line = failure_line(run("--url", server.url("/hop"), env=env))
    assert line.endswith(": Too many redirects (limit: 0)")
    # The command line still wins over the config, as the tool parameter does upstream.
    wide = run("--url", server.url("/post"), "--max-chars", "2000", env=env)
    assert 300 < len(wide.stdout.removesuffix("\n")) <= 2000


def test_script_refuses_bad_fetch_settings_naming_the_key(server: LocalServer) -> None:
    env = {"LINK_UNDERSTAND_FETCH": json.dumps({"maxRedirects": -1})}
    result = run("--url", server.url("/post"), env=env)
    assert result.returncode == 2
    assert "LINK_UNDERSTAND_FETCH" in result.stderr and "maxRedirects" in result.stderr
    assert server.seen == []


def test_stored_fetch_settings_reach_the_built_in_fetcher(
    staff_client: Client, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", REPO_ROOT)  # the script imports this tree
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    server.routes["/post"] = page(ARTICLE)
    server.routes["/hop"] = redirect("/post")
    model = {"type": "cli", "command": "link-understand", "args": ["--url", "{{LinkUrl}}"]}
    document = links_document(model)
    fetch = document["tools"]["web"]["fetch"]
    fetch.update({"maxChars": 400, "userAgent": "StoredBot/2.0", "maxRedirects": 0})
    assert put_config(staff_client, document).status_code == 200
    result = enrich(staff_client, {"body": f"{server.url('/post')} {server.url('/hop')}"})
    fetched, redirected = result["links"]["urls"]
    assert fetched["chosen"] is not None, fetched["attempts"]
    assert fetched["chosen"]["stdoutBytes"] <= 401  # 400 characters of ASCII plus a newline
    assert server.headers_for("/post")["user-agent"] == "StoredBot/2.0"
    [attempt] = redirected["attempts"]
    assert attempt["outcome"] == "failed"
    assert "Too many redirects (limit: 0)" in attempt["stderrTail"]


# --- further deviation (media notes §12.1): a file fetched by URL has 10 s -----------------------


def test_file_attachment_download_gives_up_after_ten_seconds(
    staff_client: Client, server: LocalServer
) -> None:
    """Not the web fetcher's 30 s: file extraction's own timeoutMs (10 000)."""

    def slow(handler) -> None:
        time.sleep(12)
        send(handler, 200, b"too late", {"Content-Type": "text/plain"})

    server.routes["/notes.txt"] = slow
    document = links_document(summarizer_model())
    document["tools"]["media"] = {}
    assert put_config(staff_client, document).status_code == 200
    started = time.monotonic()
    result = enrich(
        staff_client, {"body": "see file", "attachments": [{"url": server.url("/notes.txt")}]}
    )
    elapsed = time.monotonic() - started
    [file] = record(result, "file")["files"]
    assert "timed out after 10s" in file["skipped"], file
    assert 9.5 <= elapsed < 12
    assert result["body"] == "see file"
