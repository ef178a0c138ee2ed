"""Hidden elements: what a browser never shows goes before any extractor reads the page.

Text a reader cannot see can still smuggle instructions to a model, so elements that never
render (``script``, ``template``, the fallback text inside ``video``...), and those hidden by
the ``hidden`` attribute, ``aria-hidden``, a hiding class (``sr-only``, ``d-none``... unless
undone from some screen width up), a template framework's cloak (``v-cloak``, ``x-cloak``: a
template part not rendered yet) or an inline style (``display:none``, zero opacity or size,
clipped, pushed off screen) are removed (notes A6 step 1), and so are modal dialogs not opened
yet (a ``<dialog>`` without ``open``, ``aria-modal`` blocks and blocks classed ``modal`` but
not open: sign-in, cart, newsletter and cookie prompts). What a browser does show stays: folded tab and accordion panels and FAQ answers
under their question (a click opens them), streamed server-rendered segments (a script moves
them into place), and fade-in wrappers holding most of the page. Pure code over an lxml tree,
changed in place.

    >>> tree = lxml.html.fromstring('<div><p>shown</p><p style="display:none">smuggled</p></div>')
    >>> drop_hidden(tree)
    >>> lxml.html.tostring(tree, encoding="unicode")
    '<div><p>shown</p></div>'
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.choose import shingles

# A hidden block holding at least this share of the 4-grams of the page's declared
# description is the page's own text, rendered by script (``_holding_declared``).
DECLARED_HELD_SHARE = 0.5
_WORDS = re.compile(r"\w+")
# A visible line of at most this many words ending in "?" can be a folded answer's question.
MAX_QUESTION_WORDS = 40

HIDDEN_TAGS = (
    "template",
    "script",
    "style",
    "noscript",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "meta",
    "link",
    "head",
    # Their text is the fallback for a browser that plays no media ("Your browser does not
    # support the video tag"): every current browser plays them and shows none of it.
    "video",
    "audio",
)
_HIDDEN_OR_INPUT_TAGS = frozenset((*HIDDEN_TAGS, "input"))
# The hiding utility classes of CSS toolkits and conventions (Bootstrap, Tailwind, Foundation's
# "hide", Bulma's "is-hidden", SUIT's "u-hidden", "js-hidden": hidden once scripts run, which
# a browser's do) and of the forum packages many sites run ("ipsHide", Invision Community):
# banners, share menus and pop-ups no reader sees until they click.
_HIDDEN_CLASSES = frozenset(
    {"sr-only", "visually-hidden", "d-none", "hidden", "invisible", "screen-reader-only"}
    | {"hide", "is-hidden", "u-hidden", "js-hidden", "ipshide"}
)
# Any of them inside a lower-cased class list: the cheap test before the list is split.
_HIDDEN_CLASS_NAMED = re.compile("|".join(sorted(_HIDDEN_CLASSES)))
# "d-none d-md-block" (Bootstrap) or "hidden lg:flex" (Tailwind): hidden on a phone, shown
# from some width up. A desktop browser shows it, so it is content, not a hiding trick.
_RESPONSIVE_SHOWN_CLASS = re.compile(
    r"^(?:d-(?:sm|md|lg|xl|xxl)-|(?:[a-z0-9-]+:)+)"
    r"(?:block|flex|grid|inline|inline-block|inline-flex|table|table-cell|table-row|contents)$"
)
_FADE_STYLE = re.compile(r"opacity\s*:\s*0(?:\.0*)?\s*(?:;|$)|visibility\s*:\s*hidden", re.I)
# "accordion__panel", "chakra-collapse", "collapse", "c-collapsible": a folded panel.
_PANEL_CLASS = re.compile(r"accordion|collaps", re.IGNORECASE)
# A ``<dialog>`` without ``open`` (never rendered) or a block declaring itself a modal
# dialog (``aria-modal="true"``): see ``_closed_dialogs``.
_DIALOGS = etree.XPath("//dialog[not(@open)] | //*[@aria-modal='true']")
# A ``<div>`` whose class list names it a modal (``class="modal fade"``: Bootstrap, Bulma and
# most toolkits keep it out of view until a script adds a state class to open it). Only divs
# are looked at: the class test on every element of a page cost 0.4-0.5 ms, on its divs half.
_MODAL_CLASSED = etree.XPath("//div[contains(@class, 'modal')]")
_OPEN_STATES = frozenset(("show", "in", "open", "is-open", "active", "is-active", "visible"))
_MAINS = etree.XPath("//main | //*[@role='main']")
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0(?:\.0*)?\s*(?:;|$)"
    r"|font-size\s*:\s*0(?:px|em|rem|%)?\s*(?:;|$)|clip-path\s*:\s*inset\(\s*(?:100|50)%"
    r"|clip\s*:\s*rect\(\s*0(?:px)?\s*,?\s*0|transform\s*:\s*scale\(\s*0\s*\)"
    r"|text-indent\s*:\s*-\d{3,}|(?<![\w-])(?:left|top)\s*:\s*-\d{3,}",
    re.IGNORECASE,
)


def drop_hidden(
    tree: lxml.html.HtmlElement, *, keep_textless: bool = False, declared: str | None = None
) -> None:
    """Remove what ``tree`` holds hidden, keeping what a reader can see or open.

    ``keep_textless`` leaves hidden elements that hold no text (icons, avatars, empty
    placeholders) where they are: they cannot smuggle words in, and on some pages the
    extractors read the page's structure better with them. ``declared`` is the description
    the page declares of itself (a product's, in its structured data): hidden blocks holding
    most of it are shown (``_holding_declared``).
    """
    # Read before <template> elements go: they are the placeholders streamed segments fill.
    placeholders = _segment_placeholders(tree)
    panels = _disclosure_panel_ids(tree) | frozenset(placeholders)
    _place_streamed_segments(tree, placeholders)
    # Elements that never render (script, style...) go first, so the page's word count used
    # by the reveal-wrapper rule below counts only text a reader could see.
    drop_all(list(tree.iter(*HIDDEN_TAGS)))
    doomed = []
    for element in hidden_elements(tree):
        if keep_textless and not element.text_content().strip():
            continue
        if _is_disclosure_panel(element, panels):
            _show(element)  # the extractors downstream skip hidden blocks on their own
        else:
            doomed.append(element)
    if declared:
        shown = _holding_declared(doomed, declared)
        for element in shown:
            _show(element)
        doomed = [element for element in doomed if element not in shown]
    dropped = _without_reveal_wrappers(tree, doomed)
    _keep_shown_separators_apart(dropped)
    drop_all(dropped)
    drop_all(_closed_dialogs(tree))


def _keep_shown_separators_apart(elements: list[etree._Element]) -> None:
    """Leave a space where an ``aria-hidden`` element holding text goes.

    ``aria-hidden`` hides an element from screen readers, not from the eye: a page marks so
    the dots, bars and icons it shows between the parts of a line (``<span>1d ago</span>
    <span aria-hidden="true">·</span><span>3 min read</span>``). Taken out without a
    trace, they leave the words on either side touching, read as one ("ago3"). A block
    hidden otherwise (``hidden``, ``display:none``) is shown to no one, and the words
    around it touch on the screen too: nothing is left in its place.

        >>> tree = lxml.html.fromstring(
        ...     '<p><span>1d ago</span><span aria-hidden="true">·</span><span>3 min</span></p>')
        >>> drop_hidden(tree)
        >>> tree.text_content()
        '1d ago 3 min'
    """
    for element in elements:
        if not _hidden_by_aria(element) or not element.text_content().strip():
            continue
        if element.get("hidden") is not None or _hidden_by_style_or_class(element):
            continue
        tail = element.tail or ""
        if not tail[:1].isspace():
            element.tail = " " + tail


def _hidden_by_style_or_class(element: etree._Element) -> bool:
    style = element.get("style")
    if style is not None and _HIDDEN_STYLE.search(style):
        return True
    return _names_hiding_class(element.get("class") or "")


def _hidden_by_aria(element: etree._Element) -> bool:
    value = element.get("aria-hidden")
    return value is not None and value.strip() in ("true", "1")


def _holding_declared(elements: list[etree._Element], declared: str) -> list[etree._Element]:
    """The ``elements`` holding at least DECLARED_HELD_SHARE of the 4-grams of ``declared``.

    A shop that renders its product's details by script serves them in a ``display:none``
    block until the script shows it (and its menus, drawers and pop-ups hidden the same
    way). The description the page declares of the product in its structured data says
    which block is the page's own text; it is shown when the visible page lacks it (the
    caller checks). Hidden text elsewhere on the page, inside that block too, still goes.
    """
    wanted = shingles(declared)
    if not wanted:
        return []
    least = len(_WORDS.findall(declared)) * DECLARED_HELD_SHARE
    return [
        element
        for element in elements
        if len(element.text_content().split()) >= least
        and len(wanted & shingles(element.text_content())) >= DECLARED_HELD_SHARE * len(wanted)
    ]


def _closed_dialogs(tree: lxml.html.HtmlElement) -> list[etree._Element]:
    """Modal dialogs the page opens over itself later: sign-in, cart, newsletter prompts.

    A browser never renders a ``<dialog>`` without ``open``, and a modal
    (``aria-modal="true"``, or a ``<div>`` whose class list names it ``modal`` and no state
    opening it: ``class="modal fade"``) is kept out of view by the page's styles until a
    script opens it over the page; its words are a prompt, not the page's content. A modal
    holding at least half of the page's words is the page itself, shown in a modal frame: it
    stays, unless the page has a headline (an ``<h1>``) that the modal neither holds nor
    stands under (inside the element holding the headline, as the page's body does). A
    cookie preference centre listing every partner's purposes can outweigh the page it is
    opened over; it stands apart from that page's headline.
    """
    dialogs: list[etree._Element] = list(_DIALOGS(tree))
    declared = set(dialogs)
    dialogs += [
        element
        for element in _MODAL_CLASSED(tree)
        if element not in declared and _closed_modal(element)
    ]
    if not dialogs:
        return []
    small = _less_than_half(tree, dialogs)
    if len(small) == len(dialogs):
        return small
    headed = [h1.getparent() for h1 in tree.iter("h1")]
    if not headed:
        return small
    return [dialog for dialog in dialogs if dialog in small or not _headed(dialog, headed)]


def _closed_modal(element: etree._Element) -> bool:
    """Whether the class list names a modal (the word ``modal``) and no state opening it.

    >>> _closed_modal(lxml.html.fromstring('<div class="modal fade">Sign in</div>'))
    True
    >>> _closed_modal(lxml.html.fromstring('<div class="modal fade show">Sign in</div>'))
    False
    >>> _closed_modal(lxml.html.fromstring('<div class="modal-body">Sign in</div>'))
    False
    """
    names = str(element.get("class") or "").lower().split()
    return "modal" in names and _OPEN_STATES.isdisjoint(names)


def _headed(dialog: etree._Element, headed: list[etree._Element | None]) -> bool:
    """Whether ``dialog`` holds an ``<h1>`` or lies in an element holding one (``headed``)."""
    if next(dialog.iter("h1"), None) is not None:
        return True
    return any(above in headed for above in dialog.iterancestors())


def _disclosure_panel_ids(tree: lxml.html.HtmlElement) -> frozenset[str]:
    """Ids named by ``aria-controls``: panels a tab, accordion header or button opens."""
    return frozenset(
        name for value in tree.xpath("//@aria-controls") for name in str(value).split()
    )


def _segment_placeholders(tree: lxml.html.HtmlElement) -> dict[str, etree._Element]:
    """Streamed server-rendered segments (``<div hidden id="S:1">`` fills ``B:1``) by id,
    each with its placeholder ``<template>`` (the first when the page repeats one).

    Streaming server rendering (React 18 and frameworks built on it) first sends a
    ``<template id="B:1">`` placeholder, then the finished segment in a hidden
    ``<div id="S:1">`` that a script moves into the placeholder's place: a browser shows it.
    A segment streamed inside another is held by a ``<template id="P:1">`` instead (React's
    segment placeholder, filled by ``$RS("S:1", "P:1")``), often the article's body under a
    streamed page shell. Only segments whose placeholder is on the page count.
    """
    placeholders: dict[str, etree._Element] = {}
    for template in tree.iter("template"):
        name = str(template.get("id") or "")
        if name.startswith(("B:", "P:")) and len(name) > 2:
            placeholders.setdefault("S:" + name[2:], template)
    return placeholders


def _place_streamed_segments(
    tree: lxml.html.HtmlElement, placeholders: dict[str, etree._Element]
) -> None:
    """Move each streamed segment to its placeholder's place, as the page's script does.

    The segments arrive at the end of the document, after everything else; a browser shows
    them where their ``<template>`` placeholder stands (``_segment_placeholders``), often in
    the middle of the article's body: a code sample, a section, the rest of the story. Read
    where they arrive, they come after the page's footer and outside the element holding the
    article's text. Only a placeholder standing beside a paragraph is filled so: there the
    segment goes on with the running text. Others sit in widgets (a price box, a reviews
    panel, a product grid) whose streamed parts the extractors weigh as well, or better,
    where they arrive (measured on the two labelled sets: filled in place, they pulled stock
    quotes into an article and broke a product page's records).

        >>> tree = lxml.html.fromstring('<div><p>one</p><template id="B:1"></template>'
        ...     '<p>three</p><footer>f</footer><div hidden id="S:1">two</div></div>')
        >>> _place_streamed_segments(tree, _segment_placeholders(tree))
        >>> [element.text for element in tree if element.tag != "template"]
        ['one', 'two', 'three', 'f']
        >>> widget = lxml.html.fromstring('<div><div class="quote"><template id="B:2">'
        ...     '</template></div><p>text</p><div hidden id="S:2">$12</div></div>')
        >>> _place_streamed_segments(widget, _segment_placeholders(widget))
        >>> widget[-1].get("id")  # no paragraph beside its placeholder: left where it came
        'S:2'
    """
    if not placeholders:
        return
    placeholders = dict(placeholders)  # each is filled once
    for segment in tree.xpath("//*[@hidden][starts-with(@id, 'S:')]"):
        template = placeholders.pop(str(segment.get("id")), None)
        # A placeholder inside its own segment (no stream writes one) is left as it is.
        if template is None or any(above is segment for above in template.iterancestors()):
            continue
        if not _beside_paragraph(template):
            continue
        tail, segment.tail = segment.tail, None
        previous, parent = segment.getprevious(), segment.getparent()
        if tail and previous is not None:
            previous.tail = (previous.tail or "") + tail
        elif tail and parent is not None:
            parent.text = (parent.text or "") + tail
        # What followed the placeholder follows the segment's text.
        segment.tail, template.tail = template.tail, None
        template.addnext(segment)


def _beside_paragraph(element: etree._Element) -> bool:
    """Whether the element next to ``element`` on either side is a paragraph."""
    for step in (element.itersiblings(preceding=True), element.itersiblings()):
        near = next((e for e in step if isinstance(e.tag, str)), None)
        if near is not None and near.tag == "p":
            return True
    return False


def _is_disclosure_panel(element: etree._Element, panel_ids: frozenset[str]) -> bool:
    """A collapsed tab or accordion panel: hidden until the reader clicks, still content.

    Only panels that the page itself declares count (``role="tabpanel"``, the target of an
    ``aria-controls``, or a class naming an accordion or collapse component, as UI toolkits
    name their folded panels), so a bare ``display:none`` block is still removed.
    """
    if not isinstance(element.tag, str) or element.tag.lower() in HIDDEN_TAGS:
        return False
    if element.get("role", "").strip().lower() == "tabpanel":
        return True
    if _PANEL_CLASS.search(element.get("class", "")):
        return True
    return element.get("id", "") in panel_ids or _is_folded_answer(element)


def _is_folded_answer(element: etree._Element) -> bool:
    """A hidden block right after the visible question it answers: a folded FAQ entry.

    FAQ widgets often fold each answer under its question without naming a component
    (``<div class="q">Is it waterproof?</div><div style="display:none">Yes, ...</div>``); a
    click on the question shows it. Only the block directly after a short visible question
    counts, so hidden text elsewhere on the page is still removed.
    """
    previous = element.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()  # comments and processing instructions
    if previous is None or is_hidden(previous):
        return False
    question = previous.text_content().strip()
    return question.endswith("?") and len(question.split()) <= MAX_QUESTION_WORDS


def _show(element: etree._Element) -> None:
    for attribute in ("hidden", "aria-hidden", "style"):
        element.attrib.pop(attribute, None)


def _without_reveal_wrappers(
    tree: lxml.html.HtmlElement, doomed: list[etree._Element]
) -> list[etree._Element]:
    """Keep fade-in wrappers: transparent or invisible blocks that hold most of the page.

    Pages that fade in (or hide until their fonts load) wrap the whole content in
    ``<div style="opacity:0">`` or ``visibility:hidden`` until a script reveals it. Text
    smuggled in for a model is a small part of a visible page; a transparent block holding at
    least half of the page's words is the page itself. The ``hidden`` attribute, aria-hidden,
    hiding classes and ``display:none`` are not fade-ins and stay removed whatever their size;
    but a block hidden by a class alone that holds the page's ``<main>`` landmark and at
    least half of its words is the page too, hidden until a script takes the class off
    (``<div class="root hide">`` around it). A block a template framework cloaks and nothing
    else hides (``_cloaked``) is kept as a fade-in is: the framework's root around the whole
    page (``<div id="app" v-cloak>``) is the page.
    """
    by_class = [element for element in doomed if _hidden_by_class_only(element)]
    holding_main = _main_ancestors(tree) if by_class else set()  # one walk, and only then
    fades = [
        element
        for element in doomed
        if _is_fade_in(element)
        or _cloaked_only(element)
        or (element in holding_main and element in by_class)
    ]
    if not fades:
        return doomed  # the page's words are counted only when a wrapper could be kept
    small = set(_less_than_half(tree, fades))
    return [element for element in doomed if element in small or element not in fades]


def _main_ancestors(tree: lxml.html.HtmlElement) -> set[etree._Element]:
    """The elements holding the page's main landmark (``<main>``, ``role="main"``)."""
    return {ancestor for main in _MAINS(tree) for ancestor in main.iterancestors()}


def _hidden_by_class_only(element: etree._Element) -> bool:
    """Whether a hidden element is hidden by its class list and by nothing else."""
    return (
        not _hidden_by_attribute(element)
        and not _cloaked(element)
        and not _HIDDEN_STYLE.search(element.get("style") or "")
        and _names_hiding_class(element.get("class") or "")
    )


def _cloaked_only(element: etree._Element) -> bool:
    """Whether a hidden element is hidden by a template framework's cloak and nothing else."""
    return (
        _cloaked(element)
        and not _hidden_by_attribute(element)
        and not _HIDDEN_STYLE.search(element.get("style") or "")
        and not _names_hiding_class(element.get("class") or "")
    )


def _cloaked(element: etree._Element) -> bool:
    """Whether a template framework marks the element as a part it has yet to render.

    Vue (``v-cloak``) and Alpine (``x-cloak``) mark the parts of a page written as templates;
    the page's styles hide them until the script has run, which then shows only those its
    state turns on (a back-in-stock prompt, a cart drawer, a "no results" message) and takes
    the mark off. Until then no reader sees them, and the state that would show them is the
    reader's, not the page's. (A cloaked wrapper around the whole page is kept: see
    ``_without_reveal_wrappers``.)
    """
    return element.get("v-cloak") is not None or element.get("x-cloak") is not None


def _hidden_by_attribute(element: etree._Element) -> bool:
    """Whether ``hidden`` or ``aria-hidden="true"`` (or ``"1"``) hides an element."""
    return element.get("hidden") is not None or _hidden_by_aria(element)


def _less_than_half(
    tree: lxml.html.HtmlElement, elements: list[etree._Element]
) -> list[etree._Element]:
    """The ``elements`` holding less than half of the page's words.

    A block that holds at least half of them is the page itself, whatever hides it for a
    moment (a fade-in, a modal frame); text smuggled in for a model is a small part of a page.
    """
    page_words = len(tree.text_content().split())
    return [element for element in elements if 2 * len(element.text_content().split()) < page_words]


def _is_fade_in(element: etree._Element) -> bool:
    if not isinstance(element.tag, str) or element.tag.lower() in HIDDEN_TAGS:
        return False
    if _hidden_by_attribute(element):
        return False
    attributes = element.attrib
    if set(attributes.get("class", "").lower().split()) & _HIDDEN_CLASSES:
        return False
    style = attributes.get("style", "")
    return bool(_FADE_STYLE.search(style)) and not _DISPLAY_NONE.search(style)


def hidden_elements(tree: lxml.html.HtmlElement) -> Iterator[etree._Element]:
    """The elements of ``tree`` that ``is_hidden`` holds hidden, in document order.

    The full test on every element was most of the cleaning's time after parsing. Most
    elements carry no attribute that can hide them but a class list, and a page repeats its
    class lists: one look at the attribute names, with each class list tested once per page,
    leaves few elements for the full test. Elements are yielded one at a time,
    so a caller that shows one (``_show``) before the next is looked at sees what a walk
    testing every element would see.
    """
    hiding_classes: dict[str, bool] = {}
    for element in tree.iter(etree.Element):
        names = element.keys()
        if (
            "hidden" not in names
            and "aria-hidden" not in names
            and "style" not in names
            and "v-cloak" not in names
            and "x-cloak" not in names
            and element.tag.lower() not in _HIDDEN_OR_INPUT_TAGS
        ):
            class_names = element.get("class") if names else None
            if class_names is None:
                continue
            hiding = hiding_classes.get(class_names)
            if hiding is None:
                hiding = _names_hiding_class(class_names)
                hiding_classes[class_names] = hiding
            if not hiding:
                continue
        if is_hidden(element):
            yield element


def is_hidden(element: etree._Element) -> bool:
    tag = element.tag
    if not isinstance(tag, str):
        return False
    tag = tag.lower()
    if tag in HIDDEN_TAGS:
        return True
    # Each attribute is read once (``hidden_elements`` calls this on the elements that may
    # be hidden, ``_is_folded_answer`` on a panel's neighbour).
    if _hidden_by_attribute(element) or _cloaked(element):
        return True
    get = element.get
    if tag == "input" and (get("type") or "").lower() == "hidden":
        return True
    if _names_hiding_class(get("class") or ""):
        return True
    style = get("style")
    return style is not None and bool(_HIDDEN_STYLE.search(style))


def _names_hiding_class(class_names: str) -> bool:
    """Whether a class list names a hiding class, not undone from some screen width up."""
    class_names = class_names.lower()
    # The cheap test first: the list is split only when it can name a hiding class at all.
    if not _HIDDEN_CLASS_NAMED.search(class_names):
        return False
    classes = set(class_names.split())
    return bool(classes & _HIDDEN_CLASSES) and not any(
        _RESPONSIVE_SHOWN_CLASS.match(name) for name in classes
    )


def drop(element: etree._Element) -> None:
    """Remove an element but keep its tail text (which belongs to the parent)."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def drop_all(elements: list[etree._Element]) -> None:
    """``drop`` each of ``elements`` in turn, in time linear in their number.

    Dropping siblings one by one appends each tail to the same text (the parent's, or the
    sibling before the run of dropped ones), copying that growing text every time: a page of
    200,000 ``<span hidden>x</span>y`` took over a minute. Here the tails moving to one place
    are gathered and joined once, with the same result as ``drop`` called on each in order.
    """
    gathered: dict[tuple[etree._Element, bool], list[str]] = {}

    def flush(target: etree._Element, is_tail: bool) -> None:
        pieces = gathered.pop((target, is_tail), None)
        if pieces is not None:
            if is_tail:
                target.tail = "".join(pieces)
            else:
                target.text = "".join(pieces)

    for element in elements:
        parent = element.getparent()
        if parent is None:
            continue
        # Text already gathered for the element itself lands before it goes.
        flush(element, True)
        flush(element, False)
        tail = element.tail
        if tail:
            previous = element.getprevious()
            target, is_tail = (previous, True) if previous is not None else (parent, False)
            pieces = gathered.get((target, is_tail))
            if pieces is None:
                current = target.tail if is_tail else target.text
                pieces = gathered[(target, is_tail)] = [current or ""]
            pieces.append(tail)
        parent.remove(element)
    for target, is_tail in list(gathered):
        flush(target, is_tail)
