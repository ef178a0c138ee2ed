"""Media CLIs get the template variables OpenClaw 2026.9's media runner gives them
(``dist/runner.entries-*.mjs``), so an entry written for OpenClaw runs here unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

from enrichment.pipeline.media.understanding import Attachment, run_media_understanding
from tests.enrichment.pipeline.media.helpers import FAKES, FakeFetcher, config_of, no_which

DESCRIBE = str(FAKES / "describe.py")


async def describe(tmp_path: Path, capability: str, args: list[str], attachment: Attachment,
                   **settings: object) -> str:  # fmt: skip
    entry = {"type": "cli", "command": sys.executable, "args": [DESCRIBE, *args],
             "capabilities": [capability]}  # fmt: skip
    fetcher = FakeFetcher(tmp_path, {attachment.index: b"RIFF0000WAVEfmt " + b"\x01" * 4096})
    result = await run_media_understanding(
        config_of({"models": [entry], capability: settings}),
        "",
        [attachment],
        channel=None,
        chat_type=None,
        session_key=None,
        fetch_bytes=fetcher,
        which=no_which,
    )
    assert result.outputs, result.decisions[0].to_dict()
    return result.outputs[0].text


async def test_attachment_variables_name_the_same_file_as_the_media_ones(tmp_path: Path) -> None:
    args = ["{{AttachmentPath}}={{MediaPath}}", "{{AttachmentDir}}={{MediaDir}}",
            "{{AttachmentUrl}}={{MediaUrl}}", "{{AttachmentContentType}}={{MediaType}}",
            "#{{AttachmentIndex}}"]  # fmt: skip
    text = await describe(tmp_path, "image", args,
                          Attachment(0, url="https://cdn.test/p.png", mime="image/png"))  # fmt: skip
    path, directory, url, mime, index = text.split(" ")
    assert path.split("=")[0] == path.split("=")[1] and path.endswith("/p.png")
    assert (
        directory.split("=")[0] == directory.split("=")[1] == str(Path(path.split("=")[0]).parent)
    )  # noqa: E501
    assert url == "https://cdn.test/p.png=https://cdn.test/p.png"
    assert mime == "image/png=image/png"
    assert index == "#0"


async def test_a_local_attachment_without_url_gets_its_path_as_media_url(tmp_path: Path) -> None:
    text = await describe(tmp_path, "image", ["{{MediaUrl}}"],
                          Attachment(0, path="/inbox/photo.jpg", mime="image/jpeg"))  # fmt: skip
    assert text.endswith("/photo.jpg") and text.startswith("/")


async def test_audio_gets_the_configured_language(tmp_path: Path) -> None:
    audio = Attachment(0, url="https://cdn.test/a.wav", mime="audio/wav")
    assert (
        await describe(tmp_path, "audio", ["lang={{Language}}"], audio, language="de") == "lang=de"
    )
    assert await describe(tmp_path, "audio", ["lang={{Language}}"], audio) == "lang="
