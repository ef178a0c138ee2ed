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

Around each post's body forum packages print notes and controls that are not what anyone wrote:
the note that the post was changed ("Last edited: Mar 27, 2025", class "message-lastEdit",
"postedit"), the bar counting its likes and naming who reacted ("reactionsBar",
"card-reaction-bar", "reactionSummary"), and the link that folds a long quote open or shut
("Click to expand...", class "bbCodeBlock-expandLink", "collapse-toggle"). An element of a fold
control's class holding more than FOLD_CONTROL_MAX_WORDS words is the folded block itself and
stays. (Rank titles under author names, "Member", were tried and cost forum F1.)

``drop_post_extras`` removes all of these.
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
# A class token naming a post's edit note ("message-lastEdit", "postedit", "lastedited") or its
# bar of reactions ("reactionsBar", "card-reaction-bar", "reactionSummary").
_EDIT_NOTE = re.compile(r"(?:last|post)[-_]?edit(?:ed|s)?$")
_REACTIONS = re.compile(r"reactions?[-_]?(?:bar|summary)$")
# A class token naming the control that folds a quote or a long post open or shut
# ("bbCodeBlock-expandLink", "collapse-toggle"), and the most words such a control holds: an
# element of that class with more is the folded block itself and stays.
_FOLD_CONTROL = re.compile(r"(?:expand|shrink|collapse)[-_]?(?:link|button|toggle)$")
FOLD_CONTROL_MAX_WORDS = 4
# Every name above ends a token with one of these words: a class list (or role) in which none
# does names nothing here, whatever the patterns before them (the cheap test, done first).
_ANY_NAME_END = re.compile(
    r"(?:extras?|stats|edit(?:ed|s)?|bar|summary|link|button|toggle|signature)(?:\s|$)"
)
# Elements that name their part of the page, by class or by the role scripts look them up by.
_NAMED = etree.XPath("//*[@class or @data-role]")
_CLASS_LISTS = etree.XPath("//@class", smart_strings=False)
_ROLES = etree.XPath("//@data-role", smart_strings=False)
_WORD = re.compile(r"\w+")
# schema.org items: their type is the last segment of the ``itemtype`` URL.
_TYPED_ITEMS = etree.XPath("//*[@itemscope][@itemtype]")
# The items of a question-and-answer page whose nested comments are asides.
_QUESTION_TYPES = frozenset(("question", "answer"))


def drop_post_extras(tree: lxml.html.HtmlElement) -> None:
    """Remove author cards, signatures, edit notes, reaction bars, fold controls and a Q&A page's
    comments (in place).

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
    """The elements ``_names_extra`` names, found in one walk over the named elements.

    A page repeats its class lists many times over: each is judged once. Most pages (all but
    a few that are not discussions) name no extra at all: their distinct class lists and
    roles, read in one query, are judged first, and the walk over their elements is skipped.
    A class list and a role name an extra together only when one of them does alone: each
    pattern matches within one token, and the tokens of both are those of each.
    """
    if not any(_names_extra(classes, "") for classes in set(_CLASS_LISTS(tree))) and not any(
        _names_extra("", role) for role in set(_ROLES(tree))
    ):
        return []
    judged: dict[tuple[str, str], bool] = {}
    found = []
    for element in _NAMED(tree):
        names = (element.get("class", ""), element.get("data-role", ""))
        extra = judged.get(names)
        if extra is None:
            extra = judged[names] = _names_extra(*names)
        if extra and not _too_long(element, names):
            found.append(element)
    return found


def _names_extra(classes: str, role: str) -> bool:
    """Whether a class list (or ``data-role``) names a card, signature, edit note or control."""
    if not _ANY_NAME_END.search(f"{classes} {role}".lower()):
        return False
    tokens = classes.lower().split()
    return (
        any(
            _AUTHOR_STATS.search(token) or _EDIT_NOTE.search(token) or _REACTIONS.search(token)
            for token in tokens
        )
        or _is_fold_control(classes)
        or _is_signature((classes, role))
    )


def _too_long(element: lxml.html.HtmlElement, names: tuple[str, str]) -> bool:
    """Whether a named signature or fold control holds too many words to be one."""
    if _is_signature(names):
        return _longer_than(element, SIGNATURE_MAX_WORDS)
    if _is_fold_control(names[0]):
        return _longer_than(element, FOLD_CONTROL_MAX_WORDS)
    return False


def _is_fold_control(classes: str) -> bool:
    return any(_FOLD_CONTROL.search(token) for token in classes.lower().split())


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
