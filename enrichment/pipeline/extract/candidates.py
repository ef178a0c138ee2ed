"""The two candidate extractions of one cleaned HTML page.

``trafilatura_candidate`` keeps trafilatura's default precision/recall balance (its
``favor_recall`` mode pulls in navigation and related-article teasers on real pages) and
keeps comments, so the replies of a forum thread stay with the question.
``resiliparse_candidate`` is resiliparse's main-content text: it drops boilerplate by block
(navigation, footers, sidebars) rather than by picking one subtree, so pages whose content is
spread over many sibling blocks (threads, listings, product pages) keep more of it.

    >>> page = "<html><body><nav>Home | About</nav><main><p>" + "word " * 40 + "</p></main></body></html>"
    >>> resiliparse_candidate(page).split()[:3]
    ['word', 'word', 'word']
"""

from __future__ import annotations

from configparser import ConfigParser
from typing import Literal

import lxml.html
import trafilatura
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree
from trafilatura.settings import use_config

CandidateMode = Literal["markdown", "text"]


def _trafilatura_config() -> ConfigParser:
    config = use_config()
    # trafilatura's own timeout uses SIGALRM, which only works in the main thread.
    config.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")
    return config


_CONFIG = _trafilatura_config()


def trafilatura_candidate(
    tree: lxml.html.HtmlElement, *, mode: CandidateMode, base_url: str | None
) -> str:
    """trafilatura with its default balance; markdown keeps links, formatting and tables."""
    markdown = mode == "markdown"
    result = trafilatura.extract(
        tree,
        url=base_url,
        output_format="markdown" if markdown else "txt",
        include_comments=True,
        include_tables=True,
        include_links=markdown,
        include_formatting=markdown,
        include_images=False,
        deduplicate=False,
        config=_CONFIG,
    )
    return result or ""


def resiliparse_candidate(html: str, *, mode: CandidateMode = "text") -> str:
    """resiliparse's main-content text; markdown mode marks list items with ``- ``."""
    tree = HTMLTree.parse(html)
    text = extract_plain_text(
        tree,
        main_content=True,
        alt_texts=False,
        links=False,
        form_fields=False,
        noscript=False,
        list_bullets=mode == "markdown",
    )
    if mode == "markdown":
        text = text.replace("\u2022 ", "- ")
    return str(text)
