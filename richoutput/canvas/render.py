"""Entry points: assistant text -> visible text, delivery metadata and canvas blocks.

Order (notes §1, "A.1 -> B.1-B.4"): ``[embed]`` shortcodes, then ``MEDIA:`` lines and
``[[audio_as_voice]]``, then reply tags, then a malformed leading reply prefix; finally the
silent token.

>>> rendered = render_assistant_text(
...     "[[reply_to_current]] Done [embed ref=\\"cv_1\\" /]\\nMEDIA:/tmp/a.png", "m-9"
... )
>>> rendered.text, rendered.reply_to_id, rendered.media_urls
('Done', 'm-9', ('/tmp/a.png',))

One deliberate extension: removing a directive can line up text that forms a new one
(``[[reply_to_current]]MEDIA:/x.png`` leaves a line starting ``MEDIA:``, and nested tags
such as ``[[[[audio_as_voice]]audio_as_voice]]`` re-form). The reference would show those
as text; we repeat the whole pass (at most ``MAX_PASSES`` times) so that a directive does
not leak into visible text. Pathological nesting deeper than that stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from richoutput.canvas.directives import (
    is_silent,
    strip_audio_tags,
    strip_malformed_reply_prefix,
    strip_reply_tags,
    tidy_boundaries,
    trim_end,
)
from richoutput.canvas.embeds import CanvasBlock, SkippedEmbed, embed_notice, extract_embeds
from richoutput.canvas.media_refs import RejectedReference, has_media_line, split_media_lines
from richoutput.canvas.media_validation import validate_media_reference

MAX_PASSES = 8
_MEDIA_LINE_START = re.compile(r"^([ \t]*)(media:)", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Rendered:
    text: str
    reply_to_id: str | None
    reply_to_current: bool
    audio_as_voice: bool
    media_urls: tuple[str, ...]
    blocks: tuple[CanvasBlock, ...]
    rejected_media: tuple[RejectedReference, ...] = field(default=(), compare=False)
    skipped_embeds: tuple[SkippedEmbed, ...] = field(default=(), compare=False)
    silent: bool = False

    def to_dict(self) -> dict[str, object]:
        """The camelCase shape of ``POST /api/render`` (minus ``messageId``)."""
        return {
            "text": self.text,
            "replyToId": self.reply_to_id,
            "replyToCurrent": self.reply_to_current,
            "audioAsVoice": self.audio_as_voice,
            "mediaUrls": list(self.media_urls),
            "blocks": [dict(block) for block in self.blocks],
        }

    def embed_notices(self) -> list[dict[str, str]]:
        """Shortcodes that gave no block, each with a reason a person can act on."""
        return [
            {"source": skipped.source[:200], "reason": embed_notice(skipped)}
            for skipped in self.skipped_embeds
        ]


@dataclass
class _State:
    text: str
    blocks: list[CanvasBlock] = field(default_factory=list)
    skipped: dict[str, SkippedEmbed] = field(default_factory=dict)
    media: list[str] = field(default_factory=list)
    rejected: list[RejectedReference] = field(default_factory=list)
    reply_to_id: str | None = None
    reply_to_current: bool = False
    audio: bool = False

    def apply_pass(self) -> bool:
        """One embed -> MEDIA -> audio -> reply pass; True when anything was removed."""
        embeds = extract_embeds(self.text)
        self.blocks.extend(embeds.blocks)
        for skipped in embeds.skipped:
            self.skipped.setdefault(skipped.source, skipped)
        lines = split_media_lines(embeds.text)
        self.media.extend(lines.media_urls)
        self.rejected.extend(lines.rejected)
        audio = strip_audio_tags(lines.text)
        self.audio = self.audio or audio.found
        text = tidy_boundaries(audio.text) if audio.found else audio.text
        reply = strip_reply_tags(text)
        if reply.reply_to_id is not None:
            self.reply_to_id = reply.reply_to_id
        self.reply_to_current = self.reply_to_current or reply.reply_to_current
        visible = trim_end(reply.text)
        self.text = strip_malformed_reply_prefix(visible)
        removed = bool(embeds.blocks) or lines.text != embeds.text or self.text != visible
        return removed or audio.found or reply.tag_seen


def _may_hold_directive(text: str) -> bool:
    """Anything a pass could act on; without one, another pass would change nothing."""
    if "[[" in text:
        return True
    if "[" in text and "[embed" in text.lower():
        return True
    return ":" in text and has_media_line(text)


def validated_media_urls(media_urls: Sequence[str]) -> list[str]:
    """Structured ``mediaUrls`` through the same validator; rejected entries are dropped.

    Each entry is a whole media payload, so a bare filename (``image.png``) is accepted as
    in ``MEDIA:image.png`` (notes §4.2 step 5)."""
    return [
        url
        for url in media_urls
        if isinstance(url, str)
        and validate_media_reference(url.strip(), allow_spaces=True, allow_bare_filename=True).ok
    ]


def render_assistant_text(
    text: str,
    current_message_id: str | None = None,
    media_urls: Sequence[str] | None = None,
) -> Rendered:
    """Parse every directive out of ``text``. Structured ``media_urls`` (when non-empty) win
    over ``MEDIA:`` lines, whose lines are still removed; ``replyToId`` falls back to
    ``current_message_id`` only when ``[[reply_to_current]]`` was seen."""
    if not _may_hold_directive(text):  # most replies: nothing to parse at all
        return _finish(_State(trim_end(text)), current_message_id, media_urls)
    state = _State(text)
    for _ in range(MAX_PASSES):
        # Repeat only when a removal happened and something directive-shaped is left.
        if not state.apply_pass() or not _may_hold_directive(state.text):
            break
    return _finish(state, current_message_id, media_urls)


def _finish(
    state: _State, current_message_id: str | None, media_urls: Sequence[str] | None
) -> Rendered:
    final_text = state.text
    silent = is_silent(final_text)
    reply_to_id = state.reply_to_id
    if reply_to_id is None and state.reply_to_current and current_message_id:
        reply_to_id = current_message_id
    media = state.media if not media_urls else validated_media_urls(media_urls)
    return Rendered(
        text="" if silent else final_text,
        reply_to_id=reply_to_id,
        reply_to_current=state.reply_to_current,
        audio_as_voice=state.audio,
        media_urls=tuple(media),
        blocks=tuple(state.blocks),
        rejected_media=tuple(state.rejected),
        skipped_embeds=tuple(state.skipped.values()),
        silent=silent,
    )


def neutralize_media_directives(text: str) -> str:
    """Defang line-start ``MEDIA:`` in untrusted text (notes §7); idempotent.

    >>> neutralize_media_directives("ok\\n  media: /tmp/x.png")
    'ok\\n  [neutralized] media: /tmp/x.png'
    """
    if not text or "media:" not in text.lower():
        return text
    return _MEDIA_LINE_START.sub(r"\1[neutralized] \2", text)
