"""Fakes and sample data shared by the media core tests."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from enrichment.pipeline.config.media import (
    MediaConfig,
    parse_media_config,
)
from enrichment.pipeline.media.providers import (
    LocalFile,
)
from enrichment.pipeline.media.understanding import (
    Attachment,
)
from enrichment.pipeline.runner import CommandResult

FAKES = Path(__file__).parent.parent / "fake_media_clis"
FIXTURES = Path(__file__).parent.parent / "fixtures"
MIB = 1024 * 1024
WAV = b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(2100)  # > 1024 bytes: not "too small"


def config_of(obj: object) -> MediaConfig:
    config, issues = parse_media_config(obj)
    assert issues == []
    return config


def make_cli(tmp_path: Path, name: str, script: str) -> str:
    """A wrapper named like the real tool (command ids matter) running a fake script."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / name
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKES / script}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


class FakeFetcher:
    """Writes each attachment's bytes to a temp file, like the guarded downloader would."""

    def __init__(self, tmp_path: Path, contents: Mapping[int, bytes | BaseException]) -> None:
        self.tmp_path = tmp_path
        self.contents = contents
        self.calls: list[int] = []
        self.written: list[Path] = []

    async def __call__(self, attachment: Attachment) -> LocalFile:
        self.calls.append(attachment.index)
        await asyncio.sleep(0)
        value = self.contents[attachment.index]
        if isinstance(value, BaseException):
            raise value
        source = attachment.path or attachment.url or f"media-{attachment.index + 1}"
        name = os.path.basename(source.split("?", 1)[0])
        target = self.tmp_path / "downloads" / str(attachment.index) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(value)
        self.written.append(target)
        return LocalFile(str(target), len(value), attachment.mime, name, temporary=True)


class CountingRunner:
    """In-process runner that measures how many CLIs run at once."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.in_flight = 0
        self.peak = 0
        self.argvs: list[tuple[str, ...]] = []

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        timeout_seconds: float,
        max_stdout_bytes: int = 0,
        cwd: str | None = None,
    ) -> CommandResult:
        self.argvs.append(tuple(argv))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        return CommandResult("success", None, 0, 1, f"seen by {argv[0]}", 10, "")


def no_which(name: str) -> str | None:
    return None


def fake_which(tools: Mapping[str, str]) -> object:
    return lambda name: tools.get(name)
