"""``POST /api/files/extract``: an uploaded file as the ``<file>`` block the agent would see.

The same extraction the pipeline applies to message attachments (SPEC §9, notes §12), with
nothing stored. A client that sends no ``mime`` form field gets the upload's own content type,
except the generic ``application/octet-stream`` that browsers send for "unknown": then the
bytes and the file name decide, so ``notes`` (no extension) is still read as text.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile

from common.errors import PayloadTooLarge
from enrichment.pipeline.files.extraction import FileLimits
from enrichment.services.files import extract_file_isolated

router = Router(tags=["files"])

UPLOAD_LIMITS = FileLimits()
_UNKNOWN_CONTENT_TYPE = "application/octet-stream"


class FileExtractOut(Schema):
    block: str | None
    mime: str | None
    encoding: str | None
    skipped: str | None


@router.post("/files/extract", response=FileExtractOut)
def files_extract(
    request: HttpRequest, file: File[UploadedFile], mime: Form[str | None] = None
) -> dict[str, str | None]:
    """Extract the text of one uploaded file, or say why it was skipped (nothing stored)."""
    limit = UPLOAD_LIMITS.max_bytes
    # Checked before reading: Django keeps uploads above 2 MiB on disk until read().
    if file.size is not None and file.size > limit:
        raise PayloadTooLarge(
            f"File too large: {file.size} bytes; the limit is "
            f"{limit // (1024 * 1024)} MiB ({limit} bytes)."
        )
    data = file.read(limit + 1)  # one byte over the limit is enough to say "too-large"
    declared = mime or (None if file.content_type == _UNKNOWN_CONTENT_TYPE else file.content_type)
    extraction = extract_file_isolated(data, name=file.name, mime=declared, limits=UPLOAD_LIMITS)
    return extraction.to_dict()
