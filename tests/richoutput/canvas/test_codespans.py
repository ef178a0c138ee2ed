from __future__ import annotations

import pytest

from richoutput.canvas.codespans import find_code_regions
from richoutput.canvas.render import render_assistant_text


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


@pytest.mark.parametrize(
    ("text", "visible", "audio"),
    [
        ("~~~\rcode\r~~~\r[[audio_as_voice]] done", "~~~\rcode\r~~~\r done", True),
        ("intro\r\r    [[audio_as_voice]] kept", "intro\r\r    [[audio_as_voice]] kept", False),
        ("`a\r\r[[audio_as_voice]] b`", "`a\r\r b`", True),
        ("~~~\r\ncode\r\n~~~\r\n[[audio_as_voice]] done", "~~~\r\ncode\r\n~~~\r\n done", True),
    ],
    ids=[
        "fence-closed-on-a-bare-cr-line",
        "indented-code-after-a-bare-cr-blank-line",
        "no-inline-span-across-a-bare-cr-blank-line",
        "crlf-reads-the-same",
    ],
)
def test_a_bare_carriage_return_ends_a_line(text: str, visible: str, audio: bool) -> None:
    """CommonMark's line endings, as the markdown view shows the text: a directive after a
    fence closed on a "\\r"-ended line is acted on, one in indented code is literal."""
    rendered = render_assistant_text(text)
    assert (rendered.text, rendered.audio_as_voice) == (visible, audio)
