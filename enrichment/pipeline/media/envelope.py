"""The envelope: media outputs (descriptions, transcripts) rendered as the new message body.

One output keeps the user's words inside its section; several get one ``User text:`` section
first and numbered titles (notes §10)::

    User text:
    compare these

    [Image 1/2]
    Description:
    a red bicycle

    [Image 2/2]
    Description:
    a blue bicycle

A bare ``<media:image>`` placeholder body is not user text and is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from enrichment.pipeline.config.media import Capability

OUTPUT_KIND: Mapping[Capability, str] = {
    "image": "image.description",
    "audio": "audio.transcription",
    "video": "video.description",
}
_TITLES: Mapping[Capability, str] = {"image": "Image", "audio": "Audio", "video": "Video"}
_PLACEHOLDER_ONLY = re.compile(r"^<media:[^>]*>(\s*\([^)]*\))?$", re.IGNORECASE)
# The placeholder goes together with its parenthetical: "<media:audio> (voice) hi" -> "hi".
_LEADING_PLACEHOLDER = re.compile(r"^<media:[^>]*>(\s*\([^)]*\))?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class MediaOutput:
    kind: str  # image.description | audio.transcription | video.description
    attachment_index: int
    text: str
    provider: str | None
    model: str | None

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "attachmentIndex": self.attachment_index,
            "text": self.text,
            "provider": self.provider,
            "model": self.model,
        }


def extract_media_user_text(body: str | None) -> str | None:
    """The user's own words: a bare ``<media:…>`` placeholder is not user text."""
    text = (body or "").strip()
    if not text or _PLACEHOLDER_ONLY.match(text):
        return None
    return _LEADING_PLACEHOLDER.sub("", text, count=1).strip() or None


def format_media_body(outputs: Sequence[MediaOutput], user_text: str | None) -> str:
    kept = [output for output in outputs if output.text.strip()]
    if not kept:
        return ""
    totals: dict[str, int] = {}
    for output in kept:
        totals[output.kind] = totals.get(output.kind, 0) + 1
    sections = []
    if user_text and len(kept) > 1:
        sections.append(f"User text:\n{user_text}")
    seen: dict[str, int] = {}
    for output in kept:
        seen[output.kind] = seen.get(output.kind, 0) + 1
        capability = _capability_of(output.kind)
        title = _TITLES[capability]
        if totals[output.kind] > 1:
            title += f" {seen[output.kind]}/{totals[output.kind]}"
        lines = [f"[{title}]"]
        if user_text and len(kept) == 1:
            lines.append(f"User text:\n{user_text}")
        label = "Transcript" if capability == "audio" else "Description"
        lines.append(f"{label}:\n{output.text}")
        sections.append("\n".join(lines))
    return "\n\n".join(sections).strip()


def format_transcripts(outputs: Sequence[MediaOutput]) -> str | None:
    texts = [o.text for o in outputs if o.kind == "audio.transcription" and o.text.strip()]
    if len(texts) <= 1:
        return texts[0] if texts else None
    return "\n\n".join(f"Audio {i}:\n{text}" for i, text in enumerate(texts, start=1))


def _capability_of(kind: str) -> Capability:
    return next(cap for cap, value in OUTPUT_KIND.items() if value == kind)
