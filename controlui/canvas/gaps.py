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
    lines = text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index].strip(" \t\r"):
            kept.append(lines[index])
            index += 1
            continue
        run_end = index
        while run_end < len(lines) and not lines[run_end].strip(" \t\r"):
            run_end += 1
        run = lines[index:run_end]
        seams = [line for line in range(index, run_end) if line in seam_lines]
        if seams:
            run = [lines[seams[0]]]  # the emptied line itself ("" or a lone "\r")
        kept.extend(run)
        index = run_end
    return "\n".join(kept)


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
