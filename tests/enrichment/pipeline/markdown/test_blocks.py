"""The one markdown block scanner, as link detection and the canvas directive parsers read it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enrichment.pipeline.markdown.blocks import code_blocks, line_fed, paragraph_regions


def marked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character outside ``spans`` shown as a dot."""
    inside = {offset for start, end in spans for offset in range(start, end)}
    return "".join(char if offset in inside else "." for offset, char in enumerate(text))


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("x\n```\ny\n```\nz", "..```\ny\n```\n."),
        ("x\n~~~py\ny", "..~~~py\ny"),
        ("```\ny\n~~~\nz", "```\ny\n~~~\nz"),
        ("````\n```\ny\n````\nz", "````\n```\ny\n````\n."),
        ("```\ny\n`````\nz", "```\ny\n`````\n."),
        ("```\ny\n``` \t\nz", "```\ny\n``` \t\n."),
        ("```\ny\n``` x\nz", "```\ny\n``` x\nz"),
        ("```\ny\n   ```\nz", "```\ny\n   ```\n."),
        ("```\ny\n    ```\nz", "```\ny\n    ```\nz"),
        ("    ```\ny", "    ```.."),
        ("```a`b\nx", "........"),
        ("~~~a`b\nx", "~~~a`b\nx"),
        ("    code", "    code"),
        ("para\n\n\tcode", "......\tcode"),
        ("para\n    continued", "." * 18),
        ("```\na\n```\n    b", "```\na\n```\n    b"),
        ("\n    a\n    b\nc", ".    a.    b.."),
        ("  \tx", "  \tx"),
        ("   x", "...."),
        ("# T\n    x", "." * 9),
        ("---\n    x", "." * 9),
    ],
    ids=[
        "fence-with-its-closing-line",
        "unclosed-fence-runs-to-the-end",
        "closing-fence-uses-the-same-character",
        "closing-fence-at-least-as-long",
        "closing-fence-may-be-longer",
        "closing-fence-then-blanks",
        "closing-fence-then-text-does-not-close",
        "closing-fence-indented-three",
        "closing-fence-indented-four-does-not-close",
        "fence-indented-four-is-indented-code",
        "backtick-info-string-with-backtick",
        "tilde-info-string-may-hold-backticks",
        "indented-at-the-start",
        "tab-indent-after-a-blank-line",
        "indented-line-continues-a-paragraph",
        "indented-after-a-fence",
        "indented-code-one-span-per-line",
        "two-spaces-and-a-tab-reach-four-columns",
        "three-spaces-are-not-code",
        "canvas-reading-knows-no-heading",
        "canvas-reading-knows-no-thematic-break",
    ],
)
def test_code_blocks(text: str, code: str) -> None:
    assert marked(text, code_blocks(text)) == code


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("a\n\nb", "a\n.b"),
        ("a\n```\n[x](y)\n```\nb", "a\n" + "." * 15 + "b"),
        ("# T\n    x", "# T\n....."),
        ("a\n===\n    x", "a\n" + "." * 9),
        ("\n===\n    x", ".===\n    x"),
        ("a\n---\nb", "a\n....b"),
        ("a\n    b", "a\n    b"),
        ("> q\n- i", "> q\n- i"),
    ],
    ids=[
        "blank-line-cuts",
        "fence-cuts",
        "heading-is-its-own-region-then-indented-code",
        "setext-underline-then-indented-code",
        "no-setext-underline-without-a-paragraph",
        "thematic-break-cuts",
        "indented-line-continues-a-paragraph",
        "quotes-and-lists-are-paragraph-text",
    ],
)
def test_paragraph_regions(text: str, parsed: str) -> None:
    assert marked(text, list(paragraph_regions(text))) == parsed


def test_a_bare_carriage_return_is_a_line_feed_of_the_same_length() -> None:
    assert line_fed("a\rb\r\nc\r") == "a\nb\r\nc\n"
    text = "x\r\r    [[a]]\r~~~\r[[b]]\r~~~\r[[c]]"
    assert marked(text, code_blocks(text)) == "...    [[a]].~~~\r[[b]]\r~~~\r....."


FRAGMENTS = ["```", "````", "~~~", "`", " ", "   ", "    ", "\t", "\n", "\n\n", "x", "# "]
FRAGMENTS += ["===", "---", "[a](b)", "> ", "- "]
lf_texts = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)


def without_carriage_returns(text: str, marks: str) -> str:
    return "".join(mark for char, mark in zip(text, marks, strict=True) if char != "\r")


@settings(max_examples=400, deadline=None)
@given(lf_texts)
def test_every_line_ending_reads_the_same(text: str) -> None:
    """CommonMark's line endings: a bare "\\r" and "\\r\\n" end a line as "\\n" does."""
    code = code_blocks(text)
    paragraphs = list(paragraph_regions(text))
    bare = text.replace("\n", "\r")
    assert code_blocks(bare) == code
    assert list(paragraph_regions(bare)) == paragraphs
    crlf = text.replace("\n", "\r\n")
    assert without_carriage_returns(crlf, marked(crlf, code_blocks(crlf))) == marked(text, code)
    crlf_paragraphs = marked(crlf, list(paragraph_regions(crlf)))
    assert without_carriage_returns(crlf, crlf_paragraphs) == marked(text, paragraphs)
