"""The page parsed into a tree, and the tree cleaned before any extractor reads it: hidden
elements (``hidden.py``), comments and email forms (``forms.py``) out, empty links out in
markdown mode.

    >>> tree = clean_tree('<p>Shown</p><p hidden>secret</p><!-- note -->')
    >>> tree.text_content()
    'Shown'
    >>> xml_compatible("a\x0cb\x01c")
    'a bc'
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.forms import drop_email_forms
from enrichment.pipeline.extract.hidden import drop, drop_hidden

# ``</body>`` and ``</html>``: a browser ignores them and keeps whatever follows in the body;
# libxml2 drops the blocks that follow, so a page that closes them early (after its header)
# lost its content.
_BODY_END = re.compile(r"</(?:body|html)\s*>", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml\b[^>]*\?>")
# Characters libxml2's HTML parser keeps in a text but lxml refuses to write into one: the
# control characters other than tab and line breaks, and the noncharacters U+FFFE and U+FFFF.
_XML_INCOMPATIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_PAGE_BREAKS = re.compile("[\x0b\x0c]")
# The same for UTF-8 bytes: the breaks become spaces, the other control bytes go.
_BREAKS_TO_SPACES = bytes.maketrans(b"\x0b\x0c", b"  ")
_CONTROL_BYTES = bytes(code for code in range(32) if code not in (9, 10, 11, 12, 13))


def _html_parser(encoding: str | None = None) -> lxml.html.HTMLParser:
    """lxml's HTML parser, every element an ``HtmlElement`` picked without calling Python.

    The stock parser asks a Python function which class each element gets (forms and their
    fields have their own) every time an element is touched from Python; on pages of
    thousands of elements, walked by every extractor, that is a good share of the time. No
    extractor here uses the form classes' extra properties.
    """
    parser = lxml.html.HTMLParser(encoding=encoding)
    parser.set_element_class_lookup(
        etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement,
            comment=lxml.html.HtmlComment,
            pi=lxml.html.HtmlProcessingInstruction,
            entity=lxml.html.HtmlEntity,
        )
    )
    return parser


PARSER = _html_parser()
_UTF8_PARSER = _html_parser("utf-8")
_HEADING_LINKS = etree.XPath("//h1/a | //h2/a | //h3/a | //h4/a | //h5/a | //h6/a")


def drop_empty_links(tree: lxml.html.HtmlElement) -> None:
    """Remove the links that show no words: heading permalinks and bare anchors.

    Documentation sites put ``<a href="#section" class="anchor"></a>`` before each
    heading's text; with links kept, trafilatura's markdown then loses the whole heading
    ("## Tips" disappears). Elsewhere a page marks places with empty anchors
    (``<a name="top"></a>``): with links kept, trafilatura counts such an anchor as a block
    of its own, so the first post of a thread (its anchor and one paragraph: two blocks)
    passes for the page's whole content, where its text output, which strips links, goes on
    to the thread. Neither link holds words (nor, outside headings, any element), so
    dropping them changes nothing a reader sees and makes the markdown read the page as the
    text output does.
    """
    for link in _HEADING_LINKS(tree):
        if not link.text_content().strip():
            drop(link)
    for link in list(tree.iter("a")):
        if len(link) == 0 and not (link.text or "").strip():
            drop(link)


def clean_tree(
    html: str,
    *,
    keep_noscript: bool = False,
    keep_textless_hidden: bool = False,
    declared: str | None = None,
) -> lxml.html.HtmlElement | None:
    """Parse, drop hidden elements (notes A6 step 1) and the small forms asking for an email
    address (``extract/forms.py``); optionally show <noscript> content.

    ``keep_textless_hidden`` leaves hidden elements that hold no text (icons, avatars,
    empty placeholders) where they are: they cannot smuggle words in, and on some pages
    the extractors read the page's structure better with them. Hidden blocks holding most
    of the description the page ``declared`` of itself are shown (``hidden.drop_hidden``).
    """
    try:
        tree = parse_html(_BODY_END.sub("", html))
    except (etree.ParserError, ValueError):
        return None
    if keep_noscript:
        for element in tree.iter("noscript"):
            element.tag = "div"
    for element in list(tree.iter(etree.Comment)):
        drop(element)
    drop_hidden(tree, keep_textless=keep_textless_hidden, declared=declared)
    drop_email_forms(tree)
    return tree


def parse_html(html: str) -> lxml.html.HtmlElement:
    """The parsed page, handed to libxml2 as UTF-8 bytes.

    lxml hands a ``str`` over as Python stores it (Latin-1, UTF-16, or UTF-32 for a page
    with one emoji), which libxml2 then converts to UTF-8, its own encoding; encoding the
    text here is cheaper and gives the same tree. A text that cannot be encoded (a lone
    surrogate) is handed over as it is.
    """
    # The text is decoded already, so an XHTML page's XML declaration says nothing more (and
    # lxml refuses a str that names an encoding there: the page read as "no readable content").
    html = _XML_DECLARATION.sub("", html, count=1)
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:
        return lxml.html.document_fromstring(xml_compatible(html), parser=PARSER)
    return lxml.html.document_fromstring(_xml_compatible_utf8(data), parser=_UTF8_PARSER)


def xml_compatible(html: str) -> str:
    """The page without characters lxml cannot write into a text: ``'a\\x0cb\\x01c'`` -> ``'a bc'``.

    The parser keeps a stray control character (a form feed or vertical tab pasted from a
    word processor, a byte a bad encoding guess turned into ``\\x01``) in the text it
    reads, and lxml raises ``ValueError`` when a step writes that text back (moving a dropped
    element's tail onto its neighbour, spacing a block): the page answered an error. A
    browser shows none of them; a form feed or vertical tab separates words, as a space.
    """
    return _XML_INCOMPATIBLE.sub("", _PAGE_BREAKS.sub(" ", html))


def _xml_compatible_utf8(data: bytes) -> bytes:
    """``xml_compatible`` on the page's UTF-8 bytes, in one pass of ``bytes.translate``.

    Most pages hold none of these characters, and the regular expressions cost more than a
    millisecond per page to find that out; the bytes are translated at memory speed. In
    UTF-8, U+FFFE and U+FFFF are the only characters encoded ``EF BF BE`` and ``EF BF BF``.
    """
    data = data.translate(_BREAKS_TO_SPACES, _CONTROL_BYTES)
    if b"\xef\xbf" in data:
        data = data.replace(b"\xef\xbf\xbe", b"").replace(b"\xef\xbf\xbf", b"")
    return data
