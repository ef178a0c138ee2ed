"""What forum software prints around each post that is not part of the discussion.

Under every author's name a thread repeats a card of figures ("Joined Oct 25, 2017",
"Messages 13,539", "Reaction score 2,675", a location). Forum packages mark that card with a
class naming the author and the figures ("message-userExtras", "userstats",
"cAuthorPane_stats"); it says nothing about the discussion and breaks the text between the
posts. Who wrote each post and when stays: the name and the post's date sit outside the card.

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


def drop_author_stats(tree: lxml.html.HtmlElement) -> None:
    """Remove every element whose class names a post author's statistics."""
    doomed = [
        element
        for element in _WITH_CLASS(tree)
        if any(_AUTHOR_STATS.search(token) for token in element.get("class", "").lower().split())
    ]
    for element in doomed:
        drop(element)
