"""Putting back the blocks trafilatura pruned inside its text, from resiliparse's text."""

from __future__ import annotations

import pytest

from enrichment.pipeline.extract import page as extraction
from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.union import MAX_GAP_WORDS, fill_gaps

STEPS = [f"Step {i} of the guide explains how the tool reads page {i} in order." for i in range(8)]
SKIPPED = "Note: on Windows run the same command from a PowerShell window instead."


def _lines(*lines: str) -> str:
    return "\n".join(lines)


def test_a_block_pruned_between_two_kept_lines_is_put_back_in_place() -> None:
    first = _lines(*STEPS)
    second = _lines("Home About Pricing", *STEPS[:4], SKIPPED, *STEPS[4:], "Related posts")
    assert fill_gaps(first, second) == _lines(*STEPS[:4], SKIPPED, *STEPS[4:])


def test_a_heading_pruned_with_its_paragraph_comes_back() -> None:
    first = _lines(*STEPS)
    second = _lines(*STEPS[:4], "Configuration", SKIPPED, *STEPS[4:], "Share")
    filled = fill_gaps(first, second)
    assert filled is not None and "Configuration\n" + SKIPPED in filled and "Share" not in filled


@pytest.mark.parametrize(
    "labels",
    [["By Sam Writer ·", "3 March 2026"], ["quietfoxJoined 2019Posts: 174"]],
    ids=["byline", "author-line"],
)
def test_a_gap_of_short_labels_only_stays_out(labels: list[str]) -> None:
    first = _lines(*STEPS)
    assert fill_gaps(first, _lines(*STEPS[:4], *labels, *STEPS[4:])) is None


def test_a_numbered_line_trafilatura_has_as_a_heading_is_not_repeated() -> None:
    first = _lines(*STEPS[:4], "Pothos", *STEPS[4:])  # "## 4. Pothos", flattened
    second = _lines(*STEPS[:4], "4. Pothos", SKIPPED, *STEPS[4:])
    filled = fill_gaps(first, second)
    assert filled is not None and "4. Pothos" not in filled and SKIPPED in filled


def test_a_long_run_between_kept_lines_is_another_region_and_stays_out() -> None:
    sidebar = [f"Teaser {i} for another story on the same site this week." for i in range(30)]
    assert sum(len(line.split()) for line in sidebar) > MAX_GAP_WORDS
    first = _lines(*STEPS)
    second = _lines(*STEPS[:4], *sidebar, *STEPS[4:])
    assert fill_gaps(first, second) is None  # nothing added: trafilatura's text stands


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (_lines(*STEPS), _lines(*STEPS)),  # nothing pruned
        (_lines(*STEPS), ""),
        ("", _lines(*STEPS)),
        (_lines(*STEPS), _lines(*(f"Other text {i} about a different page." for i in range(8)))),
        (_lines(*STEPS[:2]), _lines(STEPS[0], *([SKIPPED] * 3), STEPS[1])),  # grows past 1.5x
    ],
    ids=["same", "second-empty", "first-empty", "disjoint", "too-much-longer"],
)
def test_no_gain_gives_none(first: str, second: str) -> None:
    assert fill_gaps(first, second) is None


STEPS_LINKED = [
    ("/steps/1", "Warm up with five minutes of brisk walking"),
    ("/steps/2", "Do three sets of ten squats"),
]


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_page_keeps_the_linked_steps_between_its_paragraphs(mode: str) -> None:
    # trafilatura prunes a block whose lines are all links (it takes it for navigation); the
    # block sits between the page's paragraphs, so it is content, not the page around it.
    paragraphs = [
        f"<p>Part {i} of the guide explains how the training plan builds strength week by"
        " week for beginners.</p>"
        for i in range(6)
    ]
    steps = "<br>".join(f'<a href="{href}">{label}</a>' for href, label in STEPS_LINKED)
    html = (
        "<html><head><title>Strength guide</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<div class='content'><h1>Strength guide</h1>{''.join(paragraphs[:3])}"
        f"<div class='steps'>{steps}</div>{''.join(paragraphs[3:])}</div>"
        "<footer><p>Newsletter: sign up for weekly tips from the team.</p></footer></body></html>"
    )
    text = " ".join(extract_html(html, mode=mode).text.split())  # type: ignore[arg-type]
    for _, label in STEPS_LINKED:
        assert label in text
    assert "Part 0 of the guide" in text and "Part 5 of the guide" in text
    assert "Newsletter" not in text


@pytest.mark.parametrize(("kind", "filled"), [("DiscussionForumPosting", False), ("WebPage", True)])
def test_a_discussion_is_not_filled(
    monkeypatch: pytest.MonkeyPatch, kind: str, filled: bool
) -> None:
    # On a discussion, what trafilatura leaves out between posts is who wrote them: the
    # chooser weighs those lines already (post headers), the gaps are not filled again.
    calls: list[str] = []
    monkeypatch.setattr(extraction, "fill_gaps", lambda first, *_, **__: calls.append(first))
    posts = "".join(f"<div class='post'><p>{step}</p></div>" for step in STEPS)
    html = (
        f'<html><head><script type="application/ld+json">{{"@type": "{kind}"}}</script>'
        f"</head><body><main><h1>Thread</h1>{posts}</main></body></html>"
    )
    extraction.extract_html(html, mode="text")
    assert bool(calls) is filled


TIE_CHECK = """
from enrichment.pipeline.extract.union import fill_gaps
first = "alpha beta gamma delta\\nepsilon zeta eta theta\\n" + "\\n".join(STEPS)
second = "alpha beta gamma delta epsilon zeta eta theta\\nNote: run it twice to be sure.\\n" + STEPS[0]
print(repr(fill_gaps(first, second)))
"""


def test_the_same_texts_give_the_same_result_in_every_process() -> None:
    # The anchor's 4-grams are held equally by trafilatura's first two lines: the gap goes
    # after the first, whatever order this process's string hashing puts the 4-grams in.
    import os
    import subprocess
    import sys

    code = f"STEPS = {STEPS!r}\n" + TIE_CHECK
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert len(outputs) == 1
    assert outputs.pop().startswith(
        repr("alpha beta gamma delta\nNote: run it twice to be sure.\nepsilon")[:-1]
    )
