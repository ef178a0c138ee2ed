from __future__ import annotations

import math

import pytest

from richoutput.canvas.iframe import IframeAttrs, canvas_iframe_attrs


def block(**preview: object) -> dict[str, object]:
    return {"type": "canvas", "preview": {"kind": "canvas", **preview}}


@pytest.mark.parametrize(
    ("url", "internal_only", "with_external"),
    [
        ("/__openclaw__/canvas/documents/cv_1/index.html",)
        + ("/__openclaw__/canvas/documents/cv_1/index.html",) * 2,
        (
            "  /__openclaw__/canvas/a?x=1#top  ",
            "/__openclaw__/canvas/a?x=1#top",
            "/__openclaw__/canvas/a?x=1#top",
        ),
        ("/__openclaw__/canvas", "/__openclaw__/canvas", "/__openclaw__/canvas"),
        ("/__openclaw__/canvas/x/../y", "/__openclaw__/canvas/y", "/__openclaw__/canvas/y"),
        ("/__openclaw__/canvas/../../admin/", None, None),
        ("/__openclaw__/canvas/%2e%2e/secret", None, None),
        ("/__openclaw__/canvasx/a", None, None),
        ("/admin/", None, None),
        ("relative/page.html", None, None),
        ("https://evil.example/x", None, "https://evil.example/x"),
        ("http://evil.example/x", None, "http://evil.example/x"),
        (
            "//evil.example/__openclaw__/canvas/x",
            None,
            "https://evil.example/__openclaw__/canvas/x",
        ),
        ("/\\evil.example/x", None, "https://evil.example/x"),
        ("javascript:alert(1)", None, None),
        ("data:text/html,<script>alert(1)</script>", None, None),
        ("data:image/png;base64,AAAA", None, None),
        ("ftp://files.example/x", None, None),
        ("", None, None),
        (42, None, None),
    ],
    ids=[
        "document",
        "trimmed-with-query-fragment",
        "canvas-root",
        "dot-segments-normalised-inside",
        "dot-segments-escaping",
        "encoded-dot-segments",
        "prefix-lookalike",
        "other-same-origin-path",
        "relative-path",
        "external-https",
        "external-http",
        "protocol-relative",
        "backslash-host",
        "javascript",
        "data-html",
        "data-image",
        "ftp",
        "empty",
        "not-a-string",
    ],
)
def test_src_rule(url: object, internal_only: str | None, with_external: str | None) -> None:
    assert canvas_iframe_attrs(block(url=url)).src == internal_only
    assert canvas_iframe_attrs(block(url=url), allow_external=True).src == with_external


@pytest.mark.parametrize(
    ("mode", "ceiling", "sandbox"),
    [
        ("default", None, "allow-scripts"),
        ("scripts", None, "allow-scripts"),
        ("strict", None, ""),
        ("trusted", None, "allow-scripts allow-same-origin"),
        ("trusted", "strict", ""),
        ("trusted", "scripts", "allow-scripts"),
        ("strict", "scripts", ""),
        ("default", "bogus", "allow-scripts"),
    ],
)
def test_sandbox(mode: str, ceiling: str | None, sandbox: str) -> None:
    preview: dict[str, object] = {"url": "/__openclaw__/canvas/a"}
    if ceiling is not None:
        preview["sandbox"] = ceiling
    attrs = canvas_iframe_attrs(block(**preview), sandbox_mode=mode)
    assert attrs.sandbox == sandbox
    assert "allow-forms" not in attrs.sandbox and "allow-popups" not in attrs.sandbox


def test_unknown_sandbox_mode_fails_loudly() -> None:
    with pytest.raises(ValueError, match="sandbox mode"):
        canvas_iframe_attrs(block(url="/__openclaw__/canvas/a"), sandbox_mode="open")


@pytest.mark.parametrize(
    ("height", "expected"),
    [
        (None, 320),
        (480, 480),
        (480.9, 480),
        (100, 160),
        (5000, 1200),
        (-3, 160),
        (math.inf, 320),
        (math.nan, 320),
        ("600", 320),
        (True, 320),
    ],
    ids=repr,
)
def test_height(height: object, expected: int) -> None:
    preview: dict[str, object] = {"url": "/__openclaw__/canvas/a"}
    if height is not None:
        preview["preferredHeight"] = height
    assert canvas_iframe_attrs(block(**preview)).height == expected


@pytest.mark.parametrize(
    ("title", "label"),
    [(None, "Canvas"), ("  Status  ", "Status"), ("   ", "Canvas"), ("<script>", "<script>")],
)
def test_title_label(title: str | None, label: str) -> None:
    preview: dict[str, object] = {} if title is None else {"title": title}
    assert canvas_iframe_attrs(block(**preview)).title == label


def test_malformed_block() -> None:
    assert canvas_iframe_attrs({"type": "canvas"}) == IframeAttrs(
        None, "allow-scripts", 320, "Canvas", "the embed has no URL"
    )
