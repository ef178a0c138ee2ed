"""Post chrome: signatures go, what merely wraps a post stays."""

from __future__ import annotations

import lxml.html
import pytest

from enrichment.pipeline.extract.posts import (
    FOLD_CONTROL_MAX_WORDS,
    SIGNATURE_MAX_WORDS,
    drop_post_extras,
)


def test_every_signature_goes_whatever_the_forum_calls_it() -> None:
    names = ("message-signature", "postsignature", "ipsEntry__signature", "signature")
    page = lxml.html.fromstring(
        "<div>"
        + "".join(
            f'<div class="post"><p>Reply {n}</p><div class="{name}">Motto {n}</div></div>'
            for n, name in enumerate(names)
        )
        + "</div>"
    )
    drop_post_extras(page)
    text = page.text_content()
    assert "Reply 3" in text and "Motto" not in text


def test_a_signature_named_by_its_role_goes() -> None:
    page = lxml.html.fromstring(
        '<div><p>Reply</p><div data-role="memberSignature"><p>Motto</p></div></div>'
    )
    drop_post_extras(page)
    assert page.text_content() == "Reply"


def test_an_element_longer_than_a_signature_stays() -> None:
    # A "has-signature" container around a whole post is not the signature itself.
    body = " ".join(["word"] * (SIGNATURE_MAX_WORDS + 1))
    page = lxml.html.fromstring(f'<div><div class="has-signature"><p>{body}</p></div></div>')
    drop_post_extras(page)
    assert page.text_content() == body


def test_edit_notes_reaction_bars_and_fold_controls_go() -> None:
    page = lxml.html.fromstring(
        '<div><article><blockquote><p>Quoted</p><div class="bbCodeBlock-expandLink">'
        "<a>Click to expand...</a></div></blockquote><p>Reply</p></article>"
        '<div class="message-lastEdit">Last edited: Mar 27, 2025</div>'
        '<p class="postedit">Last edited by ann</p>'
        '<div class="reactionsBar">Reactions: ann and bob</div>'
        '<div class="card-reaction-bar">2 likes</div></div>'
    )
    drop_post_extras(page)
    assert page.text_content() == "QuotedReply"


def test_a_fold_control_holding_the_folded_text_stays() -> None:
    # A class naming the toggle on the block it folds: the block is the post's text.
    body = " ".join(["word"] * (FOLD_CONTROL_MAX_WORDS + 1))
    page = lxml.html.fromstring(f'<div><div class="collapse-toggle"><p>{body}</p></div></div>')
    drop_post_extras(page)
    assert page.text_content() == body


@pytest.mark.parametrize(
    "name",
    ["message-userExtras", "userstats", "cAuthorPane_stats", "message-lastEdit", "postedit",
     "lastedited", "reactionsBar", "card-reaction-bar", "reactionSummary",
     "bbCodeBlock-expandLink", "expand-button", "collapse-toggle", "postsignature"],
)  # fmt: skip
def test_each_named_post_extra_goes_beside_other_classes(name: str) -> None:
    # Each name the forum packages use, among the other classes of its element: the cheap
    # test on the class list (a token ending in one of the names' last words) lets it through.
    page = lxml.html.fromstring(
        f'<div><p class="post-body">Reply</p><div class="js-block {name} small">Note</div></div>'
    )
    drop_post_extras(page)
    assert page.text_content() == "Reply"
