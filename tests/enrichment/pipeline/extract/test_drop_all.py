"""``drop_all``: the same tree as ``drop`` on each element in turn, without the quadratic copy."""

from __future__ import annotations

import lxml.html

from enrichment.pipeline.extract.hidden import drop, drop_all, drop_hidden

PAGES = [
    "<div>a<span hidden>x</span>y<span hidden>x</span>z<b>k</b>t<i hidden>q</i>w</div>",
    "<div><p hidden>x<span hidden>in</span>tail-in</p>after<p>keep</p>"
    "<em hidden>e</em>e-tail<em hidden>f</em></div>",
    "<section><span hidden>only</span></section>",
    "<div>lead<span hidden>x</span><span hidden>y</span>end<br>more</div>",
]


def _hidden(tree: lxml.html.HtmlElement) -> list:
    return [element for element in tree.iter() if element.get("hidden") is not None]


def test_drop_all_leaves_the_tree_that_dropping_one_by_one_leaves() -> None:
    for page in PAGES:
        one_by_one = lxml.html.fromstring(page)
        for element in _hidden(one_by_one):
            drop(element)
        at_once = lxml.html.fromstring(page)
        drop_all(_hidden(at_once))
        assert lxml.html.tostring(at_once) == lxml.html.tostring(one_by_one), page


def test_a_page_of_many_hidden_siblings_keeps_every_visible_tail_in_order() -> None:
    count = 20_000
    tree = lxml.html.fromstring(
        "<div>" + "".join(f"<span hidden>x</span>{i % 10}" for i in range(count)) + "</div>"
    )
    drop_hidden(tree)
    assert tree.text_content() == "".join(str(i % 10) for i in range(count))
    assert len(tree) == 0
