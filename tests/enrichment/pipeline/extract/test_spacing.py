"""Spaces after inline elements and superscripts after words, as a browser shows them."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.spacing import protect_inline_spaces, restore_inline_spaces

MODES = pytest.mark.parametrize("mode", ["text", "markdown"])
PARAGRAPHS = [
    f"<p>Part {i}: the tool keeps notes, tasks and drafts side by side, and each of them opens"
    " in one click from the sidebar of the main window, wherever the reader left off.</p>"
    for i in range(5)
]


def _article(body: str) -> str:
    return (
        "<html><head><title>Note tools</title></head><body><main><article>"
        f"<h1>Note tools</h1>{''.join(PARAGRAPHS[:3])}{body}{''.join(PARAGRAPHS[3:])}"
        "</article></main></body></html>"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<div><strong>Sparkle:</strong> Organize your notes by colour and date.</div>",
         "**Sparkle:** Organize your"),
        ('<div><a href="/help">Portage Help</a> rather than this long article.</div>',
         "[Portage Help](/help) rather than"),
        ("<div><b>Sparkle: </b>Organize your notes by colour and date.</div>",
         "**Sparkle:** Organize your"),
    ],
    ids=["bold-label", "link", "space-inside-the-label"],
)  # fmt: skip
def test_markdown_keeps_the_space_after_a_label_or_link_that_starts_a_block(
    body: str, expected: str
) -> None:
    text = extract_html(_article(body), mode="markdown").text
    assert expected in text


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<li><em><b>Guide:</b> </em>Everything</li>", "<li><em><b>Guide:</b></em>␣Everything</li>"),
        ("<li><b>Guide: </b>Everything</li>", "<li><b>Guide:</b>␣Everything</li>"),
        ("<li><b>Guide:</b>\n Everything</li>", "<li><b>Guide:</b>␣Everything</li>"),
        ("<li><b>our </b><a>site</a> now</li>", "<li><b>our </b><a>site</a>␣now</li>"),
        ("<li><b> </b>Everything</li>", "<li><b> </b>Everything</li>"),
        ("<pre><b>x </b>y</pre>", "<pre><b>x </b>y</pre>"),
    ],
    ids=["nested", "inside", "newline", "before-an-element", "only-space", "code"],
)  # fmt: skip
def test_the_space_before_the_words_after_an_inline_element_is_marked(
    html: str, expected: str
) -> None:
    tree = lxml.html.fragment_fromstring(html)
    protect_inline_spaces(tree)
    assert lxml.html.tostring(tree, encoding="unicode") == expected


@MODES
def test_a_page_that_shows_the_space_mark_keeps_it(mode: str) -> None:
    body = "<p>Type <b>Space</b> ␣ then <b>Enter</b> to open the note you picked before.</p>"
    text = extract_html(_article(body), mode=mode).text  # type: ignore[arg-type]
    assert "␣ then" in text


def test_a_mark_at_the_start_of_a_line_leaves_no_space() -> None:
    assert restore_inline_spaces("**Tip:**␣Save\n␣often\n  - ␣nested") == (
        "**Tip:** Save\noften\n  - nested"
    )


@MODES
@pytest.mark.parametrize(
    ("body", "expected", "unwanted"),
    [
        ("The area grows as x<sup>2</sup> when the side doubles.", "x^2 when", "x2"),
        ("As the survey<sup>[1]</sup> found, most notes stay short.", "survey^[1] found",
         "survey[1]"),
        ("It came in 12<sup>th</sup> and 1<sup>er</sup> in two polls.", "12th and 1er", "^"),
        ("Water is H<sub>2</sub>O, as ever.", "H2O, as", "^"),
        ("Footnote mark after a space <sup>4</sup> stays.", "space 4 stays", "^"),
    ],
    ids=["exponent", "footnote", "ordinals", "subscript", "after-a-space"],
)  # fmt: skip
def test_superscript_after_a_word_is_set_apart_except_an_ordinal(
    mode: str, body: str, expected: str, unwanted: str
) -> None:
    text = extract_html(_article(f"<p>{body}</p>"), mode=mode).text  # type: ignore[arg-type]
    text = text.replace("\\[", "[").replace("\\]", "]")  # markdown escapes the brackets
    assert expected in text and unwanted not in text
