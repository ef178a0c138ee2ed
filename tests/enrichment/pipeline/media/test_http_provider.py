"""The OpenAI-compatible HTTP provider against a local server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from enrichment.pipeline.media.providers import (
    ProviderAccess,
)
from enrichment.pipeline.media.understanding import (
    Attachment,
    run_media_understanding,
)
from enrichment.pipeline.runner import CommandResult
from tests.enrichment.pipeline.media.helpers import (
    WAV,
    CountingRunner,
    FakeFetcher,
    config_of,
    no_which,
)

# --- OpenAI-compatible HTTP provider against a local server -------------------------------


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        server: FakeProviderServer = self.server  # type: ignore[assignment]
        server.requests.append((self.path, dict(self.headers), body))
        status, payload = server.replies.get(self.path, (404, b"{}"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return


class FakeProviderServer(ThreadingHTTPServer):
    requests: list[tuple[str, dict[str, str], bytes]]
    replies: dict[str, tuple[int, bytes]]


@pytest.fixture
def provider_server() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer(("127.0.0.1", 0), _Handler)
    server.requests, server.replies = [], {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def base_url(server: FakeProviderServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


async def test_http_audio_transcription(
    tmp_path: Path, provider_server: FakeProviderServer
) -> None:
    provider_server.replies["/v1/audio/transcriptions"] = (
        200,
        json.dumps({"text": " bonjour "}).encode(),
    )
    config = config_of(
        {
            "audio": {
                "language": "fr",
                "models": [{"provider": "groq", "baseUrl": base_url(provider_server)}],
            }
        }
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/in/v.ogg", mime="audio/ogg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: WAV}),
        which=no_which,
        providers={"groq": ProviderAccess(api_key="sk-test")},
    )
    assert result.body == "[Audio]\nTranscript:\nbonjour"
    chosen = result.decisions[1].attachments[0].chosen
    assert chosen is not None and (chosen.provider, chosen.model) == (
        "groq",
        "whisper-large-v3-turbo",
    )
    path, headers, body = provider_server.requests[0]
    assert path == "/v1/audio/transcriptions" and headers["Authorization"] == "Bearer sk-test"
    assert b'name="model"\r\n\r\nwhisper-large-v3-turbo' in body
    assert b'name="language"\r\n\r\nfr' in body and WAV in body and b'filename="v.ogg"' in body


async def test_http_image_description(tmp_path: Path, provider_server: FakeProviderServer) -> None:
    reply = {"choices": [{"message": {"content": "A red square on white, " + "very " * 50}}]}
    provider_server.replies["/v1/chat/completions"] = (200, json.dumps(reply).encode())
    config = config_of(
        {
            "image": {
                "maxChars": 30,
                "headers": {"X-Org": "ops"},
                "models": [{"provider": "openai", "model": "gpt-4o-mini"}],
            }
        }
    )
    result = await run_media_understanding(
        config,
        "what is it",
        [Attachment(0, path="/in/p.png", mime="image/png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"\x89PNGdata"}),
        which=no_which,
        providers={"OpenAI": ProviderAccess(api_key="k", base_url=base_url(provider_server))},
    )
    assert result.outputs[0].text == "A red square on white, very ve"
    _, headers, body = provider_server.requests[0]
    sent = json.loads(body)
    assert headers["X-Org"] == "ops" and sent["model"] == "gpt-4o-mini"
    content = sent["messages"][0]["content"]
    assert content[0] == {
        "type": "text",
        "text": "Describe the image. Respond in at most 30 characters.",
    }
    assert content[1]["image_url"]["url"] == "data:image/png;base64,iVBOR2RhdGE="


@pytest.mark.parametrize(
    ("status", "payload", "access", "reason"),
    [
        (500, b"{}", "k", "HTTP 500 from provider openai"),
        (200, b"not json", "k", "RuntimeError: provider returned invalid JSON"),
        (200, b'{"choices": []}', "k", "RuntimeError: provider response has no text"),
        (200, b"{}", None, "no API key for provider openai"),
    ],
    ids=["server-error", "bad-json", "no-text", "no-key"],
)
async def test_http_failures_are_attempts(
    tmp_path: Path,
    provider_server: FakeProviderServer,
    status: int,
    payload: bytes,
    access: str | None,
    reason: str,
) -> None:
    provider_server.replies["/v1/chat/completions"] = (status, payload)
    config = config_of(
        {
            "image": {
                "models": [
                    {"provider": "openai", "model": "m", "baseUrl": base_url(provider_server)}
                ]
            }
        }
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/p.png")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"img"}),
        which=no_which,
        providers={"openai": ProviderAccess(api_key=access)},
    )
    attempt = result.decisions[0].attachments[0].attempts[0]
    assert (attempt.outcome, attempt.reason) == ("failed", reason)


async def test_http_video_is_unsupported(tmp_path: Path) -> None:
    config = config_of({"video": {"models": [{"provider": "google", "model": "g"}]}})
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/c.mp4")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: b"v"}),
        which=no_which,
    )
    attempt = result.decisions[2].attachments[0].attempts[0]
    assert attempt.outcome == "skipped" and (attempt.reason or "").startswith("unsupported:")


class ScriptedRunner(CountingRunner):
    """Records argv; ffmpeg 'converts' by writing the target file unless told to fail."""

    def __init__(self, ffmpeg_exit: int) -> None:
        super().__init__(delay=0)
        self.ffmpeg_exit = ffmpeg_exit

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = 0,
        cwd: str | None = None,
    ) -> CommandResult:
        self.argvs.append(tuple(argv))
        if argv[0] == "ffmpeg":
            if self.ffmpeg_exit == 0:
                Path(argv[-1]).write_bytes(WAV)
                return CommandResult("skipped", "empty output", 0, 1, "", 0, "")
            return CommandResult("failed", "exited with code 1", 1, 1, "", 0, "bad input")
        return CommandResult("success", None, 0, 1, f"heard {Path(argv[-1]).name}", 9, "")


@pytest.mark.parametrize(
    ("ffmpeg_exit", "expected"),
    [
        (0, ("success", None)),
        (1, ("failed", "RuntimeError: ffmpeg conversion failed: exited with code 1")),
    ],
    ids=["converted", "ffmpeg-fails"],
)
async def test_whisper_cli_gets_a_wav(
    tmp_path: Path, ffmpeg_exit: int, expected: tuple[str, str | None]
) -> None:
    runner = ScriptedRunner(ffmpeg_exit)
    config = config_of(
        {"audio": {"models": [{"command": "whisper-cli", "args": ["{{MediaPath}}"]}]}}
    )
    result = await run_media_understanding(
        config,
        "",
        [Attachment(0, path="/in/voice.ogg")],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=FakeFetcher(tmp_path, {0: WAV}),
        runner=runner,
        which=no_which,
    )
    attempt = result.decisions[1].attachments[0].attempts[0]
    assert (attempt.outcome, attempt.reason) == expected
    ffmpeg = runner.argvs[0]
    assert ffmpeg[:3] == ("ffmpeg", "-y", "-i") and ffmpeg[3].endswith("voice.ogg")
    assert ffmpeg[4:10] == ("-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le")
    if ffmpeg_exit == 0:
        assert runner.argvs[1] == ("whisper-cli", ffmpeg[-1])
        assert result.outputs[0].text == "heard voice.wav"


async def test_cancelled_run_still_removes_downloads(tmp_path: Path) -> None:
    started = asyncio.Event()

    class HangingRunner(CountingRunner):
        async def __call__(
            self,
            argv: Sequence[str],
            *,
            timeout_seconds: float,
            max_stdout_bytes: int = 0,
            cwd: str | None = None,
        ) -> CommandResult:
            started.set()
            await asyncio.sleep(60)
            raise AssertionError("not reached")

    fetcher = FakeFetcher(tmp_path, {0: b"img"})
    run = asyncio.ensure_future(
        run_media_understanding(
            config_of({"image": {"models": [{"command": "x"}]}}),
            "",
            [Attachment(0, path="/a.png")],
            channel=None,
            chat_type=None,
            session_key=None,
            fetch_bytes=fetcher,
            runner=HangingRunner(),
            which=no_which,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    assert fetcher.written[0].exists()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


# --- the provider client itself (aiohttp) ---------------------------------------------------


async def test_provider_answer_arriving_in_many_pieces_is_read_whole(
    provider_server: FakeProviderServer,
) -> None:
    from enrichment.pipeline.media.http import HttpRequest, provider_post

    text = "word " * 400_000  # ~2 MB: many TCP reads
    provider_server.replies["/v1/chat/completions"] = (200, json.dumps({"text": text}).encode())
    request = HttpRequest(
        f"{base_url(provider_server)}/chat/completions", (("X-Test", "1"),), 10, json_body={}
    )
    response = await provider_post(request)
    assert response.status == 200 and json.loads(response.body)["text"] == text
    path, headers, body = provider_server.requests[-1]
    assert headers["X-Test"] == "1" and json.loads(body) == {}


async def test_provider_answer_over_the_limit_is_refused_with_the_limit(
    provider_server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from enrichment.pipeline.media import http

    monkeypatch.setattr(http, "MAX_PROVIDER_RESPONSE_BYTES", 1000)
    provider_server.replies["/v1/audio/transcriptions"] = (200, b"x" * 5000)
    request = http.HttpRequest(
        f"{base_url(provider_server)}/audio/transcriptions",
        (),
        10,
        form=(("model", "m"),),
        file=("file", "a.wav", b"RIFF", "audio/wav"),
    )
    with pytest.raises(RuntimeError, match="larger than 1000 bytes"):
        await http.provider_post(request)
    assert b'name="model"\r\n\r\nm' in provider_server.requests[-1][2]
