"""What forum software prints around each post that is not part of the discussion.

Under every author's name a thread repeats a card of figures ("Joined Oct 25, 2017",
"Messages 13,539", "Reaction score 2,675", a location). Forum packages mark that card with a
class naming the author and the figures ("message-userExtras", "userstats",
"cAuthorPane_stats"); it says nothing about the discussion and breaks the text between the
posts. Who wrote each post and when stays: the name and the post's date sit outside the card.

Under the body of each post, forums print the author's signature: lines set once in their
profile (a motto, their gear, links to their sites) and repeated under every post they write.
Forum packages mark it with a class ending in "signature" ("message-signature",
"postsignature", "ipsEntry__signature") or name it so in the ``data-role`` their scripts look
it up by ("memberSignature"); question-and-answer sites call the card under each
post that names its author with a reputation figure "post-signature" too. Neither is part of
the discussion. An element of that class holding more than SIGNATURE_MAX_WORDS words is not
a signature but something wrapping the post (a "has-signature" container) and stays.

A question-and-answer page hangs a list of short comments under the question and under each
answer ("Will a backup refuse to copy a corrupt file? – ann Commented May 2, 2009"): asides
asking for details or nitpicking, not the answers the page is read for. Such pages say so in
schema.org microdata: a ``Comment`` item nested in a ``Question`` or ``Answer`` item. On a
discussion the replies are content: a ``Comment`` in a ``DiscussionForumPosting`` (or in no
typed item) stays.

``drop_post_extras`` removes all three.
"""

from __future__ import annotations

import re
from itertools import islice

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.hidden import drop

# A class token naming a post author's statistics, and one naming a post's signature (class or
# ``data-role``), and the most words a signature holds (see the module docstring).
_AUTHOR_STATS = re.compile(r"(?:user|author|member|poster)\w*?[-_]?(?:extras?|stats)$")
_SIGNATURE = re.compile(r"signature$")
SIGNATURE_MAX_WORDS = 150
# Elements that name their part of the page, by class or by the role scripts look them up by.
_NAMED = etree.XPath("//*[@class or @data-role]")
_WORD = re.compile(r"\w+")
# schema.org items: their type is the last segment of the ``itemtype`` URL.
_TYPED_ITEMS = etree.XPath("//*[@itemscope][@itemtype]")
# The items of a question-and-answer page whose nested comments are asides.
_QUESTION_TYPES = frozenset(("question", "answer"))


def drop_post_extras(tree: lxml.html.HtmlElement) -> None:
    """Remove author statistics cards, signatures and a Q&A page's comments (in place).

    >>> page = lxml.html.fromstring(
    ...     '<div><b>ann</b><dl class="message-userExtras">Messages 13,539</dl><p>Use tar.</p>'
    ...     '<div class="message-signature">My rig: a Z790</div></div>'
    ... )
    >>> drop_post_extras(page)
    >>> page.text_content()
    'annUse tar.'
    """
    for element in _named_extras(tree):
        drop(element)
    drop_answer_comments(tree)


def _named_extras(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The statistics cards and signatures, found in one walk over the named elements.

    A page repeats its class lists many times over: each is judged once.
    """
    judged: dict[tuple[str, str], bool] = {}
    found = []
    for element in _NAMED(tree):
        names = (element.get("class", ""), element.get("data-role", ""))
        extra = judged.get(names)
        if extra is None:
            extra = judged[names] = _names_extra(*names)
        if extra and not (_is_signature(names) and _longer_than(element, SIGNATURE_MAX_WORDS)):
            found.append(element)
    return found


def _names_extra(classes: str, role: str) -> bool:
    """Whether a class list (or ``data-role``) names a statistics card or a signature."""
    tokens = classes.lower().split()
    return any(_AUTHOR_STATS.search(token) for token in tokens) or _is_signature((classes, role))


def _is_signature(names: tuple[str, str]) -> bool:
    return any(_SIGNATURE.search(token) for token in " ".join(names).lower().split())


def _longer_than(element: lxml.html.HtmlElement, words: int) -> bool:
    """Whether ``element``'s text holds more than ``words`` words."""
    # Counting stops at the first word past the limit: a long wrapper is not read to its end.
    return next(islice(_WORD.finditer(element.text_content()), words, None), None) is not None


def drop_answer_comments(tree: lxml.html.HtmlElement) -> None:
    """Remove the ``Comment`` items nested in a ``Question`` or ``Answer`` item.

    >>> page = lxml.html.fromstring(
    ...     '<div itemscope itemtype="https://schema.org/Answer"><p>Use tar.</p>'
    ...     '<ul><li itemscope itemtype="https://schema.org/Comment">Why?</li></ul></div>'
    ... )
    >>> drop_answer_comments(page)
    >>> page.text_content()
    'Use tar.'
    """
    doomed = [
        element
        for element in _TYPED_ITEMS(tree)
        if _item_type(element) == "comment" and _in_question_or_answer(element)
    ]
    for element in doomed:
        drop(element)


def _in_question_or_answer(element: lxml.html.HtmlElement) -> bool:
    """Whether the nearest typed item around ``element`` is a question or an answer."""
    for ancestor in element.iterancestors():
        if ancestor.get("itemscope") is not None and ancestor.get("itemtype"):
            return _item_type(ancestor) in _QUESTION_TYPES
    return False


def _item_type(element: lxml.html.HtmlElement) -> str:
    """``'https://schema.org/Answer'`` -> ``'answer'`` (the first type of several)."""
    types = element.get("itemtype", "").split()
    return types[0].rstrip("/").rsplit("/", 1)[-1].lower() if types else ""
