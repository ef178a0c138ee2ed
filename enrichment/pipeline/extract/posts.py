"""What forum software prints around each post that is not part of the discussion.

Under every author's name a thread repeats a card of figures ("Joined Oct 25, 2017",
"Messages 13,539", "Reaction score 2,675", a location). Forum packages mark that card with a
class naming the author and the figures ("message-userExtras", "userstats",
"cAuthorPane_stats"); it says nothing about the discussion and breaks the text between the
posts. Who wrote each post and when stays: the name and the post's date sit outside the card.

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

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.hidden import drop

# A class token naming a post author's statistics (see the module docstring).
_AUTHOR_STATS = re.compile(r"(?:user|author|member|poster)\w*?[-_]?(?:extras?|stats)$")
_WITH_CLASS = etree.XPath("//*[@class]")
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
