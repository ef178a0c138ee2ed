from __future__ import annotations

import pytest

from richoutput.canvas.codespans import find_code_regions


def code_text(text: str) -> str:
    regions = find_code_regions(text)
    return "".join(c if regions.contains(i) else "." for i, c in enumerate(text))


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("a `b` c", "..`b`.."),
        ("a ``b ` c`` d", "..``b ` c``.."),
        ("a `b c", "......"),
        ("`a\n\nb`", "......"),
        ("x\n```\ny\n```\nz", "..```\ny\n```\n."),
        ("x\n~~~py\ny", "..~~~py\ny"),
        ("x\n```\ny\n~~~\nz", "..```\ny\n~~~\nz"),
        ("    code", "    code"),
        ("para\n    not code", "................."),
        ("para\n\n\tcode", "......\tcode"),
        ("```a`b\nx", "........"),
    ],
    ids=[
        "inline",
        "double-backticks",
        "unmatched-backtick",
        "inline-not-across-blank-line",
        "fence",
        "unclosed-tilde-fence",
        "fence-needs-same-marker",
        "indented-at-start",
        "indent-continues-paragraph",
        "tab-indent-after-blank",
        "backtick-fence-info-with-backtick",
    ],
)
def test_code_regions(text: str, marked: str) -> None:
    assert code_text(text) == marked
