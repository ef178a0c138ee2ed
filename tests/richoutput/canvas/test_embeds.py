from __future__ import annotations

import pytest

from richoutput.canvas.embeds import (
    extract_embeds,
    find_embed_matches,
    is_dangerous_value,
    parse_attributes,
    preferred_height,
)

DOC = "/__openclaw__/canvas/documents/{}/index.html"


def preview_of(text: str) -> dict[str, object]:
    result = extract_embeds(text)
    assert len(result.blocks) == 1, result
    preview = result.blocks[0]["preview"]
    assert isinstance(preview, dict)
    return preview


@pytest.mark.parametrize(
    ("text", "remaining"),
    [
        ('[embed ref="cv_1" title="Status" /]', ""),
        ('[embed ref="cv_1"/]', ""),
        ('[EMBED ref="cv_1" /]', ""),
        ('[Embed\nref="cv_1"\n/]', ""),
        ('see [embed ref="cv_1" /] end', "see  end"),
        ('[embed ref="cv_1"]inline <b>html</b>\nbody[/embed] after', " after"),
        ('[embed ref="cv_1"]body[/EMBED]', ""),
        ('a [embed ref="x" /]\n\n\n\nb', "a \n\n\n\nb"),
    ],
    ids=[
        "self-closing",
        "no-space-before-slash",
        "upper-case-word",
        "newlines-as-whitespace",
        "spaces-not-merged",
        "block-form-body-discarded",
        "block-close-any-case",
        "remainder-not-collapsed",
    ],
)
def test_shortcode_is_cut_out(text: str, remaining: str) -> None:
    result = extract_embeds(text)
    assert result.text == remaining
    assert len(result.blocks) == 1


@pytest.mark.parametrize(
    "text",
    [
        '[embed]ref="x"[/embed]',
        "[embed/]",
        '[embedref="x"/]',
        '[embed ref="x"',
        '[embed ref="x"]no closing tag',
        '[view ref="cv_1" /]',
        '[present_view ref="cv_1" /]',
        '`[embed ref="x" /]`',
        '```\n[embed ref="x" /]\n```',
        'para\n\n    [embed ref="x" /]',
        '[embed ref="a]b" /]',
        "[embed ref=x /]",
        '[embed title="no ref" /]',
        '[embed ref="x" target="tool_card" /]',
        '[embed ref="x" target="ASSISTANT_MESSAGE" /]',
        '[embed ref="   " /]',
    ],
    ids=[
        "no-whitespace-after-embed",
        "bare-self-closing",
        "glued-attribute",
        "unterminated",
        "block-without-close",
        "view-never-recognised",
        "present-view-never-recognised",
        "inline-code",
        "fenced-code",
        "indented-code",
        "bracket-in-value",
        "unquoted-value",
        "missing-url-and-ref",
        "foreign-target",
        "target-is-case-sensitive",
        "blank-ref-ignored",
    ],
)
def test_not_rendered_stays_verbatim(text: str) -> None:
    result = extract_embeds(text)
    assert result.blocks == ()
    assert result.text == text


def test_skipped_shortcode_records_reason() -> None:
    result = extract_embeds('[embed title="t" /]')
    assert [s.reason for s in result.skipped] == ["missing url or ref"]


def test_self_closing_does_not_open_a_block_to_stray_close() -> None:
    result = extract_embeds('[embed ref="a" /] middle text [/embed]')
    assert result.text == " middle text [/embed]"
    assert len(result.blocks) == 1


def test_first_match_wins_on_overlap() -> None:
    text = '[embed ref="outer"] [embed ref="inner" /] [/embed] [embed ref="last" /]'
    result = extract_embeds(text)
    ids = [b["preview"]["viewId"] for b in result.blocks]  # type: ignore[index]
    assert ids == ["outer", "last"]
    assert result.text == " "


def test_blocks_in_shortcode_order() -> None:
    result = extract_embeds('[embed ref="a"/] x [embed url="/u" /] y [embed ref="c"]z[/embed]')
    urls = [b["preview"]["url"] for b in result.blocks]  # type: ignore[index]
    assert urls == [DOC.format("a"), "/u", DOC.format("c")]


def test_exact_block_shape() -> None:
    result = extract_embeds('[embed ref="cv_123" title="Status" height="320" /]')
    assert result.blocks == (
        {
            "type": "canvas",
            "preview": {
                "kind": "canvas",
                "surface": "assistant_message",
                "render": "url",
                "viewId": "cv_123",
                "url": DOC.format("cv_123"),
                "title": "Status",
                "preferredHeight": 320,
            },
        },
    )


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ('ref="cv_1"', {"viewId": "cv_1", "url": DOC.format("cv_1")}),
        ('url="https://x.test/a"', {"url": "https://x.test/a"}),
        ('ref="r" url="/u"', {"viewId": "r", "url": "/u"}),
        ("ref='single'", {"viewId": "single", "url": DOC.format("single")}),
        ('REF="upper"', {"viewId": "upper", "url": DOC.format("upper")}),
        ('ref = "spaced"', {"viewId": "spaced", "url": DOC.format("spaced")}),
        ('ref="first" ref="second"', {"viewId": "second", "url": DOC.format("second")}),
        ('ref="keep" ref="  "', {"viewId": "keep", "url": DOC.format("keep")}),
        ('ref="  trimmed  "', {"viewId": "trimmed", "url": DOC.format("trimmed")}),
        (
            'ref="a b/c?d#e&f"',
            {"viewId": "a b/c?d#e&f", "url": DOC.format("a%20b%2Fc%3Fd%23e%26f")},
        ),
        ('ref="!~*\'()-_."', {"viewId": "!~*'()-_.", "url": DOC.format("!~*'()-_.")}),
        ('ref="é😀"', {"viewId": "é😀", "url": DOC.format("%C3%A9%F0%9F%98%80")}),
        ('ref="x" target="assistant_message"', {"viewId": "x", "url": DOC.format("x")}),
        ('ref="x" class="c" style="s"', {"viewId": "x", "url": DOC.format("x")}),
        ('ref="x" preferred_height="500"', {"viewId": "x", "url": DOC.format("x")}),
    ],
    ids=[
        "ref-builds-document-url",
        "url-only-no-view-id",
        "url-wins-view-id-kept",
        "single-quotes",
        "names-case-insensitive",
        "spaces-around-equals",
        "later-duplicate-wins",
        "empty-duplicate-ignored",
        "value-trimmed",
        "encode-uri-component-reserved",
        "encode-uri-component-keeps-marks",
        "encode-uri-component-utf8",
        "assistant-target-ok",
        "class-style-not-stored",
        "preferred-height-attribute-ignored",
    ],
)
def test_attribute_mapping(attributes: str, expected: dict[str, object]) -> None:
    preview = preview_of(f"[embed {attributes} /]")
    fixed = {"kind": "canvas", "surface": "assistant_message", "render": "url"}
    assert preview == {**fixed, **expected}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("320", 320),
        (" 400 ", 400),
        ("0x1F4", 500),
        ("0x200", 512),
        ("0o777", 511),
        ("0b11111111", 255),
        ("1e3", 1000),
        ("480.9", 480),
        ("1200.7", 1200),
        ("5000", 1200),
        ("Infinity", None),
        ("160", 160),
        ("159.99", None),
        ("100", None),
        ("-400", None),
        ("320px", None),
        ("abc", None),
        ("1_000", None),
        ("+0x200", None),
        ("", None),
        (".5e3", 500),
        ("NaN", None),
    ],
    ids=lambda v: repr(v),
)
def test_preferred_height_js_number(raw: str, expected: int | None) -> None:
    assert preferred_height(raw) == expected


def test_height_attribute_reaches_block() -> None:
    assert preview_of('[embed ref="x" height="0x1F4" /]')["preferredHeight"] == 500
    assert "preferredHeight" not in preview_of('[embed ref="x" height="320px" /]')


@pytest.mark.parametrize(
    "value",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " java\tscript:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "javascript&colon;alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "data:application/javascript,alert(1)",
        "DATA:text/html;base64,PHNjcmlwdD4=",
        "data:image/svg+xml,<svg><script>alert(1)</script></svg>",
    ],
)
def test_dangerous_values_dropped(value: str) -> None:
    assert is_dangerous_value(value)
    assert extract_embeds(f'[embed url="{value}" /]').blocks == ()


def test_image_data_url_kept() -> None:
    assert not is_dangerous_value("data:image/png;base64,AAAA")
    assert preview_of('[embed url="data:image/png;base64,AAAA" /]')["url"] == (
        "data:image/png;base64,AAAA"
    )


def test_dangerous_url_falls_back_to_ref() -> None:
    assert preview_of('[embed ref="x" url="javascript:alert(1)" /]')["url"] == DOC.format("x")


def test_on_attributes_dropped() -> None:
    assert parse_attributes('ref="x" onload="alert(1)" ONERROR="y"') == {"ref": "x"}


def test_html_in_title_is_plain_text() -> None:
    title = "<img src=x onerror=alert(1)>"
    assert preview_of(f'[embed ref="x" title="{title}" /]')["title"] == title


def test_attribute_text_over_limit_ignored() -> None:
    text = '[embed ref="x" ' + "a" * 10_241 + " /]"
    result = extract_embeds(text)
    assert result.blocks == ()
    assert result.text == text


def test_attribute_text_at_limit_accepted() -> None:
    attributes = 'ref="x"' + " " * (10_240 - len(' ref="x"'))
    assert len(find_embed_matches(f"[embed {attributes}/]")[0].attribute_text) <= 10_240
    assert len(extract_embeds(f"[embed {attributes}/]").blocks) == 1


def test_attribute_flood_last_duplicate_wins() -> None:
    flood = " ".join(f'ref="v{i}"' for i in range(800))
    assert preview_of(f"[embed {flood} /]")["viewId"] == "v799"


def test_lone_surrogate_ref_is_not_rendered() -> None:
    result = extract_embeds('[embed ref="\ud800" /]')
    assert result.blocks == ()
    assert result.skipped[0].reason == "ref cannot be URL-encoded"


def test_name_after_digit_still_parsed() -> None:
    assert parse_attributes('9ref="x"') == {"ref": "x"}
