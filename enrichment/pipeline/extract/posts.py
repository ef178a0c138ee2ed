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

    >>> page = lxml.html.fromstring(
    ...     '<div><b>ann</b><dl class="message-userExtras">Messages 13,539</dl><p>Hi</p></div>'
    ... )
    >>> drop_author_stats(page)
    >>> page.text_content()
    'annHi'
"""

from __future__ import annotations

import re
from itertools import islice

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.hidden import drop

# A class token naming a post author's statistics (see the module docstring).
_AUTHOR_STATS = re.compile(r"(?:user|author|member|poster)\w*?[-_]?(?:extras?|stats)$")
_WITH_CLASS = etree.XPath("//*[@class]")
# Elements that name their part of the page, by class or by the role scripts look them up by.
_WITH_CLASS_OR_ROLE = etree.XPath("//*[@class or @data-role]")
# A class token naming a post's signature, and the most words one holds (see the docstring).
_SIGNATURE = re.compile(r"signature$")
SIGNATURE_MAX_WORDS = 150
_WORD = re.compile(r"\w+")
# schema.org items: their type is the last segment of the ``itemtype`` URL.
_TYPED_ITEMS = etree.XPath("//*[@itemscope][@itemtype]")
# The items of a question-and-answer page whose nested comments are asides.
_QUESTION_TYPES = frozenset(("question", "answer"))


def drop_author_stats(tree: lxml.html.HtmlElement) -> None:
    """Remove every element whose class names a post author's statistics."""
    doomed = [
        element
        for element in _WITH_CLASS(tree)
        if any(_AUTHOR_STATS.search(token) for token in element.get("class", "").lower().split())
    ]
    for element in doomed:
        drop(element)


def drop_signatures(tree: lxml.html.HtmlElement) -> None:
    """Remove every element whose class names a post's signature (see the module docstring).

    >>> page = lxml.html.fromstring(
    ...     '<div><p>Use tar.</p><div class="message-signature">My rig: a Z790</div></div>'
    ... )
    >>> drop_signatures(page)
    >>> page.text_content()
    'Use tar.'
    """
    doomed = [
        element
        for element in _WITH_CLASS_OR_ROLE(tree)
        if any(_SIGNATURE.search(token) for token in _names(element))
        and not _longer_than(element, SIGNATURE_MAX_WORDS)
    ]
    for element in doomed:
        drop(element)


def _names(element: lxml.html.HtmlElement) -> list[str]:
    """The lower-cased class tokens and ``data-role`` value of ``element``."""
    return f"{element.get('class', '')} {element.get('data-role', '')}".lower().split()


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
