"""File extraction off the event loop, in the process pool (``services.pool``).

``extract_file_block`` is pure and usually quick, but a PDF is a program: a few pages of
huge deflated streams cost seconds of CPU and hundreds of MB. Every extraction the service
runs (``POST /api/files/extract``, message attachments) goes through here, all files
together holding at most ``EXTRACTION_SLOTS_PER_HOST`` of the pool's processes; a job that
runs out of time or memory is stopped and comes back as a skip reason, like any other
refusal:

    extraction-timeout: timed out after 10s
    extraction-failed: memory limit reached (2048 MiB)
"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.conf import settings

from common.workpool import WorkError, WorkTimeout
from enrichment.pipeline.files.extraction import (
    FileExtraction,
    FileLimits,
    extract_file_block,
    normalize_mime,
)
from enrichment.services.pool import fair_run, work_pool

# Every file is one key of the pool's fair slots (pages are keyed by their host).
FILES_KEY = "files"


async def extract_file_isolated_async(
    data: bytes,
    *,
    name: str | None,
    mime: str | None,
    limits: FileLimits,
    fallback_name: str = "file-1",
    timeout: float | None = None,
) -> FileExtraction:
    """``extract_file_block`` in the pool; the event loop only waits for the answer.
    ``timeout``: the caller's budget, else ``FILE_EXTRACTION_TIMEOUT_SECONDS`` (10 s)."""
    seconds = float(settings.FILE_EXTRACTION_TIMEOUT_SECONDS) if timeout is None else timeout
    try:
        return await fair_run(
            FILES_KEY,
            extract_file_block,
            data,
            timeout=seconds,
            name=name,
            mime=mime,
            limits=limits,
            fallback_name=fallback_name,
        )
    except WorkTimeout as error:
        skipped = f"extraction-timeout: {error.reason}"
    except WorkError as error:
        skipped = f"extraction-failed: {error.reason}"
    except MemoryError:
        limit = (work_pool().memory_bytes or 0) // (1024 * 1024)
        skipped = f"extraction-failed: memory limit reached ({limit} MiB)"
    except Exception as error:  # the job's own failure, reported as a value, never a traceback
        skipped = f"extraction-failed: {type(error).__name__}: {error}"[:300]
    return FileExtraction(block=None, mime=normalize_mime(mime), encoding=None, skipped=skipped)


# Sync code (the upload endpoint's thread) runs the same coroutine on the server's loop.
extract_file_isolated = async_to_sync(extract_file_isolated_async)
