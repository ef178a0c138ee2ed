"""Input bounds shared by the enrichment routers (documented in their OpenAPI schemas)."""

from __future__ import annotations

MAX_BODY_CHARS = 1_048_576
MAX_URL_CHARS = 8_192
# One attachment's bytes (multipart file or decoded base64 ``data``); base64 is 4/3 larger.
MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
MAX_ATTACHMENT_DATA_CHARS = -(-MAX_ATTACHMENT_BYTES // 3) * 4
