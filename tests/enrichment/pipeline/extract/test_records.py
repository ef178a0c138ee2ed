"""The repeated-records candidate: listings and product grids written one block per record."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.choose import records_are_content, records_replace
from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.records import listing_records, records_candidate
from enrichment.pipeline.extract.region import words_on_page
from enrichment.pipeline.extract.text import markdown_to_text

RESULTS = [
    ("Night trains of Europe", "Sleeper routes from Vienna, Paris and Zurich, with fares."),
    ("Ferries of the Greek islands", "Which crossings run all year and which only in summer."),
    ("Cycling the Danube path", "Eight stages from Passau to Vienna on quiet riverside roads."),
    ("Walking the Lycian Way", "Coastal trail stages, water points and where to sleep."),
    ("Rail passes compared", "When a pass pays for itself and when single tickets win."),
]
PRODUCTS = [
    ("Brass Desk Lamp", "$89.00", "Warm light, weighted base, two-metre fabric cable"),
    ("Oak Floor Lamp", "$149.00", "Solid oak stem with a linen shade and foot switch"),
    ("Opal Pendant Light", "$119.00", "Hand-blown opal glass globe for kitchen islands"),
    ("Clip Reading Light", "$34.00", "Flexible neck that clips onto shelves and headboards"),
    ("Paper Table Lamp", "$59.00", "Washi paper shade that softens the glare of the bulb"),
]
MENU = "".join(f'<li class="menu"><a href="/{n}">Section {n}</a></li>' for n in range(8))


def _listing() -> str:
    results = "".join(
        f'<div class="result"><a href="/guides/{i}">{title}</a><p>{summary}</p>'
        '<span class="more">Read more</span></div>'
        for i, (title, summary) in enumerate(RESULTS)
    )
    return (
        f"<html><body><nav><ul>{MENU}</ul></nav><h1>Search: slow travel</h1>"
        f"<div class='results'>{results}</div></body></html>"
    )


def _grid() -> str:
    cards = "".join(
        f'<div class="product-card"><a href="/p/{i}"><h3>{name}</h3></a>'
        f'<span class="price">{price}</span><p>{note}</p><button>Add to cart</button></div>'
        for i, (name, price, note) in enumerate(PRODUCTS)
    )
    return (
        "<html><body><div class='head'><h1>Lighting</h1><p>Lamps for every room.</p></div>"
        f"<div class='grid'>{cards}</div></body></html>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_listing_keeps_every_item_and_not_the_menu(mode: str) -> None:
    tree = lxml.html.document_fromstring(_listing())
    records = records_candidate(tree, mode=mode)  # type: ignore[arg-type]
    assert records is not None
    for title, summary in RESULTS:
        assert title in records.page and summary in records.page
    assert "Section 3" not in records.page
    assert records.page.index("Search: slow travel") < records.page.index(RESULTS[0][0])


def test_a_product_grid_keeps_each_name_and_price_with_a_linked_title_per_record() -> None:
    records = records_candidate(
        lxml.html.document_fromstring(_grid()), mode="markdown", base_url="https://shop.test/"
    )
    assert records is not None
    text = records.page
    assert text.startswith("# Lighting\n\nLamps for every room.\n\n")  # heading, intro
    for index, (name, price, note) in enumerate(PRODUCTS):
        assert f"### [{name}](https://shop.test/p/{index})\n{price}\n{note}" in text
    assert "Add to cart" not in text  # a button is chrome


def test_a_table_row_record_keeps_its_cells_apart() -> None:
    rows = "".join(
        f"<tr><td>{i}</td><td><a href='/b/{i}'>{title}</a><div>{summary}</div></td></tr>"
        for i, (title, summary) in enumerate(RESULTS, start=1)
    )
    tree = lxml.html.document_fromstring(f"<html><body><table>{rows}</table></body></html>")
    records = records_candidate(tree, mode="text")
    assert records is not None and f"1\n{RESULTS[0][0]}\n{RESULTS[0][1]}" in records.page


def test_records_replace_a_short_text_that_kept_most_of_a_short_grid() -> None:
    cards = [f"Velvet cushion {n} in moss green, linen back, {n}0 euros" for n in range(1, 5)]
    records = "\n\n".join(cards)
    kept = "\n".join(cards[:3])  # under TOO_SHORT_WORDS, yet most of the records' 4-grams
    assert records_are_content(kept, records)
    assert not records_are_content("\n".join([*cards[:3]] * 2), records)  # not short


def test_a_menu_of_short_entries_is_no_records() -> None:
    tree = lxml.html.document_fromstring(f"<html><body><ul>{MENU}</ul></body></html>")
    assert records_candidate(tree, mode="text") is None


def test_records_replace_a_text_that_kept_a_piece_of_them() -> None:
    found = records_candidate(lxml.html.document_fromstring(_listing()), mode="markdown")
    assert found is not None
    items = markdown_to_text(found.items)
    piece = "\n".join(items.split("\n")[:4])
    assert records_are_content(piece, items)
    assert not records_are_content(items, items)  # the chosen text holds them already
    assert not records_are_content("An unrelated article paragraph. " * 10, items)


def test_an_article_with_a_row_of_related_post_cards_keeps_the_article() -> None:
    paragraphs = "".join(
        f"<p>Paragraph {i} of the review: the night train left Vienna on time, the cabin was"
        " clean and the attendant brought coffee before the border.</p>"
        for i in range(10)
    )
    cards = "".join(
        f'<div class="related-card"><a href="/r/{i}"><h3>{title}</h3></a><p>{summary}</p></div>'
        for i, (title, summary) in enumerate(RESULTS)
    )
    html = (
        "<html><head><title>Vienna to Rome by sleeper</title></head><body>"
        f"<div class='post'><h1>Vienna to Rome by sleeper</h1>{paragraphs}</div>"
        f"<div class='related'><h2>Related posts</h2>{cards}</div></body></html>"
    )
    result = extract_html(html, mode="text")
    assert result.extractor != "records"
    assert "Paragraph 9 of the review" in result.text


GUIDES = [
    (
        f"Guide {n}: {place}",
        f"Where to stay in {place}, which trains reach it and what a week"
        " there costs, from the station café to the last ferry of the evening.",
    )
    for n, place in enumerate(
        ["Trieste", "Ljubljana", "Rijeka", "Zadar", "Split", "Kotor", "Bari", "Lecce", "Matera"]
        + ["Palermo"]
    )
]


def _declared_article(records: str) -> str:
    """A page that declares itself an article: a headline, a blurb of one paragraph, records."""
    blurb = (
        "<p>Our editors travelled the Adriatic coast by rail and ferry this year and wrote a"
        " guide to each town on the way, with the trains, the ferries, the places to stay and"
        " what a week costs; the guides below are sorted from north to south, and each one"
        " was checked again this spring.</p>"
    )
    return (
        '<html><head><meta property="og:type" content="article"></head><body>'
        f"<nav><ul>{MENU}</ul></nav><h1>Adriatic guides</h1><div class='intro'>{blurb}</div>"
        f"<div class='guides'>{records}</div></body></html>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_page_declared_an_article_that_is_a_list_keeps_every_item(mode: str) -> None:
    cards = "".join(
        f'<div class="guide"><a href="/g/{i}"><h3>{title}</h3></a><div>{summary}</div></div>'
        for i, (title, summary) in enumerate(GUIDES)
    )
    result = extract_html(_declared_article(cards), mode=mode)  # type: ignore[arg-type]
    for title, summary in GUIDES:
        assert title in result.text and summary in result.text
    assert "Section 3" not in result.text


def test_a_declared_article_whose_sections_hold_no_links_is_read_as_the_article() -> None:
    # Same-shaped blocks without a link to an item are parts of the page (questions and
    # answers, sections), not a list of items: the article's body is read as before.
    sections = "".join(
        f'<div class="faq"><h3>{title}</h3><span>{summary}</span></div>'
        for title, summary in GUIDES
    )
    result = extract_html(_declared_article(sections), mode="text")
    assert result.extractor != "records"
    assert "Our editors travelled the Adriatic coast" in result.text


CUPS = [
    ("Glass Cup 4oz", "Amber, Flaxen, Lilac, Meadowlark, Violet", "$29.95"),
    ("Glass Cup 6oz", "Bluestone, Butterrum, Sandstone, Terracotta", "$30.95"),
    ("Glass Cup 8oz", "Army Green, Custard, Deep Teal, Desert Sage", "$32.95"),
    ("Glass Cup 12oz", "Lemon, Lime, Mint, Persimmon, Ruby Wine", "$34.95"),
    ("Glass Cup 16oz", "Strawberry, Vintage Blue, Vintage Green", "$36.95"),
    ("Travel Cup 12oz", "Ultra Black, Neutral, Blue Sea, Green Haze", "$39.95"),
]
# A shop's flags on each card: its row position, stock and sale state, its categories.
FLAGS = ["first instock cat-cups", "instock sale cat-cups", "outofstock cat-travel last"]


def _shop_grid(wrapper: str = "card") -> str:
    return "".join(
        f'<li class="product type-product post-{40 + i} {FLAGS[i % 3]}">'
        f'<div class="{wrapper}"><a href="/c/{i}"><h2>{name}</h2>'
        f'<div class="swatches">{colours}</div><span>{price}</span></a></div></li>'
        for i, (name, colours, price) in enumerate(CUPS)
    )


def test_records_whose_classes_after_the_first_differ_are_one_list() -> None:
    tree = lxml.html.document_fromstring(f"<html><body><ul>{_shop_grid()}</ul></body></html>")
    records = records_candidate(tree, mode="text")
    assert records is not None
    for name, colours, price in CUPS:
        assert f"{name}\n{colours}\n{price}" in records.items


def test_a_page_declared_an_article_with_no_body_element_lists_its_grid() -> None:
    # A shop's catalogue page tagged an article by its platform: no paragraphs, so no body
    # element for records to outweigh; short linked records still make it a list.
    html = (
        '<html><head><meta property="og:type" content="article"></head><body>'
        f"<nav><ul>{MENU}</ul></nav><h1>Shop</h1><ul class='products'>{_shop_grid()}</ul>"
        "</body></html>"
    )
    tree = lxml.html.document_fromstring(html)
    records = listing_records(tree, None, words_on_page(tree))
    assert records is not None and len(records.members) == len(CUPS)
    unlinked = html.replace("<a href=", "<span data-href=").replace("</a>", "</span>")
    tree = lxml.html.document_fromstring(unlinked)
    assert listing_records(tree, None, words_on_page(tree)) is None


def test_records_of_a_page_with_no_body_element_replace_only_a_text_of_next_to_nothing() -> None:
    tree = lxml.html.document_fromstring(f"<html><body><ul>{_shop_grid()}</ul></body></html>")
    found = records_candidate(tree, mode="text")
    assert found is not None
    basket = "No products in the basket. Continue shopping."
    assert records_replace(basket, found.items, listing=True, bare=True)
    assert not records_are_content(basket, found.items)  # what another page would decide
    page = "A long text the extractors kept, about the shop and its cups. " * 10
    assert not records_replace(page, found.items, listing=True, bare=True)


FILMS = [("Night Train", "2026", "1h 54m", "R"), ("Harbour Lights", "2025", "2h 11m", "PG")]


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_records_touching_fields_are_written_apart_not_run_together(mode: str) -> None:
    # Brand and name, year, running time and rating: sibling elements with nothing between
    # them, set apart on screen by the page's style.
    cards = "".join(
        f'<li class="film"><a href="/f/{i}"><span>Studio {i}</span><span>{name}</span></a>'
        f"<div><span>{year}</span><span>{length}</span><span>{rating}</span></div>"
        f"<div><span>Rated</span><span>.</span></div></li>"
        for i, (name, year, length, rating) in enumerate(FILMS * 2)
    )
    tree = lxml.html.document_fromstring(f"<html><body><ul>{cards}</ul></body></html>")
    records = records_candidate(tree, mode=mode)  # type: ignore[arg-type]
    assert records is not None
    text = markdown_to_text(records.page) if mode == "markdown" else records.page
    for i, (name, year, length, rating) in enumerate(FILMS * 2):
        assert f"Studio {i} {name}" in text and f"{year} {length} {rating}" in text
    assert "Rated." in text  # punctuation stays with its word


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_control_repeated_in_every_record_is_template_not_content(mode: str) -> None:
    # A rating widget's stars, a "rate this" block and an in-page "back to top" link say the
    # same in every record; a subject every result shares and a one-word label are fields.
    cards = "".join(
        f'<div class="book"><a href="/b/{i}">{title}</a><p>{summary}</p>'
        '<div>Rate this guide</div><a href="#">1 of 5 stars</a><a href="#">2 of 5 stars</a>'
        "<p>Subject: <span>Slow travel (st)</span></p><div>Winner</div>"
        '<a href="#top">Back to top</a></div>'
        for i, (title, summary) in enumerate(RESULTS)
    )
    tree = lxml.html.document_fromstring(f"<html><body><h1>Guides</h1>{cards}</body></html>")
    records = records_candidate(tree, mode=mode)  # type: ignore[arg-type]
    assert records is not None
    text = markdown_to_text(records.page) if mode == "markdown" else records.page
    for title, summary in RESULTS:
        assert title in text and summary in text
    for control in ("Rate this guide", "of 5 stars", "Back to top"):
        assert control not in text
    assert text.count("Slow travel (st)") == len(RESULTS)
    assert text.count("Winner") == len(RESULTS)


def test_a_menu_of_categories_before_the_records_is_no_introduction() -> None:
    categories = "".join(f'<li><a href="/c/{n}">Category {n}</a></li>' for n in range(14))
    dates = "".join(f'<li><a href="/d/{n}">March {n}</a></li>' for n in range(1, 4))
    results = "".join(
        f'<div class="result"><a href="/guides/{i}">{title}</a><p>{summary}</p></div>'
        for i, (title, summary) in enumerate(RESULTS)
    )
    tree = lxml.html.document_fromstring(
        f"<html><body><h1>Guides</h1><p>Our guides to slow travel.</p><ul>{dates}</ul>"
        f"<ul>{categories}</ul><div>{results}</div></body></html>"
    )
    records = records_candidate(tree, mode="text")
    assert records is not None
    assert "Our guides to slow travel." in records.page and "March 2" in records.page
    assert "Category 7" not in records.page


def test_records_keep_the_words_before_the_page_heading_as_its_header() -> None:
    page = (
        "<html><body><div id='top'><a href='/'>Home</a> Sign in <script>var menu = 1;</script>"
        "<svg><text>logo</text></svg><span>Watchlist</span></div>tail words"
        f"<main><h1>Search: slow travel</h1>{_listing().split('</h1>', 1)[1]}</main>"
    )
    records = records_candidate(lxml.html.document_fromstring(page), mode="text")
    assert records is not None
    assert records.header == "Home Sign in Watchlist tail words"


def test_records_replace_a_text_that_kept_the_whole_page_header_and_all() -> None:
    found = records_candidate(lxml.html.document_fromstring(_listing()), mode="text")
    assert found is not None
    header = "Menu Sign in Watchlist English Deutsch Italiano Espanol Francais Nederlands " * 3
    whole = header + "\n" + found.items + "\nRate\nMark as watched"
    assert not records_replace(whole, found.items, listing=False, bare=False)
    assert records_replace(whole, found.items, listing=False, bare=False, header=header)
    # A text without the page's header is an extraction of its content: it stands.
    assert not records_replace(
        found.items + " More.", found.items, listing=False, bare=False, header=header
    )


_PACK_SPECS = [
    ("Volume", "28 litres"), ("Weight", "1.1 kg"), ("Shell", "recycled nylon ripstop"),
    ("Back panel", "ventilated mesh"), ("Hip belt", "padded, removable"),
    ("Hydration", "sleeve for a three litre bladder"), ("Warranty", "five years"),
]  # fmt: skip
_PACK = (
    "A day pack for long trail days with a ventilated back panel, a padded hip belt and a "
    "sleeve for a three litre hydration bladder. The recycled nylon shell sheds light rain "
    "and the lid pocket keeps a map within reach."
)


def _product_with_variations() -> str:
    """A product's name, price, blurb and specs, then its other colours' priced cards.

    Each card repeats the start of the blurb: the cards hold a piece of the product's text
    and much it lacks, as a listing holds the piece of it the extractors kept.
    """
    specs = "".join(f"<li>{name}: {value}</li>" for name, value in _PACK_SPECS)
    teaser = " ".join(_PACK.split()[:30])
    cards = "".join(
        f'<li class="variant"><a href="/p/{i}">Alder Trail Backpack 28 L in {colour}</a>'
        f"<p>{teaser}...</p><span>${120 + i}.00</span></li>"
        for i, colour in enumerate(["Moss", "Slate", "Rust", "Sand", "Night", "Glacier"])
    )
    return (
        "<!doctype html><html><head><title>Alder Trail Backpack 28 L</title>"
        '<meta property="og:type" content="product"></head><body><main><div class="product">'
        '<h1>Alder Trail Backpack 28 L</h1><p class="price">$129.00</p>'
        f"<div><p>{_PACK}</p><p>{_PACK.replace('day pack', 'pack')}</p><ul>{specs}</ul></div>"
        f'</div></main><div class="variations"><h2>Other colours</h2><ul>{cards}</ul></div>'
        "<footer><p>© 2026 Example Ltd · Privacy · Terms</p></footer></body></html>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_product_page_keeps_its_own_text_not_its_variations_cards(mode: str) -> None:
    result = extract_html(_product_with_variations(), mode=mode)  # type: ignore[arg-type]
    assert "Warranty: five years" in result.text and "$129.00" in result.text
    assert "Glacier" not in result.text and "$125.00" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_list_split_into_sections_is_written_whole(mode: str) -> None:
    # Results by category, each category its own wrapper and container of the same shape:
    # the records found are the largest section's; the page shows every section in order.
    def section(title: str, rows: list[tuple[str, str]]) -> str:
        cards = "".join(
            f'<div class="card"><a href="/g/{name}">{name}</a><p>{summary}</p></div>'
            for name, summary in rows
        )
        return f'<div class="group"><h2>{title}</h2><div class="grid">{cards}</div></div>'

    tree = lxml.html.document_fromstring(
        "<html><body><h1>Guides</h1>"
        f"{section('Rail and sea', RESULTS)}{section('Lamps', [p[::2] for p in PRODUCTS[:4]])}"
        "</body></html>"
    )
    records = records_candidate(tree, mode=mode)  # type: ignore[arg-type]
    assert records is not None
    text = markdown_to_text(records.page) if mode == "markdown" else records.page
    for title, summary in RESULTS:
        assert title in text and summary in text and title in records.items
    for name, _, about in PRODUCTS[:4]:
        assert name in text and about in text
        assert name not in records.items  # only the largest section is weighed
    assert text.index("Rail passes compared") < text.index("Brass Desk Lamp")


def test_blocks_without_a_class_beside_the_records_are_no_sections() -> None:
    # A bare <div> of records among the page's other bare <div>s (its notices, its footer):
    # being shaped alike says nothing, and those blocks are not written as more records.
    cards = "".join(
        f'<div class="card"><a href="/g/{n}">{title}</a><p>{summary}</p></div>'
        for n, (title, summary) in enumerate(RESULTS)
    )
    tree = lxml.html.document_fromstring(
        "<html><body><h1>Guides</h1><div><div><p>Cookie notice: we use cookies to count visits"
        f" and nothing else.</p></div><div>{cards}</div><div><p>Company footer: imprint, jobs"
        " and press, all rights reserved.</p></div></div></body></html>"
    )
    records = records_candidate(tree, mode="text")
    assert records is not None
    assert RESULTS[0][0] in records.page and RESULTS[-1][1] in records.page
    assert "Cookie notice" not in records.page and "Company footer" not in records.page


def _long_listing() -> str:
    """Twelve linked entries, each a title and a summary of a line."""
    entries = "".join(
        f'<li class="entry"><a href="/routes/{n}">Night train {n} from Vienna to Rome</a>'
        f"<p>Leaves at {n} in the evening, sleeper cabins, reaches Rome by noon.</p></li>"
        for n in range(12)
    )
    return f"<html><body><h1>Routes</h1><ul class='entries'>{entries}</ul></body></html>"


def test_records_complete_a_list_the_block_level_text_dropped_and_the_chosen_text_cut() -> None:
    found = records_candidate(lxml.html.document_fromstring(_long_listing()), mode="text")
    assert found is not None
    piece = "\n".join(found.items.split("\n\n")[:8])  # the first eight entries of twelve
    # Without the block-level text: the piece holds over half of the records, which stays.
    assert not records_replace(piece, found.items, listing=False, bare=False)
    # resiliparse took the list for navigation: the records complete the piece.
    assert records_replace(piece, found.items, listing=False, bare=False, blocks="Routes")
    # resiliparse kept the list: the piece is what the extractors agree on.
    assert not records_replace(piece, found.items, listing=False, bare=False, blocks=found.items)
    # What the records add is only each entry's short line (a date): no whole entries.
    dated = found.items + "".join(f"\n\n{n} May" for n in range(12))
    assert not records_replace(found.items, dated, listing=False, bare=False, blocks="Routes")
