"""Cut the site's menus that an extractor kept at the top of the page's text.

On a listing or a shop's category page, trafilatura (or the block-level pass) sometimes takes
the whole ``<body>``: the text then opens with the site's header, a run of short lines (menu
entries, "Search", "Log in", category names), and only then the page's headline and what it
says. When the headline stands as a line of its own in the text and the lines above it are
such a run (HEADER_WORDS words or more, at most MENU_LINE_WORDS words a line on average:
sentences run longer), they are the header, and go. Lines of running text above the headline
(a hero's pitch, a post quoted before the thread) are left alone. When the headline is no
line of the text, a run of menu entries the text opens with goes all the same
(``cut_leading_menu``).

    >>> menu = "\\n".join(["Skip to content", "Shop", "Lamps", "Chairs", "Tables", "Rugs",
    ...     "Log in", "Basket", "Search the shop", "Help", "Gift cards", "Stores",
    ...     "Contact us"])
    >>> cut_site_header(menu + "\\nBrass lamps\\nOur lamps are cast in brass.", "Brass lamps")
    'Brass lamps\\nOur lamps are cast in brass.'
"""

from __future__ import annotations

from collections.abc import Callable

from enrichment.pipeline.extract.text import words_of

# The run above the headline must hold at least this many words to be a site header...
HEADER_WORDS = 20
# ...in lines of at most this many words on average (menu entries, not sentences).
MENU_LINE_WORDS = 3.0
# The headline is looked for in this many lines from the top.
SEARCH_LINES = 200
# Without the headline, a text opening with lines of at most MENU_ENTRY_WORDS words holding
# LEADING_MENU_WORDS words or more (at most MENU_LINE_WORDS a line on average) opens with the
# site's menus, when REST_WORDS words at least follow them.
MENU_ENTRY_WORDS = 4
LEADING_MENU_WORDS = 30
REST_WORDS = 50


def cut_site_header(text: str, headline: str | None, *, flatten: Callable[[str], str] = str) -> str:
    """``text`` from its ``headline`` line on, when a site header's menus come before it.

    ``flatten`` gives the words a reader sees of a line (markdown's link targets do not
    count).

        >>> cut_site_header("We cast lamps by hand in our own foundry, since 1921.\\n"
        ...     "Brass lamps\\nOur lamps.", "Brass lamps").startswith("We cast")
        True
    """
    wanted = words_of(headline or "")
    if not wanted or wanted[0] not in text.lower():
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines[:SEARCH_LINES]):
        if wanted[-1] in line.lower() and _seen(line, flatten) == wanted:
            counts = [
                count for count in (len(_seen(above, flatten)) for above in lines[:index]) if count
            ]
            words = sum(counts)
            if words >= HEADER_WORDS and words <= MENU_LINE_WORDS * len(counts):
                return "\n".join(lines[index:])
            return text
    return text


def _seen(line: str, flatten: Callable[[str], str]) -> list[str]:
    """The words a reader sees of ``line``.

    Only a link or an image adds words to it (its target): other lines are read as they
    are, at a tenth of the cost of flattening them.
    """
    return words_of(flatten(line) if "](" in line else line)


def cut_leading_menu(text: str, *, flatten: Callable[[str], str] = str) -> str:
    """``text`` without the run of menu entries it opens with, when it has one.

    A page whose headline is not a line of the text (or has none) can still open with the
    site's menus: a run of lines of at most MENU_ENTRY_WORDS words each holding
    LEADING_MENU_WORDS words or more, at most MENU_LINE_WORDS a line on average. It goes when
    at least REST_WORDS words follow it (a page that is only a list of short lines is left
    whole).

        >>> menu = "\\n".join(["Skincare", "Makeup", "Body", "Fragrance"] * 8)
        >>> text = menu + "\\nBalm, the lip balm in six shades. " + "It keeps lips soft. " * 12
        >>> cut_leading_menu(text).startswith("Balm")
        True
        >>> cut_leading_menu("\\n".join(["Skincare", "Makeup"] * 30)).startswith("Skincare")
        True
    """
    lines = text.split("\n")
    counts: list[int] = []
    for line in lines:
        count = len(_seen(line, flatten))
        if count > MENU_ENTRY_WORDS:
            break
        counts.append(count)
    shown = [count for count in counts if count]
    words = sum(shown)
    if words < LEADING_MENU_WORDS or words > MENU_LINE_WORDS * len(shown):
        return text
    after = 0
    for line in lines[len(counts) :]:
        after += len(_seen(line, flatten))
        if after >= REST_WORDS:
            return "\n".join(lines[len(counts) :])
    return text
