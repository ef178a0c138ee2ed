"""Plainly built articles are read from their body element, on small pages written here."""

from __future__ import annotations

import pytest

from enrichment.pipeline.extract.page import extract_html

LEAD = (
    "The city council voted on Tuesday to close the old harbour bridge to cars from May, "
    "after inspectors found the steel deck weaker than expected."
)
PARAGRAPHS = [
    f"Paragraph {index} of the story explains what the closure means for people who cross "
    "the harbour every day, with enough detail for a reader to follow along."
    for index in range(6)
]
RELATED = "".join(
    f"<li><a href='/news/{index}'>Other story number {index}</a></li>" for index in range(6)
)
HEADER = "<header><nav><a href='/'>Home</a> <a href='/news'>News</a></nav></header>"
FOOTER = "<footer><p>© 2026 Harbour Times · Privacy · Terms</p></footer>"


def _story(*, declared: bool = True) -> str:
    meta = '<meta property="og:type" content="article">' if declared else ""
    first, rest = (
        "".join(f"<p>{text}</p>" for text in part) for part in (PARAGRAPHS[:2], PARAGRAPHS[2:])
    )
    return f"""<!doctype html><html><head><title>Bridge to close</title>{meta}</head>
<body>{HEADER}<article><div class="top"><h1>Bridge to close</h1>
<p class="byline">By Ana Lee</p><p class="standfirst">{LEAD}</p></div>
<div class="story">{first}<h2>What changes for drivers</h2>
<ul><li>Buses take the ring road</li><li>Bicycles may still cross</li></ul>
<pre><code>detour: ring road, +12 min</code></pre>{rest}
<ul class="related">{RELATED}</ul></div></article>{FOOTER}</body></html>"""


def _story_with(*blocks: str) -> str:
    """The story with these blocks just before its second section."""
    return _story().replace("<h2>What changes", "".join(blocks) + "<h2>What changes")


def test_plain_article_takes_the_fast_path_and_keeps_its_lead_and_structure() -> None:
    result = extract_html(_story(), mode="markdown")
    assert result.extractor == "article"
    text = result.text
    assert text.startswith(LEAD)  # the lead above the body, the headline reported as title
    assert "By Ana Lee" not in text  # a byline is not running text
    assert "## What changes for drivers" in text
    assert "- Buses take the ring road\n\n- Bicycles may still cross" in text
    assert "```\ndetour: ring road, +12 min\n```" in text
    assert "Paragraph 5 of the story" in text
    assert "Other story number" not in text and "Harbour Times" not in text


def test_plain_article_text_mode_has_no_markup() -> None:
    result = extract_html(_story(), mode="text")
    assert result.extractor == "article"
    assert "What changes for drivers\nBuses take the ring road" in result.text
    assert "#" not in result.text and "```" not in result.text


def test_markdown_keeps_emphasis_and_links_and_escapes_stray_underscores() -> None:
    page = _story().replace(
        "<p>Paragraph 0 of the story",
        "<p>Set <b>DETOUR_MODE </b>to _on_ or read <a href='/faq'>the notice</a>. Paragraph 0"
        " of the story",
    )
    text = extract_html(page, mode="markdown").text
    assert "Set **DETOUR_MODE** to \\_on\\_ or read [the notice](/faq)." in text


def test_page_with_a_rival_block_of_paragraphs_runs_the_extractors() -> None:
    # A page that declares nothing, with two blocks of running text side by side: a page of
    # several parts, not one plain article.
    other = "".join(
        f"<p>Another part {index} of this page tells a different story at the same length, "
        "so neither block stands for the page on its own.</p>"
        for index in range(6)
    )
    page = _story(declared=False).replace(
        "</article>", f"</article><section class='more'>{other}</section>"
    )
    result = extract_html(page, mode="markdown")
    assert result.extractor != "article"
    assert "Paragraph 5 of the story" in result.text


def test_body_in_a_sidebar_away_from_the_headline_is_not_taken() -> None:
    # The story is in <div> lines after the headline; the only <p> text is an author box.
    lines = "".join(f"<div>{text}</div>" for text in PARAGRAPHS)
    bio = "<p>" + "Ana Lee has reported on the harbour for the paper since 2015. " * 8 + "</p>"
    page = (
        "<html><head><title>Bridge</title></head><body><div class='post'><h1>Bridge</h1>"
        f"{lines}</div><div class='sidebar'>{bio}</div></body></html>"
    )
    result = extract_html(page, mode="text")
    assert result.extractor != "article"
    assert "Paragraph 5 of the story" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_declared_article_in_several_sections_is_read_whole(mode: str) -> None:
    sections = "".join(
        f"<section><h2>Part {part}</h2>"
        + "".join(f"<p>Part {part}: {text}</p>" for text in PARAGRAPHS[:3])
        + "</section>"
        for part in range(3)
    )
    page = (
        '<html><head><title>Bridge</title><meta property="og:type" content="article">'
        f"</head><body>{HEADER}<main><h1>Bridge</h1><div class='story'>{sections}</div>"
        f"</main>{FOOTER}</body></html>"
    )
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    for part in range(3):
        assert f"Part {part}: Paragraph 2 of the story" in result.text
    assert "Harbour Times" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_photo_captions_are_left_out_and_listing_captions_kept(mode: str) -> None:
    photo = (
        "<figure><img src='/bridge.jpg' alt=''>"
        "<figcaption>The old bridge at dawn. Photo: Sam Rowe</figcaption></figure>"
    )
    listing = (
        "<figure><pre><code>detour = ring_road()</code></pre>"
        "<figcaption>Listing 1: the detour drivers take</figcaption></figure>"
    )
    named = (
        "<div class='wp-caption'><img src='/quay.jpg' alt=''>"
        "<p class='wp-caption-text'>The north quay in the rain. Photo: Kim Ode</p></div>"
        "<div><div class='box-caption'>Config before the closure</div>"
        "<pre>route = bridge</pre></div>"
    )
    page = _story_with(photo, listing, named)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Photo: Sam Rowe" not in result.text and "old bridge at dawn" not in result.text
    assert "Photo: Kim Ode" not in result.text
    assert "Listing 1: the detour drivers take" in result.text
    assert "Config before the closure" in result.text
    assert "Paragraph 5 of the story" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_blocks_named_as_asides_are_left_out_of_the_body(mode: str) -> None:
    bio = (
        "<div class='post-author-box'><p>Ana Lee has covered the harbour and its bridges "
        "for the paper since 2015, and lives by the water.</p></div>"
    )
    signup = (
        "<section id='newsletter-signup'><p>Get the harbour news in your inbox every "
        "morning, free, by signing up to our daily newsletter.</p></section>"
    )
    share = "<div class='share-buttons'><p>Share this story with your friends and family</p></div>"
    comment = "<pre><code>close(bridge) <span class='comment'># from May</span></code></pre>"
    page = _story().replace('<ul class="related">', f"{comment}{bio}{signup}{share}<ul>")
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Ana Lee has covered" not in result.text and "daily newsletter" not in result.text
    assert "Share this story" not in result.text
    assert "# from May" in result.text  # a code comment is not a comment thread
    assert "Paragraph 5 of the story" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_section_named_as_kept_out_of_the_contents_is_read(mode: str) -> None:
    # "toc" in its name: the page's table of contents leaves this section out, and a table
    # of contents holds links, not paragraphs of the story.
    section = (
        "<div class='no_toc_section'><h3>Where to cross instead</h3><p>Walkers can take the "
        "lock gates at the east end of the harbour, which stay open day and night.</p></div>"
    )
    contents = "<div class='toc'><a href='#a'>Drivers</a> <a href='#b'>Walkers</a></div>"
    page = _story_with(contents, section)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Walkers can take the lock gates" in result.text
    assert "Drivers" not in result.text.split("What changes")[0]


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_box_of_running_text_within_the_body_is_read(mode: str) -> None:
    note = (
        "<aside><h3>A note on ferries</h3><p>The ferry from the north quay runs every twenty "
        "minutes while the bridge is closed, and costs the same as a bus ticket.</p></aside>"
    )
    links = "<aside><a href='/a'>Bridge history</a> <a href='/b'>Harbour map</a></aside>"
    page = _story_with(note, links)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "ferry from the north quay runs every twenty minutes" in result.text
    assert "Harbour map" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_list_of_links_to_other_pages_within_the_story_is_kept(mode: str) -> None:
    routes = (
        "<ul><li><a href='/routes/ring'>Ring road</a></li>"
        "<li><a href='/routes/ferry'>North ferry</a></li></ul>"
    )
    contents = "<ul><li><a href='#drivers'>Drivers</a></li><li><a href='#buses'>Buses</a></li></ul>"
    page = _story_with(contents, routes)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Ring road" in result.text and "North ferry" in result.text
    assert "Drivers" not in result.text  # the in-page contents go ("for drivers" stays)
    assert "Other story number" not in result.text  # the list after the story still goes


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_an_ordered_list_keeps_its_numbers_as_a_browser_shows_them(mode: str) -> None:
    steps = (
        "<ol start='3'><li>Park at the quay</li><!-- note --><li>Walk to the ferry</li>"
        "<li value='7'>Buy a ticket</li><li>Cross the harbour</li></ol>"
    )
    page = _story_with(steps)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    lines = result.text.splitlines()
    for line in ("3. Park at the quay", "4. Walk to the ferry", "7. Buy a ticket"):
        assert line in lines
    assert "8. Cross the harbour" in lines
    # An unordered list's items have no marker in text (a bullet is not a word).
    assert ("- Buses take the ring road" in lines) == (mode == "markdown")


@pytest.mark.parametrize("start", ["²", "٣", "1" * 5000, "3.5", "-", ""])
def test_a_list_number_no_browser_would_read_counts_from_one(start: str) -> None:
    # A superscript digit, another script's digit, thousands of digits: a hostile page's
    # attribute must not fail the extraction (int() refuses the first and the third).
    steps = f"<ol start='{start}'><li>Park at the quay</li><li value='{start}'>Walk</li></ol>"
    page = _story_with(steps)
    lines = extract_html(page, mode="text").text.splitlines()
    assert "1. Park at the quay" in lines and "2. Walk" in lines


def _card(index: int) -> str:
    return (
        f"<div class='card'><h4><a href='/news/card-{index}'>Teaser title number {index}</a></h4>"
        f"<div>Blurb {index} of another story, one line to make a reader click.</div></div>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_teaser_cards_within_and_after_the_story_are_left_out(mode: str) -> None:
    # A card alone between the story's paragraphs, and a row of cards after its last one.
    row = "".join(_card(index) for index in (2, 3))
    more = "".join(f"<p>{text}</p>" for text in PARAGRAPHS)  # cards are a small part of it
    page = (
        _story()
        .replace("<h2>What changes", f"{more}{_card(1)}<h2>What changes")
        .replace('<ul class="related">', f"{row}<ul class='related'>")
    )
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Teaser title" not in result.text and "Blurb" not in result.text
    assert "Paragraph 5 of the story" in result.text and "What changes" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_linked_headings_that_are_the_story_are_kept(mode: str) -> None:
    # A row of cards between the story's paragraphs (a service's columns) is its own text,
    # and so is a roundup made of cards (its items are the story).
    row = "".join(_card(index) for index in (1, 2))
    page = _story_with(row)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert "Teaser title number 1" in result.text and "Blurb 2 of another" in result.text
    items = "".join(
        f"<div class='item'><h3><a href='/shop/{n}'>Lamp number {n}</a></h3><p>Lamp {n} is a "
        "brass desk lamp with a weighted base and a linen shade, easy to build.</p></div>"
        for n in range(8)
    )
    roundup = (
        "<html><head><title>Lamps</title><meta property='og:type' content='article'></head>"
        f"<body><article><h1>Eight lamps to build</h1><div>{items}</div></article></body></html>"
    )
    text = extract_html(roundup, mode=mode).text  # type: ignore[arg-type]
    assert "Lamp number 0" in text and "Lamp number 7" in text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_bio_between_the_headline_and_the_body_is_no_lead(mode: str) -> None:
    bio = (
        "<div class='author-pop'><p class='author-bio'>Ana Lee covers the harbour and its "
        "bridges, and co-hosts the paper's weekly city podcast.</p></div>"
    )
    page = _story().replace(f"{LEAD}</p>", f"{LEAD}</p>{bio}")
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert result.text.startswith(LEAD)
    assert "podcast" not in result.text and "Paragraph 5 of the story" in result.text


def _comment(index: int) -> str:
    return (
        f"<li class='c'><div class='who'>Reader {index}</div><div class='said'><p>Comment "
        f"{index}: I cross that bridge every morning and the ring road will add twenty minutes "
        "to my trip, which nobody at the council seems to have counted.</p><p>Still, better "
        "safe than sorry with a deck that weak, and the ferry is a fine way to go.</p><p>My "
        "neighbours say the same, and we will all be at the council's meeting next week.</p>"
        "</div></li>"
    )


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_comments_in_a_list_are_not_parts_of_the_article(mode: str) -> None:
    # Each comment holds paragraphs coming close to the body's: a rival, but one post of a
    # list beside a body that is none, so the article is not read from around them both.
    thread = "<ol class='thread'>" + "".join(_comment(index) for index in range(4)) + "</ol>"
    page = _story().replace("</article>", f"<section>{thread}</section></article>")
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Paragraph 5 of the story" in result.text
    assert "Comment 0" not in result.text and "Comment 3" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_thread_of_posts_in_a_list_is_not_read_from_one_post(mode: str) -> None:
    # The body element is itself one post of the list (the first, longest): the page is a
    # thread, not an article with comments.
    first = _comment(0).replace("</div></li>", "".join(f"<p>{text}</p>" for text in PARAGRAPHS[:3]))
    replies = "".join(_comment(index) for index in range(1, 4))
    thread = f"<ol class='thread'>{first}</div></li>{replies}</ol>"
    page = (
        "<html><head><title>Bridge</title><meta property='og:type' content='article'></head>"
        f"<body><article><h1>Bridge to close: your views</h1>{thread}</article></body></html>"
    )
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor != "article"  # left to the extractors, as any thread
    assert "Comment 0" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_named_comment_thread_longer_than_the_story_is_left_out(mode: str) -> None:
    # The thread holds more words than the story, but none of its own paragraphs.
    said = "".join(
        f"<div class='said'><p>Comment {index}: the bridge has been weak for years and "
        "everybody in the north quarter knew it, so the closure comes as no surprise.</p></div>"
        for index in range(12)
    )
    page = _story().replace('<ul class="related">', f"<div class='comments'>{said}</div><ul>")
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Paragraph 5 of the story" in result.text
    assert "Comment 0" not in result.text and "Comment 11" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_an_index_of_linked_names_after_its_introduction_is_read(mode: str) -> None:
    # Paragraphs of introduction, then the entries: lists of links to other pages, all after
    # the last paragraph, as related posts come after a story, but many times longer.
    names = [f"Bridge{letter}{index} over the river" for letter in "ABC" for index in range(30)]
    sections = "".join(
        f"<h2>{letter}</h2><div class='columns'><ul>"
        + "".join(f"<li><a href='/wiki/{name}'>{name}</a></li>" for name in names if letter in name)
        + "</ul></div>"
        for letter in "ABC"
    )
    page = f"""<html><head><title>List of bridges</title></head><body>{HEADER}
<main><h1>List of bridges</h1><div class="content"><p>{LEAD} {PARAGRAPHS[0]}</p>
<p>{PARAGRAPHS[1]} {PARAGRAPHS[2]}</p>
{sections}</div></main>{FOOTER}</body></html>"""
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "BridgeA0 over the river" in result.text and "BridgeC29 over the river" in result.text


SECTION_LINES = (
    "the closure changes how people who cross the harbour every day get to work",
    "buses will take the ring road, which adds about twelve minutes at rush hour",
    "the council expects the repairs on the steel deck to last until late autumn",
    "shops on the quay worry that fewer visitors will come over from the south side",
    "a shuttle boat is planned for the busiest hours if enough crews can be found",
    "cyclists may still cross on the footway as long as they push their bikes",
)


def _sections(*, dated: bool = False) -> str:
    """An undeclared page: one headline over three sections of paragraphs side by side."""
    parts = []
    for index, topic in enumerate(("drivers", "walkers", "ferries")):
        when = f"<time datetime='2026-03-0{index + 1}'>March {index + 1}:</time> " if dated else ""
        paragraphs = "".join(
            f"<p>{when if n == 0 else ''}For {topic}, {SECTION_LINES[(index + n) % 6]}; "
            f"{SECTION_LINES[(index + n + 3) % 6]} (part {index}, paragraph {n}).</p>"
            for n in range(4)
        )
        parts.append(f"<div class='part'><h2>For {topic}</h2>{paragraphs}</div>")
    return f"""<!doctype html><html><head><title>Bridge to close</title></head>
<body>{HEADER}<main><h1>Bridge to close</h1>{"".join(parts)}</main>
<aside><p>Sponsored: a harbour cruise with dinner, music and a view of the old bridge.</p>
<div>Most read: the new tram line, the night market on the quay, a guide to the islands,
the best places to eat by the water, and why the old ferry was sold to a museum.</div>
<ul>{RELATED}</ul></aside>{FOOTER}</body></html>"""


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_an_undeclared_text_in_several_sections_is_read_whole_by_the_fast_path(
    mode: str,
) -> None:
    result = extract_html(_sections(), mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "(part 0, paragraph 0)" in result.text and "(part 2, paragraph 3)" in result.text
    assert "harbour cruise" not in result.text


def test_an_undeclared_thread_of_dated_posts_is_left_to_the_extractors() -> None:
    result = extract_html(_sections(dated=True), mode="text")
    assert result.extractor != "article"
    assert "(part 0, paragraph 0)" in result.text and "(part 2, paragraph 3)" in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_declared_article_a_broken_menu_wraps_is_read_when_resiliparse_agrees(
    mode: str,
) -> None:
    # A menu whose tags never close: the parser puts the rest of the page, the story's
    # <main> landmark with it, inside the <nav>. The story is still the article there, as
    # resiliparse (which keeps a main landmark) agrees.
    menu = "<header><nav><ul><li><a href='/'>Home</a><div class='dropdown'>"
    page = _story().replace(HEADER, menu, 1).replace("<article>", "<main role='main'><article>", 1)
    page = page.replace("</article>", "</article></main>", 1)
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Paragraph 0 of the story" in result.text and "Paragraph 5 of the story" in result.text
    assert "Other story number" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_layout_tables_cell_keeps_its_blocks_apart(mode: str) -> None:
    # A cell holding a heading and a paragraph with a line break: a browser shows three lines.
    cell = "<td><h2>1. Ring road</h2><p><em>Detour</em> north<br>Adds twelve minutes</p></td>"
    result = extract_html(_story_with(f"<table><tr>{cell}</tr></table>"), mode=mode)
    assert result.extractor == "article"
    assert "Ring road Detour north Adds twelve minutes" in result.text.replace("*", "")
    assert "roadDetour" not in result.text and "northAdds" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_block_of_paragraphs_after_a_story_in_parts_is_not_one_of_its_parts(mode: str) -> None:
    # A declared story in three sections side by side, then, outside the element holding
    # them, a profile of the writer as long as a section: it comes after the story and lies
    # outside what holds all its parts, so it is no part of the story.
    sections = "".join(
        f"<section>{''.join(f'<p>Part {part}: {text}</p>' for text in PARAGRAPHS[:4])}</section>"
        for part in range(3)
    )
    profile = "".join(
        f"<p>Ana Lee has covered the harbour for the paper since {year}, and before that wrote"
        " about trains, buses and the city's long argument over its ring road.</p>"
        for year in (2010, 2012, 2014)
    )
    page = f"""<html><head><title>Bridge to close</title>
<meta property="og:type" content="article"></head><body>{HEADER}<main>
<article><h1>Bridge to close</h1><div class="story">{sections}</div></article>
<div class="profile">{profile}</div></main>{FOOTER}</body></html>"""
    result = extract_html(page, mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Part 0: Paragraph 0" in result.text and "Part 2: Paragraph 3" in result.text
    assert "Ana Lee has covered" not in result.text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_a_widget_built_around_a_form_field_in_the_story_is_left_out(mode: str) -> None:
    # A sign-up for text alerts set between the story's paragraphs: its pitch, its field and
    # its consent line are the widget's, not the story's (it asks for no email address).
    widget = (
        "<section class='box'><div>Harbour Alerts</div><div>Be the first to know!</div>"
        "<form><input type='tel' placeholder='Phone number'><button>Sign me up</button></form>"
        "<div>By signing up you agree to receive recurring text messages from Harbour Alerts."
        " Message and data rates may apply. Reply STOP to opt out.</div></section>"
    )
    result = extract_html(_story_with(widget), mode=mode)  # type: ignore[arg-type]
    assert result.extractor == "article"
    assert "Paragraph 1 of the story" in result.text and "Paragraph 5 of the story" in result.text
    for gone in ("Harbour Alerts", "first to know", "recurring text messages"):
        assert gone not in result.text


def test_a_checklist_of_boxes_in_the_story_is_read() -> None:
    # Checkboxes are a list the reader ticks off: the story's own items.
    checklist = (
        "<ul class='checklist'><li><input type='checkbox'> Book the ferry instead</li>"
        "<li><input type='checkbox'> Leave ten minutes earlier</li></ul>"
    )
    result = extract_html(_story_with(checklist), mode="text")
    assert result.extractor == "article"
    assert "Book the ferry instead" in result.text and "Leave ten minutes earlier" in result.text


def test_a_drop_down_picking_what_a_comparison_shows_is_read_with_it() -> None:
    # A picker asks for nothing typed: the comparison it sits in is the story's own.
    comparison = (
        "<div class='compare'><select><option>Ferry</option><option>Bus</option></select>"
        "<div>Ferry crossing</div><div>Twelve minutes</div><div>Bus detour</div>"
        "<div>Twenty minutes</div></div>"
    )
    result = extract_html(_story_with(comparison), mode="text")
    assert result.extractor == "article"
    assert "Ferry crossing" in result.text and "Twenty minutes" in result.text
