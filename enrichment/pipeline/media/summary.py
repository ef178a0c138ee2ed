"""One-line summaries of media decisions, in the reference's formats (notes §4).

``summary_line`` is the verbose-log line of one capability decision, ``status_line`` the
``/status`` line of a run. Both read the recorded shape (``MediaDecision.to_dict()``, what
``Run.media`` stores), so runs recorded long ago are summarised the same way; malformed
values are read as absent, never raised on.

>>> decision = {"capability": "image", "outcome": "success", "attachments": [
...     {"attachmentIndex": 0, "attempts": [], "chosen": {"type": "provider",
...      "outcome": "success", "provider": "openai", "model": "gpt-4o-mini"}}]}
>>> summary_line(decision)
'image: success (1/1) via openai/gpt-4o-mini'
>>> status_line([decision, {"capability": "audio", "outcome": "no-attachment"}])
'📎 Media: image ok (openai/gpt-4o-mini) · audio none'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["STATUS_PREFIX", "status_line", "summary_line"]

STATUS_PREFIX = "📎 Media: "
_CAPABILITIES = ("image", "audio", "video")
_STATUS_WORD = {"no-attachment": "none", "disabled": "off", "scope-deny": "denied"}


def summary_line(decision: Mapping[str, object]) -> str:
    """``<cap>: <outcome>[ (<successes>/<total>)][ via <provider>[/<model>]][ reason=<r>]``.

    The count only when attachments were selected; "via" from the first attachment with
    a chosen attempt; the reason is the first recorded one, up to its first ":".
    """
    attachments = _attachments(decision)
    line = f"{_text(decision.get('capability'))}: {_text(decision.get('outcome'))}"
    if attachments:
        line += f" ({len(_successes(attachments))}/{len(attachments)})"
    via = _via(attachments)
    if via:
        line += f" via {via}"
    reason = _first_reason(attachments)
    if reason:
        line += f" reason={reason}"
    return line


def status_line(decisions: Iterable[object]) -> str | None:
    """``📎 Media: `` and one part per image/audio/video decision, joined with `` · ``;
    None when there is no part or every part is "none".

    Parts: ``<cap>[ xN] ok[ (<provider>[/<model>])]`` (xN: N > 1 attachments described),
    ``<cap> none`` (no attachment), ``off`` (disabled), ``denied`` (scope), and
    ``<cap> skipped[ (<short reason>)]``.
    """
    parts: list[str] = []
    quiet = True
    for decision in decisions:
        if not isinstance(decision, Mapping):
            continue
        capability = decision.get("capability")
        if capability not in _CAPABILITIES:
            continue  # e.g. the "file" record of file extraction
        outcome = decision.get("outcome")
        attachments = _attachments(decision)
        if outcome == "success":
            count = len(_successes(attachments))
            part = f"{capability}{f' x{count}' if count > 1 else ''} ok"
            via = _via(attachments)
            part += f" ({via})" if via else ""
        elif isinstance(outcome, str) and outcome in _STATUS_WORD:
            part = f"{capability} {_STATUS_WORD[outcome]}"
        else:
            reason = _first_reason(attachments)
            part = f"{capability} skipped{f' ({reason})' if reason else ''}"
        quiet = quiet and outcome == "no-attachment"
        parts.append(part)
    if not parts or quiet:
        return None
    return STATUS_PREFIX + " · ".join(parts)


def _attachments(decision: Mapping[str, object]) -> list[Mapping[str, object]]:
    value = decision.get("attachments")
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _chosen(attachment: Mapping[str, object]) -> Mapping[str, object] | None:
    chosen = attachment.get("chosen")
    return chosen if isinstance(chosen, Mapping) else None


def _successes(attachments: list[Mapping[str, object]]) -> list[Mapping[str, object]]:
    return [
        attachment
        for attachment in attachments
        if (chosen := _chosen(attachment)) is not None and chosen.get("outcome") == "success"
    ]


def _via(attachments: list[Mapping[str, object]]) -> str:
    for attachment in attachments:
        chosen = _chosen(attachment)
        if chosen is not None:
            provider, model = _text(chosen.get("provider")), _text(chosen.get("model"))
            return f"{provider}/{model}" if provider and model else provider or model
    return ""


def _first_reason(attachments: list[Mapping[str, object]]) -> str:
    for attachment in attachments:
        attempts = attachment.get("attempts")
        if not isinstance(attempts, Sequence) or isinstance(attempts, str):
            continue
        for attempt in attempts:
            if isinstance(attempt, Mapping) and (reason := _text(attempt.get("reason"))):
                return reason.split(":", 1)[0].strip()
    return ""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
