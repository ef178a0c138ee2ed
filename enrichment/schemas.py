"""Ninja in/out schemas of the enrichment API (camelCase, SPEC §9)."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any, Self

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_BODY_CHARS = 1_048_576
MAX_URL_CHARS = 8_192
# One attachment's bytes (multipart file or decoded base64 ``data``); base64 is 4/3 larger.
MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
MAX_ATTACHMENT_DATA_CHARS = -(-MAX_ATTACHMENT_BYTES // 3) * 4


class LinksExtractIn(Schema):
    message: str = Field(max_length=MAX_BODY_CHARS)
    maxLinks: Any = None


class LinksExtractOut(Schema):
    links: list[str]


class SsrfCheckIn(Schema):
    url: str = Field(max_length=MAX_URL_CHARS)
    resolve: bool = False
    policy: dict[str, Any] | None = None


class SsrfCheckOut(Schema):
    blocked: bool
    reason: str | None
    host: str | None
    addresses: list[str]


class ScopeEvaluateIn(Schema):
    scope: Any = None
    channel: str | None = Field(default=None, max_length=500)
    chatType: str | None = Field(default=None, max_length=100)
    sessionKey: str | None = Field(default=None, max_length=1000)


class ScopeEvaluateOut(Schema):
    decision: str
    matchedRule: int | None


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
        if value is not None:
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("not valid base64") from None
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
    any further stage of the registry (``enrichment/stages``) under that stage's name.

    A pydantic model rather than a ninja ``Schema``: ninja's attribute getter would drop the
    extra keys that ``extra="allow"`` is there to keep."""

    model_config = ConfigDict(extra="allow")


class EnrichOut(StageRecordsOut):
    runId: int
    body: str
    links: dict[str, Any]
    media: list[dict[str, Any]]


class DecisionSummary(BaseModel):
    runId: int
    createdAt: datetime
    channel: str
    chatType: str
    sessionKey: str
    agentId: str
    outcome: str
    urlCount: int
    durationMs: int | None


class DecisionPage(Schema):
    items: list[DecisionSummary]
    nextCursor: str | None


class DecisionDetail(DecisionSummary, StageRecordsOut):
    messageId: str
    finishedAt: datetime | None
    originalBody: str
    enrichedBody: str
    error: str
    links: dict[str, Any]
    media: list[dict[str, Any]]
    configSnapshot: dict[str, Any]
