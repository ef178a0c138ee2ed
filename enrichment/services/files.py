"""File extraction off the event loop, in a killable worker process (``common.workpool``).

``extract_file_block`` is pure and usually quick, but a PDF is a program: a few pages of
huge deflated streams cost seconds of CPU and hundreds of MB. Every extraction the service
runs (``POST /api/files/extract``, message attachments) goes through here; a job that runs out
of time or memory is killed and comes back as a skip reason, like any other refusal:

    extraction-timeout: timed out after 10s
    extraction-failed: memory limit reached (1024 MiB)
"""

from __future__ import annotations

from django.conf import settings

from common.workpool import WorkError, WorkTimeout, shared_pool
from enrichment.pipeline.files.extraction import (
    FileExtraction,
    FileLimits,
    extract_file_block,
    normalize_mime,
)


def _deadline(timeout: float | None) -> float:
    """The caller's budget, else the ``FILE_EXTRACTION_TIMEOUT_SECONDS`` setting (10 s)."""
    return float(settings.FILE_EXTRACTION_TIMEOUT_SECONDS) if timeout is None else timeout


def extract_file_isolated(
    data: bytes,
    *,
    name: str | None,
    mime: str | None,
    limits: FileLimits,
    fallback_name: str = "file-1",
    timeout: float | None = None,
) -> FileExtraction:
    """Blocking (sync views, threads): ``extract_file_block`` in a worker process."""
    try:
        return shared_pool().run(
            extract_file_block,
            data,
            timeout=_deadline(timeout),
            name=name,
            mime=mime,
            limits=limits,
            fallback_name=fallback_name,
        )
    except WorkError as error:
        return _failed(error, mime)


async def extract_file_isolated_async(
    data: bytes,
    *,
    name: str | None,
    mime: str | None,
    limits: FileLimits,
    fallback_name: str = "file-1",
    timeout: float | None = None,
) -> FileExtraction:
    """The same for async code: the event loop only waits for the worker's answer."""
    try:
        return await shared_pool().run_async(
            extract_file_block,
            data,
            timeout=_deadline(timeout),
            name=name,
            mime=mime,
            limits=limits,
            fallback_name=fallback_name,
        )
    except WorkError as error:
        return _failed(error, mime)


def _failed(error: WorkError, mime: str | None) -> FileExtraction:
    prefix = "extraction-timeout" if isinstance(error, WorkTimeout) else "extraction-failed"
    return FileExtraction(
        block=None, mime=normalize_mime(mime), encoding=None, skipped=f"{prefix}: {error.reason}"
    )
