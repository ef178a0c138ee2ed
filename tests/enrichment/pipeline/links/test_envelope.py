from __future__ import annotations

import pytest

from enrichment.pipeline.links.envelope import LinkOutput, format_link_body, format_link_sections

ONE = LinkOutput("https://example.com", "link-understand", "Example summary")
TWO = LinkOutput("https://b.example/x", None, "Second\nsummary")


@pytest.mark.parametrize(
    ("body", "outputs", "expected"),
    [
        (
            "check this",
            [ONE],
            "check this\n\n[Link]\nURL: https://example.com\nSource: link-understand\n"
            "Summary:\nExample summary",
        ),
        (
            "two links",
            [ONE, TWO],
            "two links\n\n"
            "[Link 1/2]\nURL: https://example.com\nSource: link-understand\nSummary:\nExample summary\n\n"
            "[Link 2/2]\nURL: https://b.example/x\nSource: unknown\nSummary:\nSecond\nsummary",
        ),
        (
            "  padded body \n\n",
            [ONE],
            "padded body\n\n[Link]\nURL: https://example.com\nSource: link-understand\n"
            "Summary:\nExample summary",
        ),
        (
            "",
            [ONE],
            "[Link]\nURL: https://example.com\nSource: link-understand\nSummary:\nExample summary",
        ),
        (
            " \n\t",
            [ONE],
            "[Link]\nURL: https://example.com\nSource: link-understand\nSummary:\nExample summary",
        ),
        ("  untouched body  ", [], "  untouched body  "),
        (
            "  untouched body  ",
            [LinkOutput("https://a.example", "x", "  \n ")],
            "  untouched body  ",
        ),
        ("", [], ""),
        (
            "body",
            [
                LinkOutput("  https://a.example  ", "  cli  ", "  text  \n"),
                LinkOutput("", "x", "dropped: no url"),
                LinkOutput("https://c.example", "  ", "kept"),
            ],
            "body\n\n[Link 1/2]\nURL: https://a.example\nSource: cli\nSummary:\ntext\n\n"
            "[Link 2/2]\nURL: https://c.example\nSource: unknown\nSummary:\nkept",
        ),
        (
            "body",
            [LinkOutput("https://a.example", "/usr/local/bin/link-understand", "x")],
            "body\n\n[Link]\nURL: https://a.example\nSource: /usr/local/bin/link-understand\n"
            "Summary:\nx",
        ),
    ],
    ids=[
        "single-link-header",
        "numbered-links-one-blank-line-between",
        "body-trimmed",
        "empty-body-sections-only",
        "blank-body-sections-only",
        "no-outputs-body-unchanged",
        "only-empty-outputs-body-unchanged",
        "empty-everything",
        "outputs-trimmed-and-blank-dropped-before-numbering",
        "source-full-path",
    ],
)
def test_format_link_body(body: str, outputs: list[LinkOutput], expected: str) -> None:
    assert format_link_body(body, outputs) == expected


def test_seed_document_example() -> None:
    """The seed doc's ``<original message>`` + ``[Link]`` block, line for line."""
    body = format_link_body(
        "<original message>", [LinkOutput("https://example.com", "link-understand", "<cli output>")]
    )
    assert body.splitlines() == [
        "<original message>",
        "",
        "[Link]",
        "URL: https://example.com",
        "Source: link-understand",
        "Summary:",
        "<cli output>",
    ]


def test_sections_are_numbered_over_all_outputs() -> None:
    outputs = [LinkOutput(f"https://{n}.example", "cli", f"s{n}") for n in range(1, 4)]
    headers = [section.splitlines()[0] for section in format_link_sections(outputs)]
    assert headers == ["[Link 1/3]", "[Link 2/3]", "[Link 3/3]"]


def test_summary_with_envelope_lookalike_stays_inside_its_section() -> None:
    hostile = LinkOutput("https://a.example", "cli", "[Link 9/9]\nURL: https://evil.example")
    body = format_link_body("hi", [hostile])
    assert body.endswith("Summary:\n[Link 9/9]\nURL: https://evil.example")
    assert body.count("[Link]") == 1
