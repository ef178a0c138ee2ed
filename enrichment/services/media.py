"""Media understanding for ``services.enrichment_run``: where attachment bytes come from.

The pure core (``enrichment.pipeline.media.understanding``) decides what to run; this module gives it the
outside world:

* ``fetch_attachment`` implements the core's ``FetchBytes``. An uploaded attachment (multipart
  or base64 on the socket) is already a temp file; a local ``path`` (or ``file://`` URL) must
  resolve, symlinks followed, to a regular file inside ``settings.MEDIA_ROOT``; a remote URL is
  downloaded once through ``fetch_guarded_async`` under the stored SSRF policy, capped at the
  largest ``maxBytes`` any capability would accept for that attachment's kind.
* ``media_run`` turns request attachments into core ``Attachment`` values, reads provider keys
  from the environment (``OPENAI_API_KEY``, ``<PROVIDER>_API_KEY``, ``<PROVIDER>_BASE_URL``),
  runs the core, and removes its temp directory whatever happens.

Refusals are ``MediaSkipError`` values, so they land in the decision record, e.g.
``"blocked: Attachment 1 URL refused by the SSRF policy (private address 10.0.0.5)"``.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import posixpath
import re
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from django.conf import settings

from common.base64_stream import Base64TooLarge, decode_base64_into
from common.tracing import open_span
from enrichment.pipeline.config.media import (
    MediaConfig,
    parse_media_config,
    resolve_max_bytes,
    resolve_timeout_seconds,
)
from enrichment.pipeline.config.model import Config, effective_media_config
from enrichment.pipeline.files.extraction import FileLimits
from enrichment.pipeline.files.regular import describe_file_type
from enrichment.pipeline.media.discovery import (
    PROVIDER_CAPABILITIES,
    LocalTools,
    configured_entries,
)
from enrichment.pipeline.media.entry import (
    LocalFile,
    MediaSkipError,
    ProviderAccess,
    normalize_provider_id,
)
from enrichment.pipeline.media.http import HttpPost
from enrichment.pipeline.media.understanding import (
    Attachment,
    MediaProgress,
    MediaResult,
    attachment_kind,
    run_media_understanding,
)
from enrichment.pipeline.net.http import DEFAULT_USER_AGENT, FetchError, fetch_guarded_async
from enrichment.pipeline.net.ssrf import SsrfPolicy, blocked_reason, is_blocked_message
from enrichment.pipeline.runner import CommandRunner
from enrichment.services.files import extract_file_isolated_async

MIB = 1024 * 1024
# Bytes one uploaded attachment may carry (multipart file or decoded base64 data).
MAX_UPLOAD_BYTES = 25 * MIB
COPY_CHUNK_BYTES = MIB
FILE_LIMITS = FileLimits()
# Extra env names some providers are commonly configured with.
PROVIDER_KEY_ALIASES: Mapping[str, tuple[str, ...]] = {"google": ("GEMINI_API_KEY",)}

Resolver = Callable[[str], list[str]]
DictProgress = Callable[[dict[str, Any]], Awaitable[None]]


class AttachmentDownloadError(Exception):
    """A download that failed for a reason other than policy, size or time (HTTP 404...)."""


class AttachmentDataError(ValueError):
    """Uploaded attachment data that cannot be used (not base64, too large)."""


@dataclass(frozen=True)
class FetchSettings:
    """Everything ``fetch_attachment`` needs besides the attachment itself."""

    media_root: Path
    temp_dir: Path
    policy: SsrfPolicy
    resolve: Resolver
    max_bytes: Mapping[int, int]  # per attachment index: the most any consumer accepts
    timeout_seconds: Mapping[int, float]
    uploads: Mapping[int, LocalFile] = field(default_factory=dict)
    max_redirects: int = 3
    user_agent: str = DEFAULT_USER_AGENT


# --- fetching -----------------------------------------------------------------------------


async def fetch_attachment(attachment: Attachment, *, sources: FetchSettings) -> LocalFile:
    """The core's ``FetchBytes``: an upload, a file under the media root, or a download."""
    uploaded = sources.uploads.get(attachment.index)
    if uploaded is not None:
        return uploaded
    if attachment.path:
        return local_attachment(attachment, attachment.path, sources.media_root)
    url = attachment.url or ""
    if url.lower().startswith("file:"):
        return local_attachment(attachment, url, sources.media_root)
    return await download_attachment(attachment, url, sources)


def local_attachment(attachment: Attachment, raw: str, media_root: Path) -> LocalFile:
    """A file inside ``media_root``; anything else is refused with the reason why.

    ``photos/cat.png`` and ``/<media root>/photos/cat.png`` are the same file;
    ``../etc/passwd`` is refused before touching the disk, and a symlink that leads out of the
    root is refused after resolving it.
    """
    number = attachment.index + 1
    location = _local_location(raw)
    if "\x00" in location:
        raise MediaSkipError("blocked", f"Attachment {number} path contains a NUL byte")
    if ".." in PurePosixPath(location).parts:
        raise MediaSkipError(
            "blocked", f"Attachment {number} path {raw!r} contains '..' (path traversal)"
        )
    root = media_root.resolve()
    resolved = (root / location).resolve()  # an absolute location replaces the root
    if not resolved.is_relative_to(root):
        raise MediaSkipError(
            "blocked", f"Attachment {number} path {raw!r} is outside the media root"
        )
    try:
        # O_NOFOLLOW: the resolved path has no symlinks left; one appearing now is refused.
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, and this
        # runs on the event loop (one FIFO named as an attachment froze every request).
        descriptor = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise MediaSkipError("notFound", f"Attachment {number}: no file at {raw!r}") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise MediaSkipError("blocked", f"Attachment {number} cannot be opened: {reason}") from None
    try:
        info = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    if not stat.S_ISREG(info.st_mode):
        kind = describe_file_type(info.st_mode)
        raise MediaSkipError(
            "blocked", f"Attachment {number} path {raw!r} is not a regular file ({kind})"
        )
    name = attachment.name or resolved.name
    return LocalFile(str(resolved), info.st_size, attachment.mime or _guess_mime(name), name)


def _local_location(raw: str) -> str:
    if raw.lower().startswith("file:"):
        return unquote(urlsplit(raw).path)
    return raw


async def download_attachment(
    attachment: Attachment, url: str, sources: FetchSettings
) -> LocalFile:
    """One guarded GET, capped at the attachment's largest maxBytes, into a temp file."""
    number = attachment.index + 1
    limit = sources.max_bytes.get(attachment.index, FILE_LIMITS.max_bytes)
    try:
        response = await fetch_guarded_async(
            url,
            policy=sources.policy,
            resolve=sources.resolve,
            max_redirects=sources.max_redirects,
            max_response_bytes=limit,
            timeout_seconds=sources.timeout_seconds.get(attachment.index, 60.0),
            user_agent=sources.user_agent,
        )
    except FetchError as error:
        raise _download_refusal(number, error.reason) from None
    if response.truncated:
        raise MediaSkipError("maxBytes", f"Attachment {number} exceeds maxBytes {limit}")
    if not response.body:
        raise MediaSkipError("empty", f"Attachment {number} download returned no bytes")
    name = attachment.name or _url_basename(response.final_url) or f"media-{number}"
    declared = (response.content_type or "").split(";")[0].strip().lower() or None
    mime = attachment.mime or declared or _guess_mime(name)
    path = _temp_path(sources.temp_dir, attachment.index, name, mime)
    await asyncio.to_thread(path.write_bytes, response.body)
    return LocalFile(str(path), len(response.body), mime, name, temporary=True)


def _download_refusal(number: int, reason: str) -> Exception:
    if is_blocked_message(reason):
        policy_reason = blocked_reason(reason)
        return MediaSkipError(
            "blocked", f"Attachment {number} URL refused by the SSRF policy ({policy_reason})"
        )
    if reason.startswith("timed out"):
        return MediaSkipError("timeout", f"Attachment {number} download {reason}")
    return AttachmentDownloadError(f"Attachment {number} download failed: {reason}")


def _url_basename(url: str) -> str | None:
    return posixpath.basename(unquote(urlsplit(url).path)) or None


def _guess_mime(name: str | None) -> str | None:
    return mimetypes.guess_type(name)[0] if name else None


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _temp_path(temp_dir: Path, index: int, name: str | None, mime: str | None) -> Path:
    """``attachment-1-voice.ogg``: unique per index, keeps the extension CLIs look at."""
    stem = _UNSAFE_NAME.sub("_", posixpath.basename(name or ""))[-80:].lstrip(".")
    if not PurePosixPath(stem).suffix and mime:
        stem += mimetypes.guess_extension(mime) or ""
    return temp_dir / f"attachment-{index + 1}-{stem or 'media'}"


# --- one run ------------------------------------------------------------------------------


def media_config(config: Config, agent_id: str | None) -> MediaConfig:
    """The agent's merged ``tools.media`` with the notes' defaults for everything absent."""
    parsed, issues = parse_media_config(effective_media_config(config, agent_id))
    if issues:  # parse_config validated the block; only a merged agent override can get here
        raise ValueError("invalid tools.media: " + "; ".join(str(issue) for issue in issues))
    return parsed


def provider_access(config: MediaConfig, environ: Mapping[str, str]) -> dict[str, ProviderAccess]:
    """API keys and base URLs of every known or configured provider, from the environment."""
    names = set(PROVIDER_CAPABILITIES)
    for capability in ("image", "audio", "video"):
        names.update(
            normalize_provider_id(entry.provider)
            for entry in configured_entries(config, capability)
            if entry.type == "provider" and entry.provider
        )
    access = {}
    for name in sorted(names):
        prefix = re.sub(r"[^A-Z0-9]+", "_", name.upper())
        keys = (f"{prefix}_API_KEY", *PROVIDER_KEY_ALIASES.get(name, ()))
        api_key = next((environ[k] for k in keys if environ.get(k)), None)
        base_url = environ.get(f"{prefix}_BASE_URL") or None
        if api_key or base_url:
            access[name] = ProviderAccess(api_key=api_key, base_url=base_url)
    return access


def local_tools(environ: Mapping[str, str]) -> LocalTools:
    return LocalTools(
        sherpa_model_dir=environ.get("SHERPA_ONNX_MODEL_DIR") or None,
        whisper_cpp_model=environ.get("WHISPER_CPP_MODEL") or None,
    )


def write_attachment_data(data: str | bytes | IO[bytes], index: int, path: Path) -> int:
    """Base64 text (from JSON), raw bytes or an uploaded file (multipart) -> ``path``, within
    ``MAX_UPLOAD_BYTES``; the number of bytes written. Text is decoded and files copied a
    slice at a time: memory stays bounded whatever the attachment's size."""
    too_large = AttachmentDataError(
        f"attachments[{index}].data: the limit is "
        f"{MAX_UPLOAD_BYTES // MIB} MiB ({MAX_UPLOAD_BYTES} bytes) per attachment"
    )
    with path.open("wb") as out:
        if isinstance(data, str):
            try:
                return decode_base64_into(data, out, MAX_UPLOAD_BYTES)
            except Base64TooLarge:
                raise too_large from None
            except ValueError:
                raise AttachmentDataError(f"attachments[{index}].data: not valid base64") from None
        if isinstance(data, bytes):
            if len(data) > MAX_UPLOAD_BYTES:
                raise too_large
            out.write(data)
            return len(data)
        written = 0
        data.seek(0)
        while chunk := data.read(COPY_CHUNK_BYTES):
            written += len(chunk)
            if written > MAX_UPLOAD_BYTES:
                raise too_large
            out.write(chunk)
        return written


def prepare_attachments(
    items: Sequence[Mapping[str, Any]], temp_dir: Path
) -> tuple[list[Attachment], dict[int, LocalFile]]:
    """Core attachments for the request's items; uploaded data is written to ``temp_dir``."""
    attachments, uploads = [], {}
    for index, item in enumerate(items):
        mime, name = item.get("mime") or None, item.get("name") or None
        data = item.get("data")
        if data is None:
            attachments.append(Attachment(index, item.get("url"), item.get("path"), mime, name))
            continue
        mime = mime or _guess_mime(name)
        path = _temp_path(temp_dir, index, name, mime)
        size = write_attachment_data(data, index, path)
        uploads[index] = LocalFile(str(path), size, mime, name or path.name)
        attachments.append(Attachment(index, path=str(path), mime=mime, name=name))
    return attachments, uploads


def fetch_limits(
    config: MediaConfig, attachments: Sequence[Attachment]
) -> tuple[dict[int, int], dict[int, float]]:
    """Per attachment: the largest maxBytes (and timeout) any consumer of its kind accepts.

    An attachment only the file extractor reads gets the file limits (notes §12.1: 5 MiB,
    10 s), not the web fetcher's."""
    max_bytes, timeouts = {}, {}
    for attachment in attachments:
        kind = attachment_kind(attachment)
        if kind is None:
            max_bytes[attachment.index] = FILE_LIMITS.max_bytes
            timeouts[attachment.index] = FILE_LIMITS.fetch_timeout_seconds
            continue
        section = config.capability(kind)
        entries = [None, *configured_entries(config, kind)]
        max_bytes[attachment.index] = max(
            FILE_LIMITS.max_bytes, *(resolve_max_bytes(e, section, kind) for e in entries)
        )
        timeouts[attachment.index] = max(resolve_timeout_seconds(e, section, kind) for e in entries)
    return max_bytes, timeouts


async def media_run(
    config: Config,
    *,
    body: str,
    attachments: Sequence[Mapping[str, Any]],
    agent_id: str | None,
    channel: str | None,
    chat_type: str | None,
    session_key: str | None,
    runner: CommandRunner,
    resolve: Resolver,
    template_variables: Mapping[str, str] | None = None,
    on_progress: DictProgress | None = None,
    media_root: Path | None = None,
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    http: HttpPost | None = None,
) -> MediaResult:
    """Media understanding and file extraction for one message (nothing to do: body as is)."""
    if not attachments:
        return MediaResult(body, ())
    environ = os.environ if environ is None else environ
    parsed = media_config(config, agent_id)
    temp_dir = Path(tempfile.mkdtemp(prefix="controlui-media-"))
    try:
        # Decoding and writing up to 25 MiB per upload: off the event loop.
        items, uploads = await asyncio.to_thread(prepare_attachments, attachments, temp_dir)
        max_bytes, timeouts = fetch_limits(parsed, items)
        fetch_settings = FetchSettings(
            media_root=Path(media_root or settings.MEDIA_ROOT),
            temp_dir=temp_dir,
            policy=config.web_fetch.ssrf_policy,
            resolve=resolve,
            max_bytes=max_bytes,
            timeout_seconds=timeouts,
            uploads=uploads,
            max_redirects=config.web_fetch.max_redirects,
            user_agent=config.web_fetch.user_agent,
        )

        async def progress(event: MediaProgress) -> None:
            if on_progress is not None:
                await on_progress(event.to_dict())

        return await run_media_understanding(
            parsed,
            body,
            items,
            channel=channel,
            chat_type=chat_type,
            session_key=session_key,
            fetch_bytes=partial(fetch_attachment, sources=fetch_settings),
            runner=runner,
            http=http,
            which=which,
            on_progress=progress,
            providers=provider_access(parsed, environ),
            local_tools=local_tools(environ),
            template_variables=template_variables,
            file_limits=FILE_LIMITS,
            file_extractor=extract_file_isolated_async,
            span=open_span,
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, temp_dir, True)
