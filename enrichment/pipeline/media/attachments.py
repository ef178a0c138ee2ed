"""Attachments of a message: their kind, which ones a capability takes, one fetch each.

``AttachmentCache`` fetches every attachment at most once per run, whatever number of
capabilities (and the file extraction afterwards) ask for it, and deletes temporary downloads
at the end even when the run fails. File extraction of the attachments that no capability
turned into text lives here too: each one leaves a ``FileOutcome`` (``skipped="binary"`` for
media, ``"transcribed"`` for audio already in the transcript, ``"too-large"``…).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from enrichment.pipeline.config.media import CAPABILITIES, AttachmentPolicy, Capability
from enrichment.pipeline.files.extraction import (
    FileExtraction,
    FileLimits,
    extract_file_block,
    forced_text_mime,
    media_kind,
)
from enrichment.pipeline.files.regular import read_regular_file
from enrichment.pipeline.media.entry import LocalFile, MediaSkipError


@dataclass(frozen=True)
class Attachment:
    index: int  # 0-based position in the message
    url: str | None = None
    path: str | None = None
    mime: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class FileOutcome:
    attachment_index: int
    name: str | None
    mime: str | None
    encoding: str | None
    skipped: str | None  # None when a block was appended

    def to_dict(self) -> dict[str, object]:
        return {
            "attachmentIndex": self.attachment_index,
            "name": self.name,
            "mime": self.mime,
            "encoding": self.encoding,
            "skipped": self.skipped,
        }


# Downloads (guarded URL fetch) or locates (media root) one attachment. Raise MediaSkipError
# for expected refusals ("blocked", "timeout", "maxBytes", "empty"); any other exception is
# recorded as a failed attempt. Return ``temporary=True`` for files the run should delete.
FetchBytes = Callable[[Attachment], Awaitable[LocalFile]]


def attachment_kind(attachment: Attachment) -> Capability | None:
    """From the mime, else the extension of the path (or of an http(s) URL's path)."""
    location = attachment.path
    if not location and attachment.url:
        location = urlsplit(attachment.url).path
    kind = media_kind(attachment.mime, location or attachment.name)
    return kind if kind in CAPABILITIES else None


def select_attachments(
    attachments: Sequence[Attachment], capability: Capability, policy: AttachmentPolicy
) -> list[Attachment]:
    matching = [a for a in attachments if attachment_kind(a) == capability]
    if policy.prefer == "last":
        matching.reverse()
    elif policy.prefer in ("path", "url"):
        has = [a for a in matching if getattr(a, policy.prefer)]
        matching = has + [a for a in matching if not getattr(a, policy.prefer)]
    count = max(1, policy.max_attachments) if policy.mode == "all" else 1
    return matching[:count]


class AttachmentCache:
    """One fetch per attachment for the whole run, shared by capabilities and files."""

    def __init__(self, fetch_bytes: FetchBytes) -> None:
        self._fetch_bytes = fetch_bytes
        self._fetches: dict[int, asyncio.Task[LocalFile]] = {}

    async def get(self, attachment: Attachment, max_bytes: int) -> LocalFile:
        task = self._fetches.get(attachment.index)
        if task is None:
            task = asyncio.ensure_future(self._fetch(attachment))
            self._fetches[attachment.index] = task
        # shield: one capability giving up must not cancel the download others wait for.
        local = await asyncio.shield(task)
        if local.size > max_bytes:
            raise MediaSkipError(
                "maxBytes", f"Attachment {attachment.index + 1} exceeds maxBytes {max_bytes}"
            )
        return local

    async def _fetch(self, attachment: Attachment) -> LocalFile:
        if not attachment.path and not attachment.url:
            raise MediaSkipError("empty", f"Attachment {attachment.index + 1} has no path or URL.")
        return await self._fetch_bytes(attachment)

    async def cleanup(self) -> None:
        """Delete every temporary download; a fetch still running is cancelled first."""
        tasks = list(self._fetches.values())
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        for task in tasks:
            if task.cancelled() or task.exception() is not None:
                continue
            local = task.result()
            if local.temporary:
                with contextlib.suppress(OSError):
                    os.remove(local.path)


# --- files --------------------------------------------------------------------------------


FileExtractor = Callable[..., Awaitable[FileExtraction]]


async def extract_in_thread(
    data: bytes, *, name: str | None, mime: str | None, limits: FileLimits, fallback_name: str
) -> FileExtraction:
    """The default ``FileExtractor``: off the event loop, in a thread. The service passes one
    that runs in a killable worker process instead (a thread cannot be stopped)."""
    return await asyncio.to_thread(
        extract_file_block, data, name=name, mime=mime, limits=limits, fallback_name=fallback_name
    )


async def extract_attachment_files(
    attachments: Sequence[Attachment],
    cache: AttachmentCache,
    limits: FileLimits,
    transcribed: set[int],
    extract: FileExtractor = extract_in_thread,
) -> tuple[tuple[FileOutcome, ...], list[str]]:
    """A ``FileOutcome`` per attachment (in message order) and the ``<file>`` blocks made."""
    outcomes, blocks = [], []
    for attachment in sorted(attachments, key=lambda a: a.index):
        outcome = await _extract_one(cache, attachment, limits, transcribed, extract)
        outcomes.append(outcome[0])
        if outcome[1]:
            blocks.append(outcome[1])
    return tuple(outcomes), blocks


async def _extract_one(
    cache: AttachmentCache,
    attachment: Attachment,
    limits: FileLimits,
    transcribed: set[int],
    extract: FileExtractor,
) -> tuple[FileOutcome, str | None]:
    name = attachment.name or _basename(attachment.path or attachment.url)

    def skipped(reason: str, mime: str | None = None) -> tuple[FileOutcome, None]:
        return FileOutcome(attachment.index, name, mime or attachment.mime, None, reason), None

    if attachment.index in transcribed:
        return skipped("transcribed")
    forced = forced_text_mime(attachment.path or attachment.url or attachment.name)
    if forced is None and attachment_kind(attachment) is not None:
        return skipped("binary")
    try:
        local = await cache.get(attachment, limits.max_bytes)
        data = await asyncio.to_thread(read_regular_file, local.path, limits.max_bytes + 1)
    except MediaSkipError as error:
        return skipped("too-large" if error.code == "maxBytes" else f"fetch-failed: {error}")
    except Exception as error:
        return skipped(f"fetch-failed: {type(error).__name__}: {error}")
    name = local.name or name
    result = await extract(
        data,
        name=name,
        mime=attachment.mime or local.mime,
        limits=limits,
        fallback_name=f"file-{attachment.index + 1}",
    )
    outcome = FileOutcome(attachment.index, name, result.mime, result.encoding, result.skipped)
    return outcome, result.block


def _basename(location: str | None) -> str | None:
    if not location:
        return None
    path = urlsplit(location).path if "://" in location else location
    return posixpath.basename(path) or None
