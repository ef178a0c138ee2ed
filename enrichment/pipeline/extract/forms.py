"""Forms that ask for an email address: sign-ups, sign-ins and contact forms, not content.

Sites put the same few forms on every page: a newsletter sign-up ("Get 15% off your first
order"), a sign-in or account box, a lead form ("Download the ebook", "Start a
conversation"), a back-in-stock alert. Each asks for the reader's email address, and what it
shows is labels ("First name*", "Email"), the options of its drop-downs (every job title,
every budget range) and a line or two of pitch and consent text around it. None of that is
what the page says, and the block-level extractors keep it whole: a lead form's option list
can outweigh a short page's text.

A form holding an email field (``type="email"``, or a field named or auto-filled as an email)
of at most MAX_FORM_WORDS words besides its drop-downs' options is removed before any extractor
reads the page, with the blocks around it as long as each adds at most PITCH_WORDS words of its
own (the sign-up's heading and pitch). The climb stops below ``<main>``, ``<article>`` and
``<body>``, and below a block holding the page's ``<h1>`` (a product's short blurb beside its
back-in-stock alert is the page's own text, not the alert's pitch). A larger form is a page
built inside one (some frameworks wrap every page in a ``<form>``) and stays.

    >>> page = lxml.html.document_fromstring(
    ...     "<body><main><p>Brass desk lamp with a weighted base.</p></main>"
    ...     "<section><h3>Join our newsletter</h3><form><label>Email</label>"
    ...     "<input type='email' name='email'><button>Sign up</button></form></section></body>")
    >>> drop_email_forms(page)
    >>> lxml.html.tostring(page.body, encoding="unicode")
    '<body><main><p>Brass desk lamp with a weighted base.</p></main></body>'
"""

from __future__ import annotations

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.hidden import drop

# A form with an email field of at most this many words (its drop-downs' options aside: a
# list of every job title or country says nothing of its size) is a sign-up, sign-in or lead
# form (its labels and consent line); more is a page wrapped in a form.
MAX_FORM_WORDS = 150
# A block around such a form adding at most this many words of its own is its heading and
# pitch ("Join our newsletter. Be the first to hear about new products.").
PITCH_WORDS = 30
# The climb to the pitch stops below these: what they hold is the page.
_PAGE_TAGS = frozenset(("article", "body", "html", "main"))


def drop_email_forms(tree: lxml.html.HtmlElement) -> None:
    """Remove the small forms asking for an email address, with their pitch (in place)."""
    for form in list(tree.iter("form")):
        if form.getparent() is None or not _asks_for_email(form):
            continue
        options = sum(_word_count(option) for option in form.iter("option"))
        words = _word_count(form)
        if words - options <= MAX_FORM_WORDS:
            drop(_with_pitch(form, words))


def _asks_for_email(form: etree._Element) -> bool:
    """Whether one of the form's fields takes an email address."""
    for field in form.iter("input"):
        if (field.get("type") or "").strip().lower() == "email":
            return True
        named = f"{field.get('name') or ''} {field.get('autocomplete') or ''}".lower()
        if "email" in named:
            return True
    return False


def _with_pitch(form: etree._Element, words: int) -> etree._Element:
    """The outermost block around ``form`` adding at most PITCH_WORDS words to it."""
    target = form
    for ancestor in form.iterancestors():
        if not isinstance(ancestor.tag, str) or ancestor.tag in _PAGE_TAGS:
            break
        if ancestor.getparent() is None or ancestor.find(".//h1") is not None:
            break  # the root, or a block holding the page's headline: the page's own text
        if _word_count(ancestor) - words > PITCH_WORDS:
            break
        target = ancestor
    return target


def _word_count(element: etree._Element) -> int:
    return len(" ".join(element.itertext()).split())
