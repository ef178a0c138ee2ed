"""The site's menus kept above the page's heading go, on small pages written for these tests."""

from __future__ import annotations

import pytest

from enrichment.pipeline.extract.header import cut_leading_menu, cut_site_header
from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.text import markdown_to_text

MENU = [
    "Skip to content", "Shop", "Lamps", "Chairs", "Tables", "Rugs", "Log in", "Basket",
    "Search the shop", "Help", "Gift cards", "Stores", "Sale", "Contact us",
]  # fmt: skip
LONG_MENU = [
    *MENU,
    "Outdoor",
    "Kitchen",
    "New in",
    "Brands",
    "Lighting",
    "Offers",
    "Garden",
    "Bedroom",
]
INTRO = "Our lamps are cast in brass in our own foundry and wired by hand."


def _shop_page(menu_entries: list[str], *, headline: bool = True) -> str:
    # The menu is plain labels in the same wrapper as the heading: no <nav> or <header> to
    # drop, and too few links for an extractor to take it for navigation. Without the
    # <h1>, the headline is the title, which is no line of the text.
    menu = "".join(f"<div class='m'><span>{entry}</span></div>" for entry in menu_entries)
    cards = "".join(
        f"<div class='c'><a href='/p/{n}'>Brass lamp {n}</a><span>${n}9</span></div>"
        for n in range(12)
    )
    heading = "<h1>Brass lamps</h1>" if headline else ""
    return (
        "<html><head><title>Brass lamps | Shop</title></head><body><div class='main'>"
        f"<div class='top'>{menu}</div>{heading}<p>{INTRO}</p>"
        f"<div class='grid'>{cards}</div></div></body></html>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_shop_page_loses_the_menu_above_its_heading(mode: str) -> None:
    text = extract_html(_shop_page(MENU), mode=mode).text  # type: ignore[arg-type]
    assert INTRO in text and "Brass lamp 11" in text
    for entry in ("Skip to content", "Search the shop", "Gift cards", "Contact us"):
        assert entry not in text


def test_the_lines_from_the_headline_on_are_kept() -> None:
    text = "\n".join([*MENU, "Brass lamps", INTRO])
    assert cut_site_header(text, "Brass lamps") == f"Brass lamps\n{INTRO}"


def test_running_text_above_the_headline_is_kept() -> None:
    pitch = "We have cast lamps by hand in our own small foundry since the spring of 1921."
    text = "\n".join([pitch, pitch.replace("lamps", "bells"), "Brass lamps", INTRO])
    assert cut_site_header(text, "Brass lamps") == text


def test_a_few_lines_above_the_headline_are_kept() -> None:
    text = "\n".join(["Home", "Lamps", "Brass lamps", INTRO])
    assert cut_site_header(text, "Brass lamps") == text


def test_no_headline_line_leaves_the_text_alone() -> None:
    text = "\n".join([*MENU, INTRO])
    assert cut_site_header(text, "Brass lamps") == text
    assert cut_site_header(text, None) == text


def test_markdown_links_count_as_their_labels() -> None:
    menu = [f"[{entry}](/a/very/long/path/to/the/{n}/section)" for n, entry in enumerate(MENU)]
    text = "\n".join([*menu, "# Brass lamps", INTRO])
    cut = cut_site_header(text, "Brass lamps", flatten=markdown_to_text)
    assert cut == f"# Brass lamps\n{INTRO}"


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_page_opening_with_its_menus_loses_them(mode: str) -> None:
    text = extract_html(_shop_page(LONG_MENU, headline=False), mode=mode).text  # type: ignore[arg-type]
    assert INTRO in text and "Brass lamp 11" in text
    for entry in ("Skip to content", "Search the shop", "Lighting", "Offers"):
        assert entry not in text


def test_a_few_short_lines_at_the_top_are_kept() -> None:
    text = "\n".join(["Lamps", "Brass lamps", INTRO * 5])
    assert cut_leading_menu(text) == text


def test_short_lines_at_the_top_of_a_short_text_are_kept() -> None:
    text = "\n".join([*LONG_MENU, INTRO])
    assert cut_leading_menu(text) == text


def test_a_menu_of_markdown_links_is_read_as_its_labels() -> None:
    menu = [
        f"- [{entry}](/shop/{n}/all-the-things-in-this-section)"
        for n, entry in enumerate(LONG_MENU)
    ]
    body = "\n".join([INTRO] * 6)
    assert cut_leading_menu("\n".join([*menu, body]), flatten=markdown_to_text) == body
