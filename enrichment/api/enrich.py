"""Enrichment: run the pipeline on one message and record the run (JSON or multipart)."""

from __future__ import annotations

import dataclasses
from typing import Any, Self

from asgiref.sync import async_to_sync
from django.http import HttpRequest
from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from common.base64_stream import base64_valid
from common.errors import InvalidInput, PayloadTooLarge
from common.json_guard import JsonInputError, parse_json
from enrichment.api.limits import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENT_DATA_CHARS,
    MAX_BODY_CHARS,
    MAX_URL_CHARS,
)
from enrichment.jobs import queue as jobqueue
from enrichment.services import runs as services


class AttachmentIn(Schema):
    url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    path: str | None = Field(default=None, max_length=4096)
    mime: str | None = Field(default=None, max_length=200)
    name: str | None = Field(default=None, max_length=500)
    data: str | None = Field(
        default=None,
        max_length=MAX_ATTACHMENT_DATA_CHARS,
        description="The file itself, base64 (instead of url/path); at most 25 MiB decoded.",
    )

    @field_validator("data")
    @classmethod
    def data_is_base64(cls, value: str | None) -> str | None:
        # Checked a slice at a time: nothing decoded is kept.
        if value is not None and not base64_valid(value):
            raise ValueError("not valid base64")
        return value

    @model_validator(mode="after")
    def data_alone(self) -> Self:
        if self.data is not None and (self.url or self.path):
            raise ValueError("give either data or url/path, not both")
        return self


class EnrichIn(Schema):
    body: str = Field(max_length=MAX_BODY_CHARS)
    channel: str | None = Field(default=None, max_length=100)
    chatType: str | None = Field(default=None, max_length=20)
    sessionKey: str | None = Field(default=None, max_length=300)
    agentId: str | None = Field(default=None, max_length=100)
    messageId: str | None = Field(default=None, max_length=200)
    provider: str | None = Field(default=None, max_length=100)
    surface: str | None = Field(default=None, max_length=100)
    senderName: str | None = Field(default=None, max_length=200)
    attachments: list[AttachmentIn] = Field(default_factory=list, max_length=32)


class StageRecordsOut(BaseModel):
    """Output carrying stage records: ``links`` and ``media`` as documented, and the record of
    any further stage of the registry (``enrichment/stage_specs``) under that stage's name.

    A pydantic model rather than a ninja ``Schema``: ninja's attribute getter would drop the
    extra keys that ``extra="allow"`` is there to keep."""

    model_config = ConfigDict(extra="allow")


class EnrichOut(StageRecordsOut):
    runId: int
    body: str
    links: dict[str, Any]
    media: list[dict[str, Any]]


router = Router(tags=["enrichment"])

MAX_UPLOAD_FILES = 8
MAX_ATTACHMENTS = 32
_UNKNOWN_CONTENT_TYPE = "application/octet-stream"


@router.post("/enrich", response=EnrichOut, tags=["enrichment"])
def enrich(request: HttpRequest, payload: EnrichIn) -> dict[str, Any]:
    """Run the pipeline on one message with the stored config and record the run.

    Media understanding runs first, then link understanding on the rewritten body. Each
    attachment is ``{url}`` (downloaded under the stored SSRF policy), ``{path}`` (a file
    inside the media root), or ``{data}`` (base64, at most 25 MiB decoded; this endpoint's
    whole body is capped by ``DATA_UPLOAD_MAX_MEMORY_SIZE``, so big files go to
    ``POST /api/enrich/upload``); ``mime`` and ``name`` are optional.
    """
    return async_to_sync(jobqueue.enrichment_answer)(request=services.request_from_schema(payload))


@router.post("/enrich/upload", response=EnrichOut, tags=["enrichment"])
def enrich_upload(
    request: HttpRequest, payload: Form[str], files: File[list[UploadedFile]]
) -> dict[str, Any]:
    """``POST /api/enrich`` with the attachments uploaded as ``multipart/form-data``.

    Form fields: ``payload`` = the JSON object of ``POST /api/enrich``, as text; ``files`` =
    one to 8 files, each at most 25 MiB (a larger one is a 413). Uploaded files become
    attachments after those listed in ``payload.attachments``, in upload order; their name
    and content type come from the upload. Temp copies are deleted when the run ends.
    """
    message = _enrich_payload(payload)
    if len(files) > MAX_UPLOAD_FILES:
        raise InvalidInput(f"files: at most {MAX_UPLOAD_FILES} files per request")
    if len(message.attachments) + len(files) > MAX_ATTACHMENTS:
        raise InvalidInput(f"attachments: at most {MAX_ATTACHMENTS} per message")
    uploads = tuple(_uploaded_attachment(file) for file in files)
    enrich_request = services.request_from_schema(message)
    enrich_request = dataclasses.replace(
        enrich_request, attachments=enrich_request.attachments + uploads
    )
    return async_to_sync(services.enrichment_run)(request=enrich_request)


def _enrich_payload(payload: str) -> EnrichIn:
    try:
        return EnrichIn.model_validate(parse_json(payload, root="payload"))
    except JsonInputError as exc:
        raise InvalidInput(f"Invalid payload: {exc}", [str(exc)]) from None
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            errors = [
                "payload." + ".".join(str(part) for part in error["loc"]) + f": {error['msg']}"
                for error in exc.errors()
            ]
            raise InvalidInput("Invalid payload.", errors) from None
        raise InvalidInput(f"payload: not valid JSON ({exc})") from None


def _uploaded_attachment(file: UploadedFile) -> dict[str, Any]:
    # Checked before reading: Django keeps large uploads on disk until read().
    if file.size is not None and file.size > MAX_ATTACHMENT_BYTES:
        raise PayloadTooLarge(
            f"File {file.name!r} too large: {file.size} bytes; the limit is "
            f"{MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB ({MAX_ATTACHMENT_BYTES} bytes) per file."
        )
    mime = None if file.content_type == _UNKNOWN_CONTENT_TYPE else file.content_type
    # The file itself (on disk beyond 2 MiB), copied to the run's temp dir a slice at a time.
    return {"name": file.name, "mime": mime, "data": file}
