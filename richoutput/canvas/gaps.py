"""Removing directive spans while closing only the gap each one leaves (notes §6.3).

For each run of removed directives (adjacent ones, separated only by spaces/tabs):

* between two non-blank characters on one line -> exactly one space
  (``"Hello  [[x]]  world"`` -> ``"Hello world"``);
* content before, only blanks then a line break after -> the blanks go
  (``"Hello  [[x]]  \\nworld"`` -> ``"Hello\\nworld"``);
* line start, content after -> only the directive goes, the indentation after it stays;
* alone on its line -> the line empties and the blank-line run around it keeps at most
  one blank line (``"L1\\n[[x]]\\nL2"`` -> ``"L1\\n\\nL2"``);
* at the end of the text -> removed (the caller trims trailing whitespace).
"""

from __future__ import annotations

_BLANKS = " \t"


def _merge_adjacent(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and not text[merged[-1][1] : start].strip(_BLANKS):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _collapse_seams(text: str, seam_lines: set[int]) -> str:
    """Shrink each run of blank lines that holds an emptied line to that one line.

    Only the runs around the seams are looked at; every other line is copied as is."""
    lines = text.split("\n")
    kept: list[str] = []
    cursor = 0  # lines before this index are already handled
    for seam in sorted(seam_lines):
        if seam < cursor or seam >= len(lines) or not _is_blank(lines[seam]):
            continue
        run_start = seam
        while run_start > cursor and _is_blank(lines[run_start - 1]):
            run_start -= 1
        run_end = seam + 1
        while run_end < len(lines) and _is_blank(lines[run_end]):
            run_end += 1
        kept.extend(lines[cursor:run_start])
        kept.append(lines[seam])  # the emptied line itself ("" or a lone "\r")
        cursor = run_end
    kept.extend(lines[cursor:])
    return "\n".join(kept)


def _is_blank(line: str) -> bool:
    return not line.strip(" \t\r")


def remove_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the sorted, non-overlapping ``spans``, gaps closed as described."""
    if not spans:
        return text
    pieces: list[str] = []
    seam_lines: set[int] = set()
    newline_count = 0
    cursor = 0
    for start, end in _merge_adjacent(text, spans):
        left = start
        while left > cursor and text[left - 1] in _BLANKS:
            left -= 1
        right = end
        while right < len(text) and text[right] in _BLANKS:
            right += 1
        line_start = left == 0 or text[left - 1] == "\n"
        line_end = right == len(text) or text[right] in "\r\n"
        if not line_start and not line_end:
            kept, replacement, cursor = text[cursor:left], " ", right
        elif not line_start:
            kept, replacement, cursor = text[cursor:left], "", right
        elif not line_end:
            kept, replacement, cursor = text[cursor:start], "", end
        else:
            kept, replacement, cursor = text[cursor:left], "", right
            if right < len(text):
                seam_lines.add(newline_count + kept.count("\n"))
        newline_count += kept.count("\n")
        pieces.append(kept)
        pieces.append(replacement)
    pieces.append(text[cursor:])
    result = "".join(pieces)
    return _collapse_seams(result, seam_lines) if seam_lines else result
