from __future__ import annotations

import pytest

from enrichment.pipeline.net.ssrf import SsrfPolicy
from richoutput.canvas.media_refs import clean_reference, split_media_lines, split_payload
from richoutput.canvas.media_validation import validate_media_reference
from richoutput.canvas.render import render_assistant_text

ACCEPTED = [
    "https://cdn.example.com/a.png",
    "HTTPS://CDN.example.com/a.png",
    "https://cdn.example.com:8443/a.png",
    "https://8.8.8.8/a.png",
    "https://xn--bcher-kva.example/a.png",
    "/tmp/a.png",
    "./out/a.png",
    "~/Pictures/a.png",
    "~\\Pictures\\a.png",
    "C:\\Users\\a.png",
    "C:/Users/a.png",
    "\\\\server\\share\\a.png",
    "media/inbound/a.png",
    "file:///tmp/a.png",
    "FILE:/tmp/a.png",
    "/tmp/..hidden/a.png",
]

REJECTED = [
    ("", "empty reference"),
    ("x" * 4097, "reference too long"),
    ("http://cdn.example.com/a.png", "only https URLs are allowed"),
    ("https://user:pw@cdn.example.com/a.png", "credentials in URL"),
    ("https://user@cdn.example.com/a.png", "credentials in URL"),
    ("https://127.0.0.1/a.png", "blocked host: loopback address 127.0.0.1"),
    ("https://127.1/a.png", "blocked host: loopback address 127.0.0.1"),
    ("https://0x7f000001/a.png", "blocked host: loopback address 127.0.0.1"),
    ("https://2130706433/a.png", "blocked host: loopback address 127.0.0.1"),
    ("https://10.0.0.5/a.png", "blocked host: private address 10.0.0.5"),
    ("https://192.168.1.1/a.png", None),
    ("https://172.16.0.1/a.png", None),
    ("https://169.254.169.254/latest", None),
    ("https://100.64.0.1/a.png", None),
    ("https://224.0.0.1/a.png", None),
    ("https://255.255.255.255/a.png", None),
    ("https://0.0.0.0/a.png", None),
    ("https://198.18.0.1/a.png", None),
    ("https://[::1]/a.png", "IPv6 literal host"),
    ("https://[2001:4860:4860::8888]/a.png", "IPv6 literal host"),
    ("https://[::ffff:127.0.0.1]/a.png", "IPv6 literal host"),
    ("https://localhost/a.png", "single-label host 'localhost'"),
    ("https://intranet/a.png", "single-label host 'intranet'"),
    ("https://localhost.localdomain/a.png", None),
    ("https://app.localhost/a.png", None),
    ("https://printer.local/a.png", None),
    ("https://db.internal/a.png", None),
    ("https://metadata.google.internal/a.png", None),
    ("https://example..com/a.png", "empty label in host 'example..com'"),
    ("https://LOCALHOST./a.png", "single-label host 'localhost'"),
    ("https://", "unparseable URL"),
    ("../secret.png", "path traversal"),
    ("..", "path traversal"),
    ("/tmp/../etc/passwd", "path traversal"),
    ("media\\..\\secret.png", "path traversal"),
    ("~root/.ssh/id_rsa", "unsupported home directory form"),
    ("image.png", "bare filename"),
    ("screenshot", "not a media reference"),
    ("ftp://example.com/a.png", "unsupported scheme"),
    ("data:image/png;base64,AAAA", "unsupported scheme"),
    ("javascript:alert(1)", "unsupported scheme"),
    ("/tmp/a b.png", "whitespace in reference"),
    ("/tmp/a\x00.png", "control character"),
]


@pytest.mark.parametrize("reference", ACCEPTED)
def test_validator_accepts(reference: str) -> None:
    assert validate_media_reference(reference).ok


@pytest.mark.parametrize(("reference", "reason"), REJECTED, ids=[r[:40] for r, _ in REJECTED])
def test_validator_rejects(reference: str, reason: str | None) -> None:
    check = validate_media_reference(reference)
    assert not check.ok
    assert check.reason
    if reason is not None:
        assert check.reason == reason


def test_bare_filename_only_with_fallback_flag() -> None:
    assert validate_media_reference("image.png", allow_bare_filename=True).ok


def test_policy_opt_in_reaches_classifier() -> None:
    # The classifier is the one door: an operator opt-in must change the verdict.
    policy = SsrfPolicy(allow_private_network=True)
    assert validate_media_reference("https://10.0.0.5/a.png", policy=policy).ok


@pytest.mark.parametrize(
    ("payload", "pieces"),
    [
        ("/Users/pete/My File.png", ["/Users/pete/My File.png"]),
        ("/tmp/a.png /tmp/b.png", ["/tmp/a.png", "/tmp/b.png"]),
        (
            "https://a.example/x.png https://b.example/y.png",
            ["https://a.example/x.png", "https://b.example/y.png"],
        ),
        ("/tmp/a.png https://b.example/y.png", ["/tmp/a.png", "https://b.example/y.png"]),
        ("C:\\My Docs\\a b.png", ["C:\\My Docs\\a b.png"]),
        ("word /tmp/a.png", ["word", "/tmp/a.png"]),
    ],
    ids=["spaced-path", "two-paths", "two-urls", "path-then-url", "drive-spaced", "word-first"],
)
def test_split_payload(payload: str, pieces: list[str]) -> None:
    assert split_payload(payload) == pieces


@pytest.mark.parametrize(
    ("piece", "cleaned"),
    [
        ('"/tmp/a.png"', "/tmp/a.png"),
        ("(/tmp/a.png),", "/tmp/a.png"),
        ("[{`/tmp/a.png`}]", "/tmp/a.png"),
        ('/tmp/a.png"}],"details":{"x":1}', "/tmp/a.png"),
        ("https://x.example/a.jpg'}", "https://x.example/a.jpg"),
    ],
)
def test_clean_reference(piece: str, cleaned: str) -> None:
    assert clean_reference(piece) == cleaned


@pytest.mark.parametrize(
    ("text", "media", "visible"),
    [
        ("Here\nMEDIA:/tmp/a.png", ["/tmp/a.png"], "Here"),
        ("MEDIA: /tmp/a.png\nDone", ["/tmp/a.png"], "Done"),
        ("  media:/tmp/a.png", ["/tmp/a.png"], ""),
        ("Media:`/tmp/a.png`", ["/tmp/a.png"], ""),
        ('MEDIA: "/Users/pete/My File.png"', ["/Users/pete/My File.png"], ""),
        ("MEDIA: '/tmp/a b.png'", ["/tmp/a b.png"], ""),
        ("MEDIA:/Users/pete/My File.png", ["/Users/pete/My File.png"], ""),
        ("MEDIA:/tmp/a.png /tmp/b.png", ["/tmp/a.png", "/tmp/b.png"], ""),
        ('MEDIA:/tmp/a.png"}],"details":{}', ["/tmp/a.png"], ""),
        ("MEDIA:image.png", ["image.png"], ""),
        ("MEDIA:my photo.png", ["my photo.png"], ""),
        ("MEDIA:https://cdn.example.com/a.png", ["https://cdn.example.com/a.png"], ""),
        (
            "MEDIA:https://cdn.example.com/a.png https://127.0.0.1/b.png",
            ["https://cdn.example.com/a.png"],
            "https://127.0.0.1/b.png",
        ),
        ("MEDIA:screenshot", [], "MEDIA:screenshot"),
        ("MEDIA:http://example.com/a.png", [], "MEDIA:http://example.com/a.png"),
        ("MEDIA:https://127.0.0.1/a.png", [], "MEDIA:https://127.0.0.1/a.png"),
        ("a\nMEDIA:../../etc/passwd\nb", [], "a\nb"),
        ("MEDIA:~root/.ssh/id_rsa", [], ""),
        ("MEDIA:/tmp/../etc/shadow", [], ""),
        ('MEDIA:"../secret dir/x.png"', [], ""),
        ("see MEDIA:/tmp/a.png", [], "see MEDIA:/tmp/a.png"),
        ("x `MEDIA:/tmp/a.png` y", [], "x `MEDIA:/tmp/a.png` y"),
        ("```\nMEDIA:/tmp/a.png\n```", [], "```\nMEDIA:/tmp/a.png\n```"),
        ("~~~\nMEDIA:/tmp/a.png", [], "~~~\nMEDIA:/tmp/a.png"),
        ("para\n\n    MEDIA:/tmp/a.png", [], "para\n\n    MEDIA:/tmp/a.png"),
        ("\n\nMEDIA:/tmp/a.png\nText\n\n\nMore  \n", ["/tmp/a.png"], "Text\n\n\nMore"),
        ("A\r\nMEDIA:/tmp/a.png\r\nB", ["/tmp/a.png"], "A\r\nB"),
        ("![badge](https://img.example/b.svg)", [], "![badge](https://img.example/b.svg)"),
        ("MEDIA:/tmp/a.png ../../etc/passwd", ["/tmp/a.png"], ""),
    ],
    ids=[
        "after-text",
        "first-line",
        "indented-lower-case",
        "backtick-wrapped",
        "double-quoted-spaces",
        "single-quoted-spaces",
        "unquoted-spaced-path",
        "two-paths",
        "json-tail",
        "bare-filename-fallback",
        "spaced-bare-filename",
        "https-url",
        "rejected-url-sibling-visible",
        "bare-word-line-kept",
        "http-line-kept",
        "loopback-line-kept",
        "traversal-line-removed",
        "home-user-line-removed",
        "inner-traversal-removed",
        "quoted-traversal-removed",
        "mid-line-prose",
        "inline-code-prose",
        "fenced-code",
        "unclosed-fence",
        "indented-code",
        "leading-blank-lines-trailing-trim",
        "crlf-lines",
        "markdown-image-stays-text",
        "path-leftover-not-leaked",
    ],
)
def test_media_lines(text: str, media: list[str], visible: str) -> None:
    rendered = render_assistant_text(text)
    assert list(rendered.media_urls) == media
    assert rendered.text == visible


def test_rejections_are_recorded_with_reasons() -> None:
    result = split_media_lines("MEDIA:https://127.0.0.1/a.png\nMEDIA:../x.png")
    assert [(r.reference, r.reason) for r in result.rejected] == [
        ("https://127.0.0.1/a.png", "blocked host: loopback address 127.0.0.1"),
        ("../x.png", "path traversal"),
    ]


def test_media_in_order_of_appearance() -> None:
    text = "MEDIA:/b.png\ntext\nMEDIA:https://cdn.example.com/a.png\nMEDIA:/c.png"
    assert render_assistant_text(text).media_urls == (
        "/b.png",
        "https://cdn.example.com/a.png",
        "/c.png",
    )


@pytest.mark.parametrize(
    ("structured", "expected"),
    [
        (["https://cdn.example.com/a.png"], ["https://cdn.example.com/a.png"]),
        (["https://127.0.0.1/a.png", "/tmp/ok.png"], ["/tmp/ok.png"]),
        (["http://example.com/a.png"], []),
        (["../../etc/passwd"], []),
        (["/Users/pete/My File.png"], ["/Users/pete/My File.png"]),
        (["https://user:pw@cdn.example.com/a.png"], []),
    ],
    ids=[
        "public-https",
        "loopback-dropped",
        "http-dropped",
        "traversal-dropped",
        "spaces-ok",
        "creds",
    ],
)
def test_structured_media_same_validator(structured: list[str], expected: list[str]) -> None:
    rendered = render_assistant_text("MEDIA:/tmp/parsed.png\nhi", media_urls=structured)
    assert list(rendered.media_urls) == expected
    assert rendered.text == "hi"


def test_parsed_media_used_when_no_structured() -> None:
    assert render_assistant_text("MEDIA:/tmp/p.png", media_urls=[]).media_urls == ("/tmp/p.png",)


def test_audio_tag_glued_into_spaced_path_sharp_edge() -> None:
    # Documented reference quirk: put directives on their own line.
    rendered = render_assistant_text("MEDIA:/tmp/a [[audio_as_voice]]")
    assert not rendered.audio_as_voice
    assert rendered.media_urls == ("/tmp/a [[audio_as_voice",)


def test_media_line_budget_keeps_hostile_messages_cheap() -> None:
    text = "MEDIA:/tmp/ok.png\n" * 100 + "MEDIA:/tmp/over.png\nMEDIA:screenshot"
    rendered = render_assistant_text(text)
    assert len(rendered.media_urls) == 100
    assert "/tmp/over.png" not in rendered.text  # over budget, path-like: removed
    assert rendered.text == "MEDIA:screenshot"


def test_fragment_budget_rejects_whole_line() -> None:
    rendered = render_assistant_text("MEDIA:" + " ".join(f"/tmp/{i}.png" for i in range(40)))
    assert rendered.media_urls == ()
    assert rendered.text == ""
    assert rendered.rejected_media[0].reason == "too many references on one line"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MEDIA:/x", True),
        ("a\n \tmedia:/x", True),
        ("a media:/x", False),
        ("a\nx media:/x\n", False),
        ("İ\nMEDIA:/x", True),
        ("", False),
    ],
)
def test_has_media_line(text: str, expected: bool) -> None:
    from richoutput.canvas.media_refs import has_media_line

    assert has_media_line(text) is expected
