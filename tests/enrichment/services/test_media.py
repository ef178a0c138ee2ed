"""Media understanding wired into ``services.enrichment_run`` and the REST API (issue 7).

Real subprocesses (the fake ``whisper-cli``), a real HTTP server on 127.0.0.1 for attachment
downloads and the OpenAI-compatible provider, real files under a temporary ``MEDIA_ROOT``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.files.uploadedfile import SimpleUploadedFile

from common.errors import DomainError
from enrichment.config.changes import config_replace
from enrichment.models import Run
from enrichment.pipeline.config.media import MediaConfig, parse_media_config
from enrichment.pipeline.media.entry import ProviderAccess
from enrichment.services import runs as services
from enrichment.services.media import MAX_UPLOAD_BYTES, local_tools, provider_access
from enrichment.services.runs import EnrichRequest
from tests.enrichment.conftest import SUMMARIZER

pytestmark = pytest.mark.django_db(transaction=True)

FAKES = Path(__file__).parents[1] / "pipeline" / "fake_media_clis"
WAV = b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(2100)  # > 1024 bytes: not "too small"
PROVIDER_KEYS = ("OPENAI_API_KEY", "GROQ_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


# --- fixtures and helpers -----------------------------------------------------------------


class FakeServer(ThreadingHTTPServer):
    """Attachments for download plus an OpenAI-compatible transcription endpoint."""

    transcript = "call me back"
    requests: list[dict[str, Any]]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakeServer
    FILES = {
        "/note.wav": (WAV, "audio/wav"),
        "/big.wav": (bytes(5000), "audio/wav"),
        "/notes.txt": (b"shopping list: eggs, milk\n", "text/plain; charset=utf-8"),
    }

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        found = self.FILES.get(self.path)
        if found is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", found[1])
        self.send_header("Content-Length", str(len(found[0])))
        self.end_headers()
        self.wfile.write(found[0])

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.server.requests.append(
            {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body}
        )
        answer = json.dumps({"text": self.server.transcript}).encode()
        self.send_response(200 if self.path == "/v1/audio/transcriptions" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    httpd = FakeServer(("127.0.0.1", 0), Handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def isolated(tmp_path, settings, monkeypatch) -> Path:
    """Own MEDIA_ROOT and temp dir (to see leftovers); no provider keys from the host."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for key in PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)
    return temp


def leftovers(temp: Path) -> list[str]:
    return sorted(path.name for path in temp.iterdir())


def whisper_cli(tmp_path: Path) -> str:
    """A wrapper named ``whisper-cli`` (the command id matters) running the fake script."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "whisper-cli"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKES / "whisper_cli.py"}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def whisper_entry(command: str) -> dict[str, Any]:
    return {
        "type": "cli",
        "command": command,
        "args": ["-otxt", "-of", "{{OutputBase}}", "{{MediaPath}}"],
    }


def document(media: dict[str, Any]) -> dict[str, Any]:
    """Link CLI = the test summarizer; 127.0.0.1 allowed for links and downloads."""
    return {
        "tools": {
            "links": {
                "models": [
                    {"type": "cli", "command": sys.executable, "args": [SUMMARIZER, "{{LinkUrl}}"]}
                ]
            },
            "media": media,
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        }
    }


@pytest.fixture
def whisper_config(tmp_path) -> str:
    command = whisper_cli(tmp_path)
    config_replace(document=document({"audio": {"models": [whisper_entry(command)]}}))
    return command


def enrich(body: str, *attachments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    request = EnrichRequest(body=body, attachments=tuple(attachments), **extra)
    return async_to_sync(services.enrichment_run)(request=request)


def capability(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(record for record in result["media"] if record["capability"] == name)


def audio_attempt(result: dict[str, Any]) -> dict[str, Any]:
    attempts = capability(result, "audio")["attachments"][0]["attempts"]
    assert len(attempts) == 1
    return attempts[0]


def file_outcome(result: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return capability(result, "file")["files"][index]


# --- audio through the real fake whisper-cli ------------------------------------------------


def test_uploaded_audio_is_transcribed_and_the_decision_stored(whisper_config, isolated) -> None:
    result = enrich(
        "what did she say?",
        {"name": "note.wav", "mime": "audio/wav", "data": WAV},
        channel="telegram",
    )
    transcript = f"whisper-cli heard attachment-1-note.wav ({len(WAV)} bytes)"
    assert result["body"] == f"[Audio]\nUser text:\nwhat did she say?\nTranscript:\n{transcript}"
    audio = capability(result, "audio")
    assert audio["outcome"] == "success"
    chosen = audio["attachments"][0]["chosen"]
    assert chosen["provider"] == "cli" and chosen["model"] == whisper_config
    assert [r["capability"] for r in result["media"]] == ["image", "audio", "video", "file"]
    assert file_outcome(result)["skipped"] == "transcribed"

    run = Run.objects.get(pk=result["runId"])
    assert run.media == result["media"]
    assert run.enriched_body == result["body"]
    assert run.original_body == "what did she say?"
    assert leftovers(isolated) == []


def test_local_path_inside_media_root_is_used_in_place(whisper_config, settings) -> None:
    (settings.MEDIA_ROOT / "inbound").mkdir()
    (settings.MEDIA_ROOT / "inbound" / "voice.wav").write_bytes(WAV)
    result = enrich("<media:audio>", {"path": "inbound/voice.wav"})
    assert result["body"].endswith(f"whisper-cli heard voice.wav ({len(WAV)} bytes)")
    # An absolute path inside the root and a file:// URL are the same file.
    absolute = str(settings.MEDIA_ROOT / "inbound" / "voice.wav")
    for attachment in ({"path": absolute}, {"url": "file://" + absolute}):
        again = enrich("<media:audio>", attachment)
        assert capability(again, "audio")["outcome"] == "success"
    assert (settings.MEDIA_ROOT / "inbound" / "voice.wav").exists()  # never deleted


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside.wav", "blocked: Attachment 1 path '../outside.wav' contains '..'"),
        ("inbound/../../outside.wav", "contains '..' (path traversal)"),
        (
            "/etc/outside.wav",
            "blocked: Attachment 1 path '/etc/outside.wav' is outside the media root",
        ),
        ("link.wav", "blocked: Attachment 1 path 'link.wav' is outside the media root"),
        ("missing.wav", "notFound: Attachment 1: no file at 'missing.wav'"),
        ("folder.wav", "blocked: Attachment 1 path 'folder.wav' is not a regular file"),
        ("pipe.wav", "blocked: Attachment 1 path 'pipe.wav' is not a regular file (a FIFO)"),
        ("file:///etc/outside.wav", "is outside the media root"),
    ],
    ids=[
        "dotdot",
        "dotdot-inside",
        "absolute-outside",
        "symlink-out",
        "missing",
        "directory",
        "fifo",
        "file-url",
    ],
)
def test_local_paths_outside_the_media_root_are_refused(
    whisper_config, settings, tmp_path, path, reason
) -> None:
    (tmp_path / "outside.wav").write_bytes(WAV)
    (settings.MEDIA_ROOT / "link.wav").symlink_to(tmp_path / "outside.wav")
    (settings.MEDIA_ROOT / "folder.wav").mkdir()
    os.mkfifo(settings.MEDIA_ROOT / "pipe.wav")  # opening it to read would wait for a writer
    key = "url" if path.startswith("file:") else "path"
    result = enrich("<media:audio>", {key: path})
    attempt = audio_attempt(result)
    assert attempt["outcome"] == "skipped"
    assert reason in attempt["reason"]
    assert capability(result, "audio")["outcome"] == "skipped"
    assert result["body"] == "<media:audio>"
    stored = Run.objects.get(pk=result["runId"]).media
    assert reason in stored[1]["attachments"][0]["attempts"][0]["reason"]


# --- downloads ----------------------------------------------------------------------------


def test_downloaded_audio_is_transcribed_once_and_the_temp_file_removed(
    whisper_config, server, isolated
) -> None:
    result = enrich("listen", {"url": server.base + "/note.wav"})
    assert result["body"].endswith(f"whisper-cli heard attachment-1-note.wav ({len(WAV)} bytes)")
    assert capability(result, "audio")["outcome"] == "success"
    assert leftovers(isolated) == []


def test_url_on_a_private_address_is_refused_with_the_ssrf_reason(whisper_config) -> None:
    result = enrich("listen", {"url": "http://10.20.30.40/note.wav"})
    attempt = audio_attempt(result)
    assert attempt["outcome"] == "skipped"
    assert attempt["reason"].startswith("blocked: Attachment 1 URL refused by the SSRF policy (")
    assert "10.20.30.40" in attempt["reason"]


def test_download_failure_is_recorded(whisper_config, server) -> None:
    result = enrich("listen", {"url": server.base + "/gone.wav"})
    attempt = audio_attempt(result)
    assert attempt["outcome"] == "failed"
    assert attempt["reason"] == ("AttachmentDownloadError: Attachment 1 download failed: HTTP 404")


def test_download_larger_than_max_bytes_is_skipped(tmp_path, server) -> None:
    entry = {**whisper_entry(whisper_cli(tmp_path)), "maxBytes": 4096}
    config_replace(document=document({"audio": {"models": [entry]}}))
    result = enrich("listen", {"url": server.base + "/big.wav"})
    attempt = audio_attempt(result)
    assert attempt["outcome"] == "skipped"
    # The download is capped at the largest limit of the attachment's consumers (5 MiB
    # for files here), then the entry's own 4096 refuses it.
    assert attempt["reason"] == "maxBytes: Attachment 1 exceeds maxBytes 4096"


def test_text_file_attachment_becomes_a_file_block(whisper_config, server, settings) -> None:
    (settings.MEDIA_ROOT / "todo.md").write_text("# Today\n- call Bob\n")
    result = enrich(
        "see attached",
        {"url": server.base + "/notes.txt"},
        {"path": "todo.md"},
        {"name": "data.csv", "data": b"a,b\n1,2\n"},
    )
    assert result["body"].startswith('see attached\n\n<file name="notes.txt" mime="text/plain">')
    assert "shopping list: eggs, milk" in result["body"]
    assert "# Today\n- call Bob" in result["body"]
    assert "a,b\n1,2" in result["body"]
    files = capability(result, "file")
    assert files["outcome"] == "success"
    assert [f["skipped"] for f in files["files"]] == [None, None, None]
    assert [r["outcome"] for r in result["media"][:3]] == ["no-attachment"] * 3


def test_text_file_download_failure_is_recorded_in_the_file_record(whisper_config, server) -> None:
    result = enrich("see attached", {"url": server.base + "/gone.txt"})
    outcome = file_outcome(result)
    assert outcome["skipped"] == (
        "fetch-failed: AttachmentDownloadError: Attachment 1 download failed: HTTP 404"
    )
    assert capability(result, "file")["outcome"] == "skipped"
    assert result["body"] == "see attached"


def test_message_without_attachments_has_no_media_records(whisper_config) -> None:
    result = enrich("just text")
    assert result["media"] == []
    assert result["body"] == "just text"


# --- the HTTP provider ----------------------------------------------------------------------


def test_openai_compatible_provider_with_key_from_env(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": server.base + "/v1"}
    config_replace(document=document({"audio": {"models": [entry]}}))
    result = enrich("hi", {"url": server.base + "/note.wav"})
    assert result["body"] == "[Audio]\nUser text:\nhi\nTranscript:\ncall me back"
    chosen = capability(result, "audio")["attachments"][0]["chosen"]
    assert chosen == {
        "type": "provider",
        "outcome": "success",
        "provider": "openai",
        "model": "whisper-1",
    }
    [call] = server.requests
    assert call["path"] == "/v1/audio/transcriptions"
    assert call["authorization"] == "Bearer sk-test-123"
    assert WAV in call["body"]  # the downloaded bytes went up as the multipart file


def test_provider_without_a_key_fails_with_the_reason(server) -> None:
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": server.base + "/v1"}
    config_replace(document=document({"audio": {"models": [entry]}}))
    result = enrich("hi", {"url": server.base + "/note.wav"})
    assert audio_attempt(result)["reason"] == "no API key for provider openai"
    assert server.requests == []


def test_media_then_links_a_url_in_a_transcript_gets_enriched(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spoken = server.base + "/menu"
    monkeypatch.setattr(FakeServer, "transcript", f"the menu is at {spoken}")
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": server.base + "/v1"}
    config_replace(document=document({"audio": {"models": [entry]}}))
    result = enrich("", {"url": server.base + "/note.wav"})
    assert result["body"].startswith(f"[Audio]\nTranscript:\nthe menu is at {spoken}")
    assert f"Summary of {spoken}" in result["body"]
    assert [u["url"] for u in result["links"]["urls"]] == [spoken]
    assert result["links"]["outcome"] == "success"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, {}),
        ({"OPENAI_API_KEY": "k1"}, {"openai": ProviderAccess("k1")}),
        ({"GEMINI_API_KEY": "g"}, {"google": ProviderAccess("g")}),
        (
            {"GROQ_API_KEY": "", "GROQ_BASE_URL": "http://x/v1"},
            {"groq": ProviderAccess(None, "http://x/v1")},
        ),
        ({"MY_LLM_API_KEY": "m"}, {"my-llm": ProviderAccess("m")}),
        ({"UNRELATED_API_KEY": "u"}, {}),
    ],
    ids=["none", "openai", "gemini-alias", "base-url-only", "configured-provider", "unknown"],
)
def test_provider_keys_come_from_the_environment(environ, expected) -> None:
    config = parse_media_config({"audio": {"models": [{"provider": "my-llm", "model": "m"}]}})[0]
    assert provider_access(config, environ) == expected


def test_local_tool_models_come_from_the_environment() -> None:
    tools = local_tools({"WHISPER_CPP_MODEL": "/m/ggml.bin", "SHERPA_ONNX_MODEL_DIR": ""})
    assert tools.whisper_cpp_model == "/m/ggml.bin" and tools.sherpa_model_dir is None
    assert provider_access(MediaConfig(), {"OPENAI_API_KEY": "x"}) == {
        "openai": ProviderAccess("x")
    }


# --- cleanup on failure ---------------------------------------------------------------------


def test_temp_files_are_gone_after_a_failing_cli(server, isolated) -> None:
    failing = {"type": "cli", "command": "/bin/sh", "args": ["-c", "exit 3", "{{MediaPath}}"]}
    config_replace(document=document({"audio": {"models": [failing]}}))
    result = enrich(
        "x",
        {"name": "a.wav", "data": WAV},
        {"url": server.base + "/note.wav"},
        {"name": "b.txt", "data": b"plain text"},
    )
    assert capability(result, "audio")["attachments"][0]["attempts"][0]["outcome"] == "failed"
    assert leftovers(isolated) == []


def test_temp_files_are_gone_when_the_run_itself_fails(
    whisper_config, monkeypatch, isolated
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("links exploded")

    from enrichment.pipeline.links import stage as links_stage

    monkeypatch.setattr(links_stage, "run_link_understanding", broken)
    with pytest.raises(DomainError, match="links exploded"):
        enrich("x", {"name": "a.wav", "data": WAV})
    assert leftovers(isolated) == []
    run = Run.objects.get()
    assert run.outcome == "error"


def test_temp_files_are_gone_when_media_itself_crashes(
    whisper_config, monkeypatch, isolated
) -> None:
    from enrichment.services import media as media_glue

    async def crash(*args: Any, **kwargs: Any) -> None:
        assert leftovers(isolated)  # the upload is on disk while the core runs
        raise RuntimeError("core exploded")

    monkeypatch.setattr(media_glue, "run_media_understanding", crash)
    with pytest.raises(DomainError, match="core exploded"):
        enrich("x", {"name": "a.wav", "data": WAV})
    assert leftovers(isolated) == []


# --- the REST API -------------------------------------------------------------------------


def test_enrich_json_with_base64_data(user_client, whisper_config) -> None:
    import base64

    payload = {
        "body": "hi",
        "attachments": [
            {"name": "n.wav", "mime": "audio/wav", "data": base64.b64encode(WAV).decode()}
        ],
    }
    response = user_client.post("/api/enrich", payload, content_type="application/json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert capability(result, "audio")["outcome"] == "success"
    assert "whisper-cli heard attachment-1-n.wav" in result["body"]


@pytest.mark.parametrize(
    ("attachment", "message"),
    [
        ({"data": "not base64!"}, "not valid base64"),
        ({"data": "UklGRg==", "url": "http://127.0.0.1/a.wav"}, "either data or url/path"),
    ],
    ids=["bad-base64", "data-and-url"],
)
def test_enrich_json_rejects_bad_attachment_data(
    user_client, whisper_config, attachment, message
) -> None:
    payload = {"body": "hi", "attachments": [attachment]}
    response = user_client.post("/api/enrich", payload, content_type="application/json")
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Run.objects.exists()


def test_multipart_upload(user_client, whisper_config, settings, isolated) -> None:
    (settings.MEDIA_ROOT / "n.txt").write_text("from the media root")
    payload = {"body": "two files", "channel": "web", "attachments": [{"path": "n.txt"}]}
    response = user_client.post(
        "/api/enrich/upload",
        {
            "payload": json.dumps(payload),
            "files": [
                SimpleUploadedFile("voice.wav", WAV, content_type="audio/wav"),
                SimpleUploadedFile("list.txt", b"eggs", content_type="application/octet-stream"),
            ],
        },
    )
    assert response.status_code == 200, response.content
    result = response.json()
    assert f"whisper-cli heard attachment-2-voice.wav ({len(WAV)} bytes)" in result["body"]
    assert "from the media root" in result["body"] and "eggs" in result["body"]
    files = capability(result, "file")["files"]
    assert [(f["attachmentIndex"], f["name"], f["skipped"]) for f in files] == [
        (0, "n.txt", None),
        (1, "voice.wav", "transcribed"),
        (2, "list.txt", None),
    ]
    assert Run.objects.get(pk=result["runId"]).channel == "web"
    assert leftovers(isolated) == []


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        ("{nope", 422, "payload: not valid JSON"),
        (json.dumps({"chatType": "direct"}), 422, "payload.body"),
    ],
    ids=["malformed", "missing-body"],
)
def test_multipart_upload_rejects_a_bad_payload(
    user_client, whisper_config, payload, status, message
) -> None:
    response = user_client.post(
        "/api/enrich/upload",
        {"payload": payload, "files": [SimpleUploadedFile("a.wav", WAV, content_type="audio/wav")]},
    )
    assert response.status_code == status
    assert message in response.content.decode()


def test_multipart_upload_over_25_mib_is_refused_with_the_limit(
    user_client, whisper_config
) -> None:
    big = SimpleUploadedFile("huge.wav", bytes(MAX_UPLOAD_BYTES + 1), content_type="audio/wav")
    response = user_client.post(
        "/api/enrich/upload", {"payload": json.dumps({"body": "x"}), "files": [big]}
    )
    assert response.status_code == 413
    assert response.json()["detail"] == (
        "File 'huge.wav' too large: the limit is 25 MiB (26214400 bytes) per file."
    )  # the upload handler stops the parse at the cap: the file's whole size is never read
    assert not Run.objects.exists()


def test_upload_endpoint_is_documented(user_client) -> None:
    schema = user_client.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/enrich/upload"]["post"]
    assert "multipart/form-data" in operation["requestBody"]["content"]
    assert "payload" in operation["description"] and "25 MiB" in operation["description"]
