"""Markdown output without markup that markdown cannot say: a fix before trafilatura.

trafilatura's markdown output (links and formatting kept) writes underlined text as
``<u>...</u>``: raw HTML in the markdown an agent reads, and words once it is flattened to
text. Markdown has no underline, so underlines are unwrapped before trafilatura runs.

    >>> tree = lxml.html.fromstring("<p>Read <u>this</u> now.</p>")
    >>> prepare_for_markdown(tree)
    >>> lxml.html.tostring(tree, encoding="unicode")
    '<p>Read this now.</p>'
"""

from __future__ import annotations

import lxml.html


def prepare_for_markdown(tree: lxml.html.HtmlElement) -> None:
    """Reshape ``tree`` in place so trafilatura's markdown holds no raw ``<u>`` tags."""
    for element in list(tree.iter("u")):
        element.drop_tag()
