"""Attachment kinds and selection."""

from __future__ import annotations

import pytest

from enrichment.pipeline.config.media import (
    AttachmentPolicy,
)
from enrichment.pipeline.media.understanding import (
    Attachment,
    attachment_kind,
    select_attachments,
)

# --- attachments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attachment", "kind"),
    [
        (Attachment(0, path="/m/a.bin", mime="Image/PNG; q=1"), "image"),
        (Attachment(0, path="/m/a.mp4"), "video"),
        (Attachment(0, path="/m/a.M4V"), "video"),
        (Attachment(0, path="/m/a.opus"), "audio"),
        (Attachment(0, path="/m/a.tif"), "image"),
        (Attachment(0, url="https://x.test/v/clip.webm?sig=1"), "video"),
        (Attachment(0, url="https://x.test/a.ogg#t=1"), "audio"),
        (Attachment(0, path="/m/report.pdf"), None),
        (Attachment(0, path="/m/a.ogg", mime="application/pdf"), "audio"),
        (Attachment(0, url="https://x.test/download"), None),
    ],
    ids=[
        "mime",
        "mp4",
        "m4v-upper",
        "opus",
        "tif",
        "url-query",
        "url-fragment",
        "pdf",
        "ext-fallback",
        "unknown",
    ],
)
def test_attachment_kind(attachment: Attachment, kind: str | None) -> None:
    assert attachment_kind(attachment) == kind


IMAGES = [
    Attachment(0, url="https://x.test/a.png"),
    Attachment(1, path="/m/b.png"),
    Attachment(2, path="/m/voice.ogg"),
    Attachment(3, url="https://x.test/c.png"),
]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (AttachmentPolicy(), [0]),
        (AttachmentPolicy(mode="all"), [0]),
        (AttachmentPolicy(mode="all", max_attachments=5), [0, 1, 3]),
        (AttachmentPolicy(mode="all", max_attachments=2, prefer="last"), [3, 1]),
        (AttachmentPolicy(prefer="path"), [1]),
        (AttachmentPolicy(mode="all", max_attachments=3, prefer="path"), [1, 0, 3]),
        (AttachmentPolicy(mode="first", max_attachments=3, prefer="url"), [0]),
    ],
    ids=[
        "default-first",
        "all-default-one",
        "all-many",
        "last",
        "prefer-path",
        "path-stable",
        "first-ignores-max",
    ],
)
def test_select_attachments(policy: AttachmentPolicy, expected: list[int]) -> None:
    assert [a.index for a in select_attachments(IMAGES, "image", policy)] == expected
