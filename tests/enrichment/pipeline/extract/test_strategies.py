"""Main-content extraction per kind of page, on small pages written for these tests."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.candidates import resiliparse_candidate, unfold_text_toggles
from enrichment.pipeline.extract.markdown import prepare_for_markdown
from enrichment.pipeline.extract.page import extract_html
from enrichment.pipeline.extract.region import region_candidate

from .pages import DOCS, FORUM, ITEMS, LISTING, POSTS, PRODUCT

MODES = pytest.mark.parametrize("mode", ["text", "markdown"])


@MODES
def test_forum_thread_keeps_every_post_and_drops_the_chrome(mode: str) -> None:
    result = extract_html(FORUM, mode=mode)  # type: ignore[arg-type]
    for _, _, text in POSTS:
        assert text[:60] in " ".join(result.text.split())
    assert "Similar threads" not in result.text and "Cookie settings" not in result.text
    assert result.title == "Starter smells of acetone"


@MODES
def test_docs_page_keeps_its_code_blocks_and_headings(mode: str) -> None:
    text = extract_html(DOCS, mode=mode).text  # type: ignore[arg-type]
    assert "client = httpkit.Client(retries=3, backoff=0.5)" in text
    assert 'response = client.get("https://example.test/items")' in text
    assert 'client.post("/orders", json=order, idempotency_key=key)' in text
    assert "Timeouts" not in text  # the sidebar
    if mode == "markdown":
        assert "```\nclient = httpkit.Client" in text and "## Back-off" in text


@MODES
def test_product_page_keeps_name_price_and_description(mode: str) -> None:
    result = extract_html(PRODUCT, mode=mode)  # type: ignore[arg-type]
    assert result.title == "Alder Trail Backpack 28 L"  # printed first by compose_page_text
    assert "$129.00" in result.text
    assert "ventilated back panel" in result.text and "lid pocket keeps a map" in result.text
    assert "1.1 kg" in result.text  # the specification table
    assert "You may also like" not in result.text and "Rain cover" not in result.text


@MODES
def test_listing_keeps_every_item(mode: str) -> None:
    text = " ".join(extract_html(LISTING, mode=mode).text.split())  # type: ignore[arg-type]
    for title, description in ITEMS:
        assert title in text and description in text
    assert "Cookie settings" not in text


def test_listing_markdown_keeps_item_links() -> None:
    text = extract_html(LISTING, mode="markdown", base_url="https://travel.test/guides").text
    assert "[Lisbon in four days](" in text and text.count("\n- ") + 1 >= len(ITEMS)


def test_docs_headings_with_permalink_icons_keep_their_words_in_markdown() -> None:
    section = "".join(
        f"<p>{{name}} {i} explains how effects run after every render of the component.</p>"
        for i in range(6)
    )
    html = (
        "<html><head><title>Effects</title></head><body><main><article><h1>Effects</h1>"
        f"{section.format(name='Intro')}"
        '<h2 id="tips"><a href="#tips" aria-hidden class="anchor"></a>Tips for effects</h2>'
        f"{section.format(name='Tip')}"
        '<h3 id="skip"><a href="#skip" class="anchor"><svg></svg></a>Skipping effects</h3>'
        f"{section.format(name='Skip')}</article></main></body></html>"
    )
    text = extract_html(html, mode="markdown").text
    assert "## Tips for effects" in text and "### Skipping effects" in text
    assert "Skip 5 explains how effects run" in text


def test_markdown_has_no_raw_underline_tags() -> None:
    html = (
        "<html><head><title>Save power</title></head><body><main><article><h1>Save power</h1>"
        "<p>A laptop draws <u>far less power</u> than a desktop under the same load, and"
        " a few habits cut it further still, every day of the working week.</p>"
        "<p>Lower the brightness and enable power saving: both cost nothing at all.</p>"
        "</article></main></body></html>"
    )
    text = extract_html(html, mode="markdown").text
    assert "draws far less power than" in text and "<u>" not in text


def _card_grid(wrapper: str) -> str:
    """A page of teaser cards, each one link around a heading and a summary."""
    cards = "".join(
        f'<a class="card" href="/g/{i}"><div><h3>{title}</h3></div><p>{summary}</p></a>'
        for i, (title, summary) in enumerate(ITEMS)
    )
    return (
        "<html><head><title>City guides</title></head><body><header><a href='/'>Home</a>"
        f"</header><{wrapper}><h1>City guides</h1><section>{cards}</section></{wrapper}>"
        "</body></html>"
    )


def test_markdown_keeps_apart_the_heading_and_summary_of_a_card_link() -> None:
    text = extract_html(_card_grid("main"), mode="markdown").text
    for title, summary in ITEMS:
        assert title + summary[:5] not in text  # not run together into one word
        assert title in text and summary in text


def test_markdown_of_the_main_region_links_a_card_by_its_heading() -> None:
    tree = lxml.html.document_fromstring(_card_grid("main"))
    text = region_candidate(tree, mode="markdown")
    title, summary = ITEMS[0]
    assert f"### [{title}](/g/0)\n\n{summary}" in text


@MODES
def test_undeclared_grid_of_card_links_keeps_each_card_heading(mode: str) -> None:
    cards = "".join(
        f'<div class="item"><a href="/g/{i}"><h3>{title}</h3><p>{summary}</p>'
        "<span>By Ana, 3 March</span></a></div>"
        for i, (title, summary) in enumerate(ITEMS)
    )
    html = (
        "<html><head><title>City guides</title></head><body><header><a href='/'>Home</a>"
        f"</header><div class='content'><h1>City guides</h1><div class='grid'>{cards}</div></div>"
        "</body></html>"
    )
    text = " ".join(extract_html(html, mode=mode).text.split())  # type: ignore[arg-type]
    for title, summary in ITEMS:
        assert title in text and summary in text


def _article(body: str) -> str:
    filler = "".join(
        f"<p>Paragraph {i} of the guide says how the state ranks on health and work.</p>"
        for i in range(8)
    )
    return (
        "<html><head><title>State ranks</title></head><body><main><article>"
        f"<h1>State ranks</h1>{filler}{body}</article></main></body></html>"
    )


def test_markdown_has_no_raw_superscript_tags() -> None:
    html = _article(
        "<p>The state came in 12<sup>th</sup> for physical activity, as the survey"
        "<sup>[1]</sup> found, and water is H<sub>2</sub>O as ever.</p>"
    )
    text = extract_html(html, mode="markdown").text
    assert "came in 12th for" in text and "<sup>" not in text and "<sub>" not in text


def test_markdown_keeps_the_space_before_formatting_in_a_heading_inside_a_list() -> None:
    html = _article(
        "<ul><li><h3>to use as <strong>headbands</strong></h3></li>"
        '<li><h3>my <a href="/sandals">sandals</a> for summer</h3></li></ul>'
        "<p>Closing words of the guide about how the state ranks on health and work.</p>"
    )
    text = extract_html(html, mode="markdown").text
    assert "to use as **headbands**" in text and "my [sandals](/sandals) for" in text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Although i<strong>ts new</strong> design", "Although **its new** design"),
        ("<strong>The first change in years. Although i</strong>ts new", "Although its** new"),
        ("save u<em>p to 10%</em> a year", "save *up to 10%* a year"),
        ("A <em>Guide for Actuarie</em>s and more", "A *Guide for Actuaries* and"),
    ],
    ids=["start", "end", "italic-start", "italic-end"],
)
def test_markdown_emphasis_cut_inside_a_word_takes_the_whole_word(body: str, expected: str) -> None:
    html = _article(f"<p>{body} of the guide, written for every reader of the page.</p>")
    text = extract_html(html, mode="markdown").text
    assert expected in text


@pytest.mark.parametrize(
    "html",
    [
        "<p>重要<b>的</b>事</p>",  # no spaces between words: a run of letters is many words
        "<p>the file status_email_<em>user</em>@.service</p>",  # "_" joins parts of a name
        "<p>to have\n<em>confidential</em> builds</p>",  # a line break is a space
    ],
    ids=["cjk", "underscore", "line-break"],
)
def test_emphasis_is_not_widened_past_a_word_edge(html: str) -> None:
    tree = lxml.html.fromstring(html)
    before = tree.text_content(), [element.text for element in tree.iter("b", "em")]
    prepare_for_markdown(tree)
    assert (tree.text_content(), [element.text for element in tree.iter("b", "em")]) == before


def test_markdown_keeps_underscores_in_names_unescaped() -> None:
    html = _article(
        "<p>Set AWS_REGION and call const_str from your code, or run"
        " <code>grep a\\_b</code> and keep _this_ as it is written.</p>"
    )
    text = extract_html(html, mode="markdown").text
    assert "Set AWS_REGION and call const_str from" in text
    assert "`grep a\\_b`" in text  # code is verbatim: the page's own backslash stays
    assert "\\_this\\_" in text  # could open emphasis: still escaped


REVIEWS = [
    ("Dana K.", "March 3, 2024", "Carried it on a three day hut trek in the rain and nothing"
     " inside got wet; the hip belt took the weight off my shoulders on every climb."),
    ("Tomás", "April 18, 2024", "The bottle pockets are deep enough that nothing falls out"
     " when I scramble, and the back panel kept my shirt dry on a hot afternoon climb."),
    ("Priya", "June 9, 2024", "I wish the lid were a little larger, but the stitching"
     " survived a season of bushwhacking and airport conveyor belts without a loose thread."),
    ("Jon B.", "August 1, 2024", "Bought it for commuting by bike: the rain cover is missing"
     " but the fabric shrugs off showers and the laptop sleeve fits a fourteen inch machine."),
]  # fmt: skip


@MODES
def test_product_page_leaves_out_its_customer_reviews(mode: str) -> None:
    reviews = "".join(
        f'<li class="entry"><div class="score" aria-label="Rated 4 out of 5"></div>'
        f"<p><b>{name}</b> <time>{date}</time></p><p>{text}</p></li>"
        for name, date, text in REVIEWS
    )
    html = PRODUCT.replace("</head>", '<meta property="og:type" content="product"></head>').replace(
        "</main>", f"<section><h2>What buyers say</h2><ul>{reviews}</ul></section></main>"
    )
    text = " ".join(extract_html(html, mode=mode).text.split())  # type: ignore[arg-type]
    assert "ventilated back panel" in text and "lid pocket keeps a map" in text
    for _, _, review in REVIEWS:
        assert review[:40] not in text


@pytest.mark.parametrize(
    "heading",
    ['<h3><a href="#" aria-controls="a{i}" aria-expanded="false">{q}</a></h3>',
     '<h3 aria-expanded="false">{q}</h3>',
     '<div class="q" aria-controls="a{i}" aria-expanded="false">{q}</div>'],
    ids=["toggle-link", "toggle-heading", "toggle-block"],
)  # fmt: skip
def test_folded_faq_questions_survive_block_extraction(heading: str) -> None:
    questions = ["How much should I save each month?", "When can I draw my pension?"]
    entries = "".join(
        heading.format(i=i, q=question) + f'<div id="a{i}"><p>Answer {i}: it depends on'
        " your income, your plans and the age you stop working; a planner can help you"
        " work out the figure that suits you.</p></div>"
        for i, question in enumerate(questions)
    )
    text = _block_text(f"<html><body><main><h1>Pensions</h1>{entries}</main></body></html>")
    for question in questions:
        assert question in text
    assert "Answer 1: it depends" in text


def test_folded_menus_stay_out_of_block_extraction() -> None:
    menu = "".join(f'<li><a href="/shop/{n}">Department {n}</a></li>' for n in range(12))
    html = (
        '<html><body><main><div class="toggle" aria-controls="menu" aria-expanded="false">'
        f'Shop all departments</div><ul id="menu">{menu}</ul><h1>Pensions</h1>'
        + "<p>Saving early matters: a small sum each month grows for decades.</p>" * 4
        + "</main></body></html>"
    )
    assert "Shop all departments" not in _block_text(html)


def _block_text(html: str) -> str:
    """resiliparse's text of a page as the extraction hands it over: folded text unfolded."""
    tree = lxml.html.document_fromstring(html)
    unfold_text_toggles(tree)
    return resiliparse_candidate(lxml.html.tostring(tree, encoding="unicode"))


FEATURES = [
    ("Faster builds", "Cached steps skip the work a change did not touch, so most builds"),
    ("Safer releases", "Every release goes to a small share of users first and rolls back"),
    ("Clear costs", "One price per minute of build time, with no seats and no setup fee"),
]


def _accordion(entry: str) -> str:
    """A landing page whose feature blocks are accordion sections (WAI-ARIA pattern)."""
    sections = "".join(
        entry.format(i=i, title=title)
        + f'<div id="f{i}" role="region"><p>{text} on its own, as the team has shown'
        " on projects of every size over the last few years.</p></div>"
        for i, (title, text) in enumerate(FEATURES)
    )
    return (
        "<html><head><title>Buildline</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<main><h1>Buildline for teams</h1><h2>Why Buildline?</h2>{sections}</main>"
        "<footer>Buildline Ltd</footer></body></html>"
    )


@MODES
@pytest.mark.parametrize(
    "entry",
    ['<h3><button aria-expanded="true" aria-controls="f{i}">{title}</button></h3>',
     '<button aria-controls="f{i}"><h3>{title}</h3></button>',
     '<h3><button>{title}</button></h3>'],
    ids=["button-in-heading", "heading-in-button", "no-panel-named"],
)  # fmt: skip
def test_accordion_headings_written_as_buttons_are_kept(mode: str, entry: str) -> None:
    text = extract_html(_accordion(entry), mode=mode).text  # type: ignore[arg-type]
    for title, body in FEATURES:
        assert title in text and body in " ".join(text.split())


@MODES
def test_toggles_of_empty_panels_stay_out(mode: str) -> None:
    html = _accordion(
        '<h3><button aria-controls="f{i}">{title}</button></h3>'
    ).replace("</main>", '<h3><button aria-controls="later">Ask a question</button></h3>'
                         '<div id="later"></div></main>')  # fmt: skip
    text = extract_html(html, mode=mode).text  # type: ignore[arg-type]
    assert "Ask a question" not in text and "Faster builds" in text
