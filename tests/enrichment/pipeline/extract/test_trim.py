"""Cutting what follows an article's body, on small pages written for these tests."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.trim import article_body, trim_after_body

BODY = [
    "Cast iron pans rust when water sits on them, so dry the pan on a low flame after washing "
    "and wipe a thin film of oil over the whole surface while it is still warm.",
    "Soap does not strip a seasoned pan: the seasoning is polymerised oil bonded to the metal, "
    "not loose grease, and a quick wash with a soft brush leaves it intact.",
    "If rust spots appear anyway, scrub them off with steel wool, rinse, dry the pan on the "
    "hob and bake it upside down at a high heat with a thin coat of oil for an hour.",
]
TEASERS = [
    ("Why carbon steel woks go blue", "A look at what happens to carbon steel at high heat "
     "and why the colour change on a new wok is nothing to worry about at all."),
    ("Ten knives for a small kitchen", "Our editors tried dozens of knives over a year of "
     "cooking and these are the ten we kept using every single day at home."),
]  # fmt: skip
ITEMS = [
    ("Skillet 20 cm", "A small pan for one egg, a few mushrooms or toasting spices quickly."),
    ("Skillet 26 cm", "The everyday size for two people, searing, frying and oven bakes."),
    ("Dutch oven 5 l", "A heavy lidded pot for bread, stews and slow braises in the oven."),
]


def _article(after: str) -> str:
    paragraphs = "".join(f"<p>{text}</p>" for text in BODY)
    return f"""<!doctype html><html><head><title>Caring for cast iron</title>
<meta property="og:type" content="article"></head><body>
<header><nav><a href="/">Home</a> <a href="/kitchen">Kitchen</a></nav></header>
<div class="page"><h1>Caring for cast iron</h1><div class="story">{paragraphs}</div>
{after}</div><footer><p>© 2026 Example Kitchen · Privacy · Terms</p></footer></body></html>"""


TEASER_CARDS = (
    "<div class='more'><h2>Keep reading</h2>"
    + "".join(
        f"<div class='card'><h3><a href='/{n}'>{title}</a></h3><p>{text}</p></div>"
        for n, (title, text) in enumerate(TEASERS)
    )
    + "</div>"
)
ITEM_LIST = (
    "<div class='shop'><h2>The range</h2><ul>"
    + "".join(
        f"<li><a href='/p/{n}'><h3>{title}</h3><p>{text}</p></a></li>"
        for n, (title, text) in enumerate(ITEMS)
    )
    + "</ul></div>"
)


def _text(page: str) -> str:
    return "\n".join(
        " ".join(element.text_content().split())
        for element in lxml.html.fromstring(page).iter("h1", "h2", "h3", "p")
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_article_loses_the_teasers_after_its_body(mode: str) -> None:
    text = " ".join(extract_html(_article(TEASER_CARDS), mode=mode).text.split())  # type: ignore[arg-type]
    for paragraph in BODY:
        assert paragraph in text
    for title, excerpt in TEASERS:
        assert title not in text and excerpt not in text


def test_trailing_lines_outside_the_body_are_cut() -> None:
    page = _article(TEASER_CARDS)
    trimmed = trim_after_body(_text(page), article_body(lxml.html.fromstring(page)))
    assert trimmed.endswith(BODY[-1])


def test_an_article_in_two_parts_is_not_cut() -> None:
    second_part = (
        "<figure><img src='pan.jpg'></figure><div class='story-2'>"
        + "".join(f"<p>{text}</p>" for text in BODY[:2]).replace("pan", "skillet")
        + "</div>"
    )
    page = _article(second_part)
    assert article_body(lxml.html.fromstring(page)) is None
    assert trim_after_body(_text(page), None) == _text(page)


def test_a_list_of_items_after_the_body_is_kept() -> None:
    page = _article(ITEM_LIST)
    text = _text(page)
    assert trim_after_body(text, article_body(lxml.html.fromstring(page))) == text


_METALS = ["brass", "copper", "zinc", "tin", "nickel", "bronze", "pewter", "silver"]
# A roundup: after the opening paragraphs, many short sections, each too small to rival them.
ROUNDUP = "".join(
    f"<div class='entry'><h3>Maker {n}: the {metal} pan</h3><p>Workshop {n} casts every "
    f"{metal} pan number {n} by hand, lines it with tin, and sells it with a lid, a spare "
    f"handle and a guarantee of {n + 2} years.</p></div>"
    for n in range(3)
    for metal in _METALS
)


def test_a_text_going_on_for_far_longer_than_the_body_is_not_cut() -> None:
    # The body element holds only the opening of a text built of many small blocks: what
    # would go is several times what would stay, the rest of the text, not teasers after it.
    page = _article(ROUNDUP)
    body = article_body(lxml.html.fromstring(page))
    assert body is not None
    text = _text(page)
    assert trim_after_body(text, body) == text


def test_markdown_links_are_read_as_their_labels() -> None:
    page = _article("")
    body = article_body(lxml.html.fromstring(page))
    linked = f"[{BODY[-1]}](https://example.test/a/very/long/path/to/the/page)"
    text = f"{BODY[0]}\n{linked}\nShare this on every network"
    assert trim_after_body(text, body, flatten=lambda line: line.split("](")[0]) == (
        f"{BODY[0]}\n{linked}"
    )


MORE_BODY = (
    "A pan that has gone sticky has too much oil baked on in a thin layer: heat it empty "
    "until the film smokes off, let it cool and wipe on a fresh, much thinner coat of oil."
)


CALLS_TO_ACTION = [
    ("Visit the test kitchen", "Book a seat at a Saturday class where our cooks show you how "
     "to strip, season and care for an old pan from a flea market."),
    ("Ask a cook", "Send us a question about your pan, your hob or your oven and one of our "
     "cooks answers it by email within two working days."),
    ("Join the letter", "Every Friday we send new recipes, honest reviews of pans and knives "
     "and a short story from the test kitchen to your inbox."),
    ("Shop the range", "Our own skillets and pots are cast in a small foundry, seasoned by hand "
     "and sent out ready to cook with from the first day."),
]  # fmt: skip
CALL_BLOCKS = (
    "<div class='cta'>"
    + "".join(f"<div><h3>{title}</h3><p>{text}</p></div>" for title, text in CALLS_TO_ACTION)
    + "</div>"
)


def _undeclared(after: str, *, headings: str = "<h1>Caring for cast iron</h1>") -> str:
    """The article page without ``og:type``: nothing but its structure says it is one."""
    page = _article(after).replace('<meta property="og:type" content="article">', "")
    page = page.replace("<h1>Caring for cast iron</h1>", headings)
    return page.replace(f"<p>{BODY[-1]}</p>", f"<p>{BODY[-1]}</p><p>{MORE_BODY}</p>")


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_undeclared_page_built_like_an_article_loses_what_follows_its_body(mode: str) -> None:
    text = " ".join(extract_html(_undeclared(CALL_BLOCKS), mode=mode).text.split())  # type: ignore[arg-type]
    for paragraph in [*BODY, MORE_BODY]:
        assert paragraph in text
    for _, call in CALLS_TO_ACTION:
        assert call not in text


def test_undeclared_page_with_several_h1_is_not_cut() -> None:
    # Two top headings: a page of several parts (docs, a landing page), not one article.
    headings = "<h1>Caring for cast iron</h1><h1>Kitchen guides</h1>"
    text = " ".join(extract_html(_undeclared(CALL_BLOCKS, headings=headings)).text.split())
    assert all(call in text for _, call in CALLS_TO_ACTION)
