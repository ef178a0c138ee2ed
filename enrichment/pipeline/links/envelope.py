"""The structured envelope appended to a message body for each understood link.

With two outputs the body ``"see these"`` becomes::

    see these

    [Link 1/2]
    URL: https://a.example
    Source: link-understand
    Summary:
    first summary

    [Link 2/2]
    URL: https://b.example
    Source: unknown
    Summary:
    second summary

A single output is headed ``[Link]``. Outputs whose URL or text is blank are dropped before
numbering. With nothing left the body is returned unchanged (not even trimmed); an empty body
gives the sections alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from enrichment.pipeline.templates import js_trim


@dataclass(frozen=True)
class LinkOutput:
    url: str
    source: str | None  # the command that produced the summary
    summary: str


def normalize_outputs(outputs: Sequence[LinkOutput]) -> list[LinkOutput]:
    """Trim URL and summary, and drop outputs where either is empty."""
    kept: list[LinkOutput] = []
    for output in outputs:
        url, summary = js_trim(output.url), js_trim(output.summary)
        if url and summary:
            kept.append(LinkOutput(url, output.source, summary))
    return kept


def format_link_sections(outputs: Sequence[LinkOutput]) -> list[str]:
    """One envelope section per usable output, numbered when there are several."""
    kept = normalize_outputs(outputs)
    total = len(kept)
    sections: list[str] = []
    for number, output in enumerate(kept, start=1):
        header = "[Link]" if total == 1 else f"[Link {number}/{total}]"
        source = js_trim(output.source or "") or "unknown"
        lines = [header, f"URL: {output.url}", f"Source: {source}", "Summary:", output.summary]
        sections.append("\n".join(lines))
    return sections


def format_link_body(body: str, outputs: Sequence[LinkOutput]) -> str:
    """Append the envelope sections to the trimmed body after one blank line."""
    sections = format_link_sections(outputs)
    if not sections:
        return body
    joined = "\n\n".join(sections)
    base = js_trim(body)
    return f"{base}\n\n{joined}" if base else joined
