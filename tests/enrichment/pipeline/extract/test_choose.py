"""Choosing between the two candidate extractions by agreement."""

from __future__ import annotations

import pytest

from enrichment.pipeline.extract.candidates import drop_repeated_chrome, resiliparse_candidate
from enrichment.pipeline.extract.choose import choose_candidate

ARTICLE = " ".join(f"sentence{i} of the story goes on here." for i in range(40))
OTHER = " ".join(f"teaser{i} for another story elsewhere." for i in range(120))


@pytest.mark.parametrize(
    ("first", "second", "source", "reason"),
    [
        (ARTICLE, ARTICLE, "trafilatura", "agreement"),
        (ARTICLE, ARTICLE + " " + ARTICLE.replace("sentence", "reply"), "resiliparse", "superset"),
        (ARTICLE, OTHER, "trafilatura", "disagreement"),
        ("Loading the page", ARTICLE, "resiliparse", "trafilatura too short"),
        ("", ARTICLE, "resiliparse", "trafilatura too short"),
        (ARTICLE, "", "trafilatura", "resiliparse empty"),
        (ARTICLE, ARTICLE + " a few more words", "trafilatura", "agreement"),
    ],
    ids=["same", "longer-superset", "longer-but-different", "first-too-short", "first-empty",
         "second-empty", "slightly-longer"],
)  # fmt: skip
def test_choice(first: str, second: str, source: str, reason: str) -> None:
    choice = choose_candidate(first, second)
    assert (choice.source, choice.reason) == (source, reason)


def test_words_with_a_dotted_capital_i_are_counted_as_written() -> None:
    # 45 words: below the 50 that count as "found something", whatever lower-casing does
    # to the capital I with a dot (it becomes an "i" and a combining dot, two runs of text).
    turkish = " ".join(f"\u0130zmir{i}" for i in range(45))
    longer = " ".join(f"word{i}" for i in range(60))
    assert choose_candidate(turkish, longer).reason == "trafilatura too short"


def test_contained_share_is_reported() -> None:
    assert choose_candidate(ARTICLE, ARTICLE).contained == 1.0
    assert choose_candidate(ARTICLE, OTHER).contained == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a post\nReply\nb post\nReply\nc post\nReply", "a post\nb post\nc post"),
        ("a post\nReply\nb post\nReply", "a post\nReply\nb post\nReply"),  # twice: kept
        ("same long quoted line of six words\n" * 3, "same long quoted line of six words\n" * 3),
        ("x\nAdd to cart\ny\nadd to CART\nz\n Add to cart ", "x\ny\nz"),
        ("", ""),
    ],
    ids=["three-times", "twice", "long-line", "case-and-space", "empty"],
)
def test_repeated_short_controls_are_dropped(text: str, expected: str) -> None:
    assert drop_repeated_chrome(text) == expected


def test_resiliparse_candidate_drops_navigation_and_footer() -> None:
    body = "".join(
        f"<p>Paragraph {i} says something long enough to be content.</p>" for i in range(6)
    )
    page = (
        "<html><body><nav><a href='/'>Home</a> <a href='/x'>Shop</a></nav>"
        f"<main>{body}</main><footer>Copyright Example</footer></body></html>"
    )
    for mode in ("text", "markdown"):
        text = resiliparse_candidate(page, mode=mode)  # type: ignore[arg-type]
        assert "Paragraph 0 says something" in text and "Paragraph 5 says something" in text
        assert "Copyright Example" not in text and "Shop" not in text
