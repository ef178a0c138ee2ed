"""Customer reviews on a product page: a list of dated, rated posts by other people.

A shop's page for one product often ends with what buyers wrote about it. Those are not the
product's own text (its name, price, description and specs): each review is its writer's
opinion, and a long list of them outweighs the description several times over. Reviews are
written the same way on every shop: a container of sibling posts, each with a date and a
rating (stars drawn by an element whose class, label or microdata names a rating or stars,
or the words "4 out of 5", "5 stars"). A container whose children are mostly such posts (at
least MIN_REVIEWS of them) is removed before any extractor reads a product page. Elsewhere
dated, rated posts can be the content (a discussion, a roundup of reviews), so only pages
that declare themselves a product are touched.

    >>> post = ('<li><span class="stars" aria-label="5 stars"></span><b>Sam</b>, 3 May 2024'
    ...         '<p>Sturdy lamp, warm light, easy to assemble.</p></li>')
    >>> page = lxml.html.fromstring(f"<div><p>Brass desk lamp.</p><ul>{post * 3}</ul></div>")
    >>> drop_review_lists(page)
    >>> lxml.html.tostring(page, encoding="unicode")
    '<div><p>Brass desk lamp.</p></div>'
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from enrichment.pipeline.extract.hidden import drop

# A list needs this many dated, rated posts...
MIN_REVIEWS = 2
# ...making up at least this share of its children (a spec list with a date is not one).
REVIEW_SHARE = 0.5
# A post shorter than this (in words) is a rating summary or a histogram row, not a review.
MIN_REVIEW_WORDS = 8
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# A date as review widgets print it: numeric, "May 3, 2024", "3 May 2024" or "2 weeks ago".
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}[./-]\d{{1,2}}[./-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|{_MONTH} \d{{1,2}},? \d{{4}}|\d{{1,2}} {_MONTH} \d{{4}}"
    r"|\d+ (?:days?|weeks?|months?|years?) ago)\b",
    re.IGNORECASE,
)
# A rating written out: "Rated 4 out of 5", "4.5/5", "5 stars".
_RATING_WORDS = re.compile(
    r"\b\d(?:[.,]\d)? ?(?:out of|/|of) ?5\b|\b\d(?:[.,]\d)? stars?\b", re.IGNORECASE
)
# A class naming the stars a rating is drawn with ("stars", "review-rating", "star_4").
_RATING_CLASS = re.compile(r"(?:^|[\s_-])(?:stars?|rating)(?:$|[\s_-])", re.IGNORECASE)


def drop_review_lists(tree: lxml.html.HtmlElement) -> None:
    """Remove the lists of customer reviews from a product page's tree (in place)."""
    lists = [element for element in tree.iter(etree.Element) if _is_review_list(element)]
    found = set(lists)
    for element in lists:
        if not any(ancestor in found for ancestor in element.iterancestors()):
            drop(element)


def _is_review_list(element: etree._Element) -> bool:
    children = [child for child in element if isinstance(child.tag, str)]
    if len(children) < MIN_REVIEWS:
        return False
    reviews = sum(_is_review(child) for child in children)
    return reviews >= MIN_REVIEWS and reviews >= REVIEW_SHARE * len(children)


def _is_review(element: etree._Element) -> bool:
    """A post of some length holding a date and a rating."""
    # Pieces joined by spaces: "3 May 2024</time><p>Sturdy" is no date run into a word.
    text = " ".join(element.itertext())
    if len(text.split()) < MIN_REVIEW_WORDS or not _DATE.search(text):
        return False
    return bool(_RATING_WORDS.search(text)) or any(
        _draws_rating(inner) for inner in element.iter(etree.Element)
    )


def _draws_rating(element: etree._Element) -> bool:
    """An element showing a rating: rating microdata, a stars class, a label with the score."""
    if element.get("itemprop") == "reviewRating":
        return True
    if _RATING_CLASS.search(element.get("class") or ""):
        return True
    label = f"{element.get('aria-label') or ''} {element.get('title') or ''}"
    return bool(_RATING_WORDS.search(label))
