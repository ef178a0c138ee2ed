"""The fast paths of link detection give exactly the answers of the full scan.

Three implementations answer "which bare tokens does this message hold?":
the full CommonMark scan (``sanitized_pieces`` + ``bare_tokens``, the reference), the
Python fast path (``python_candidates``) and its C twin (``_linkscan.candidates``).
The fast paths may decline a message (None); when they answer, they must agree.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enrichment.pipeline.links import detection as links
from enrichment.pipeline.links._linkscan import candidates as c_candidates
from enrichment.pipeline.links.detection import (
    Candidate,
    bare_tokens,
    candidate,
    extract_links,
    python_candidates,
    sanitized_pieces,
    trim_trailing_punctuation,
)
from enrichment.pipeline.links.markdown_spans import markdown_link_spans, simple_link_spans
from enrichment.pipeline.net.ssrf import JS_WHITESPACE


def full_candidates(source: str) -> list[Candidate]:
    return [
        candidate(trim_trailing_punctuation(raw))
        for piece in sanitized_pieces(source)
        for raw in bare_tokens(piece)
    ]


def test_the_c_fast_path_is_built_and_used() -> None:
    # pip install compiles _linkscan.c; without a compiler the Python path would be used
    # silently, and the detection benchmark (bench/links.py) would miss its target.
    assert links._fast_candidates is c_candidates


CHAT = [
    "see [the docs](https://docs.example/a) and https://b.example/x.",
    "![shot](https://img.example/1.png) <https://auto.example/> `curl http://c.example/`",
    "run `x = [1](2)` then http://d.example/p?q=1, ok",
    "intro\n\n```python\nitems = [x for x in y if x < 3]\nGET http://e.example/\n```\n\nafter "
    "[a](http://f.example/) http://g.example/",
    "unclosed fence\n```\n[a](http://h.example/)",
    '(see https://en.example/wiki/X_(y)), and [l](http://i.example "title")!',
    "list:\n- one http://j.example/1\n- two [k](http://k.example/)\n> quote http://l.example",
    "# Heading http://m.example/\n---\ntext http://n.example/…",
    "http://127.0.0.1:8000/ http://10.0.0.5/ https://Example.COM:443/x http://a.example:99999/",
    "unicode é https://bücher.example/ and http://o.example/\u3000next http://p.example/",
    "astral 😀 [a](http://q.example/) http://r.example/😀",
]


@pytest.mark.parametrize("message", CHAT)
def test_common_chat_messages_take_the_fast_path_and_agree(message: str) -> None:
    fast = c_candidates(message)
    assert fast is not None  # these are the messages the fast path exists for
    assert fast == python_candidates(message) == full_candidates(message)


@pytest.mark.parametrize(
    "message",
    [
        "a [b] c [d](http://x.example/)",  # a bracket that is not a simple link
        "[a [b]](http://x.example/) http://y.example/",  # nested label
        "\\[a](http://x.example/)",  # escapes
        "[a](<http://x.example/>) http://y.example/",  # angle destination
        "[r]: http://x.example/\n\n[r] http://y.example/ [a](b)",  # reference definition
        "<a@b.example> http://x.example/",  # e-mail autolink (the C path declines)
        "``[a](http://x.example/)`` http://y.example/",  # double-backtick code span
        "text\n\n    [a](http://x.example/) indented code",
        "~~~\n[a](http://x.example/)\n~~~",
        "[a](http://x.example/)\r\nhttp://y.example/",
        "```not a `fence`\n[a](http://x.example/)",
    ],
)
def test_unusual_markdown_goes_to_the_full_scan(message: str) -> None:
    assert c_candidates(message) is None
    fast = python_candidates(message)
    assert fast is None or fast == full_candidates(message)
    assert (
        extract_links(message, 10)
        == [
            token
            for token, _ in dict.fromkeys(full_candidates(message))
            if links.is_fetchable(token)
        ][:10]
    )


def test_unicode_digit_port_is_not_a_plain_url() -> None:
    # "\d" would read Arabic-Indic digits as a port, but WHATWG refuses the URL.
    token = "http://a.example:\u0661\u0662/"
    assert candidate(token) == (token, None)
    assert c_candidates(token) == [(token, None)]
    assert extract_links(token) == []


def test_many_spans_and_wide_strings() -> None:
    # More spans than the C scanner keeps inline, in 1-, 2- and 4-byte strings.
    for extra in ("", "é", "\u3042", "😀"):
        message = " ".join(
            f"[{extra}{i}](http://s{i}.example/) http://t{i}.example/" for i in range(300)
        )
        fast = c_candidates(message)
        assert fast is not None and len(fast) == 300
        assert fast == full_candidates(message)


HOSTILE_INPUTS = [
    "\x00http://a.example/\x00[a](http://b.example/)",
    "\ud800 http://a.example/ [\udfff](http://b.example/)",
    "http://" + "a." * 50_000 + "example/",
    "https://" + "9" * 100_000,
    "http://x.example:" + "1" * 100_000,
    "[" + "a" * 100_000 + '](http://x.example/ "' + "t" * 100_000 + '")',
    "```\n" * 50_000,
    "``` x\n" + "http://a.example/\n" * 10_000,
    "<" + "a" * 40 + ":" + "b" * 100_000 + ">",
    "http://a.example/" + ")" * 100_000,
    "http://a.example/" + "(" * 50_000 + ")" * 50_001 + ".",
    "`" + " http://a.example/" * 10_000,
    "[",
    "<",
    "`",
    "```",
    "[a](",
    "![",
    "http://",
    '[a](b "',
    "\n```",
    "<a:",
    "",
]


@pytest.mark.parametrize(
    "message",
    HOSTILE_INPUTS,
    ids=[
        "nul",
        "lone surrogates",
        "many labels",
        "long numeric host",
        "long port",
        "long label and title",
        "many fences",
        "unclosed fence with urls",
        "long autolink scheme",
        "closers",
        "balanced closers",
        "unpaired backtick",
        "lone bracket",
        "lone angle",
        "lone backtick",
        "lone fence",
        "unclosed resource",
        "lone image opener",
        "bare scheme",
        "unclosed title",
        "fence after newline",
        "unclosed autolink",
        "empty",
    ],
)
def test_hostile_input_agrees_with_the_full_scan(message: str) -> None:
    fast = c_candidates(message)
    assert fast is None or fast == full_candidates(message)


def test_rejects_a_non_string() -> None:
    with pytest.raises(TypeError, match="expects a str"):
        c_candidates(b"http://a.example/")  # type: ignore[arg-type]


# Whole constructs, so generated messages often stay on the fast paths.
PIECES = st.sampled_from(
    [
        "[a](http://a.example/)",
        "![i](https://i.example/x.png)",
        '[t](http://t.example/ "title")',
        "[](http://e.example)",
        "<https://auto.example/x>",
        "<mailto:a@b>",
        "`code http://c.example/`",
        "`[x](y)`",
        "\n```\n",
        "\n```py\n",
        "\n````\n",
        "\n   ```\n",
        "http://a.example/",
        "HTTPS://B.example:8080/p?q=1",
        "http://127.0.0.1/",
        "http://a.example:١٢/",
        "https://x.example/a_(b)",
        "http://bücher.example/",
        "http://xn--nxasmq6b.example/",
        "http://0x7f.1/",
        "https://a.example/…",
        "word",
        " ",
        "\n",
        "\n\n",
        "\n    ",
        "    ",
        "# ",
        "- ",
        "> ",
        "---",
        "!",
        "[",
        "]",
        "(",
        ")",
        "<",
        ">",
        "`",
        "\\",
        '"',
        ".",
        ",",
        "?",
        "#",
        ":",
        "]:",
        "~~~",
        "\t",
        "\r",
        "\u3000",
        "é",
        "😀",
    ]
)
MESSAGES = st.one_of(st.lists(PIECES, max_size=30).map("".join), st.text(max_size=200)).map(
    lambda text: text.strip(JS_WHITESPACE)
)


@settings(max_examples=1500, deadline=None)
@given(message=MESSAGES)
def test_fast_paths_agree_with_the_full_scan(message: str) -> None:
    reference = full_candidates(message)
    python_fast = python_candidates(message)
    c_fast = c_candidates(message)
    assert python_fast is None or python_fast == reference
    assert c_fast is None or c_fast == reference
    assert c_fast is None or python_fast is not None  # C declines at least as often


@settings(max_examples=800, deadline=None)
@given(message=MESSAGES)
def test_simple_spans_are_the_parser_spans(message: str) -> None:
    simple = simple_link_spans(message)
    assert simple is None or simple == markdown_link_spans(message)


@settings(max_examples=500, deadline=None)
@given(message=MESSAGES, cap=st.integers(1, 5))
def test_extract_links_is_the_same_on_every_path(message: str, cap: int) -> None:
    with_c = extract_links(message, cap)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(links, "_fast_candidates", python_candidates)
        with_python = extract_links(message, cap)
        patch.setattr(links, "_fast_candidates", lambda source: None)
        with_full_scan = extract_links(message, cap)
    assert with_c == with_python == with_full_scan
