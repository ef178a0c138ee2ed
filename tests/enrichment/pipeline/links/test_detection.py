from __future__ import annotations

import pytest

from enrichment.pipeline.links.detection import (
    bare_tokens,
    clear_verdict_cache,
    extract_links,
    is_fetchable,
    markdown_link_spans,
    resolve_max_links,
    sanitized_pieces,
    strip_markdown_links,
    trim_trailing_punctuation,
)
from enrichment.pipeline.net.ssrf import SsrfPolicy, check_url

DETECTION = [
    # bare scan
    ("plain", "read https://example.com/a now", ["https://example.com/a"]),
    (
        "http and https",
        "http://a.example https://b.example",
        ["http://a.example", "https://b.example"],
    ),
    ("mid-word start", "foohttps://x.com", ["https://x.com"]),
    ("scheme case kept", "HTTP://EXAMPLE.COM/Path", ["HTTP://EXAMPLE.COM/Path"]),
    ("empty after scheme", "https:// and https://", []),
    ("other schemes", "ftp://a.example mailto:x@y.example javascript:alert(1)", []),
    ("empty message", "   \n\t ", []),
    (
        "bom and nbsp trimmed",
        "\ufeff\u00a0https://example.com/x\u00a0\ufeff",
        ["https://example.com/x"],
    ),
    (
        "js whitespace splits",
        "https://a.example/x\u3000https://b.example/y",
        ["https://a.example/x", "https://b.example/y"],
    ),
    ("ideographic space splits", "https://a.example\u2028tail", ["https://a.example"]),
    ("python-only whitespace kept", "https://a.example/x\x1cy", ["https://a.example/x\x1cy"]),
    ("long-s is not s", "http\u017f://a.example", []),
    # trimming
    ("trailing dot", "see https://example.com/a.", ["https://example.com/a"]),
    ("trailing stack", "https://example.com/a).", ["https://example.com/a"]),
    ("trailing comma paren", "https://example.com/a,)", ["https://example.com/a"]),
    ("surrounding paren", "(see https://example.com/a)", ["https://example.com/a"]),
    (
        "balanced paren kept",
        "https://en.example.org/wiki/Foo_(bar)",
        ["https://en.example.org/wiki/Foo_(bar)"],
    ),
    ("balanced then dot", "https://example.com/a(b)_c.", ["https://example.com/a(b)_c"]),
    ("query dot kept", "https://example.com/a?b=1.", ["https://example.com/a?b=1."]),
    (
        "query commas kept",
        "https://example.com/search?q=a,b,",
        ["https://example.com/search?q=a,b,"],
    ),
    ("bare question kept", "https://example.com/a?", ["https://example.com/a?"]),
    ("query paren kept", "(link https://example.com/a?q=1)", ["https://example.com/a?q=1)"]),
    ("fragment kept", "https://example.com/a#x!", ["https://example.com/a#x!"]),
    (
        "quotes and ellipsis",
        "\"https://example.com/a\"… 'https://example.com/b'",
        ["https://example.com/a", "https://example.com/b"],
    ),
    ("semicolon colon bang", "https://example.com/a;:!", ["https://example.com/a"]),
    (
        "not trimmed",
        "https://example.com/a* https://example.com/b_ https://example.com/c- https://example.com/d~",
        [
            "https://example.com/a*",
            "https://example.com/b_",
            "https://example.com/c-",
            "https://example.com/d~",
        ],
    ),
    ("curly apostrophe kept", "https://example.com/a\u2019", ["https://example.com/a\u2019"]),
    ("ideographic stop kept", "https://example.com/a\u3002", ["https://example.com/a\u3002"]),
    ("dash then dot (upstream)", "https://example.com/a-.", ["https://example.com/a-"]),
    ("ipv6 bracket kept", "https://[2606:4700:4700::1111]", ["https://[2606:4700:4700::1111]"]),
    ("braces", "{https://example.com/a}", ["https://example.com/a"]),
    ("square", "[https://example.com/a]", ["https://example.com/a"]),
    ("backtick kept", "`https://example.com/x`", ["https://example.com/x`"]),
    # markdown stripping
    ("inline link", "[docs](https://docs.example) and https://b.example", ["https://b.example"]),
    ("image", "![img](https://i.example/x.png) https://c.example", ["https://c.example"]),
    (
        "image inside link",
        "[![i](https://i.example)](https://l.example) https://c.example",
        ["https://c.example"],
    ),
    (
        "nested brackets label",
        "[my notes [v2]](https://a.example) https://b.example",
        ["https://b.example"],
    ),
    (
        "angle destination",
        "[a](<https://angle.example/a b>) https://b.example",
        ["https://b.example"],
    ),
    ("double title", '[a](https://t.example "t") https://b.example', ["https://b.example"]),
    ("single title", "[a](https://t.example 't') https://b.example", ["https://b.example"]),
    ("paren title", "[a](https://t.example (t)) https://b.example", ["https://b.example"]),
    (
        "escaped quote title",
        '[a](https://t.example "say \\"hi\\"") https://b.example',
        ["https://b.example"],
    ),
    ("title across lines", '[a](https://t.example "one\ntwo")', []),
    (
        "balanced parens dest",
        "[x](https://p.example/(a)(b)) https://b.example",
        ["https://b.example"],
    ),
    ("escaped paren dest", "[x](https://p.example/a\\)) https://b.example", ["https://b.example"]),
    ("label text url gone", "[see https://text.example](https://d.example)", []),
    ("autolink stripped", "<https://example.com/a>", []),
    ("autolink variant text", "see <https://example.com/Hello!> now", []),
    ("unclosed escaped title", '[doc](https://docs.example "t\\")', ["https://docs.example"]),
    ("reference definition kept", "[ref]: https://def.example", ["https://def.example"]),
    ("reference angle definition", "[ref]: <https://def.example/x>", ["https://def.example/x"]),
    (
        "reference link kept",
        "[t][ref] https://b.example\n\n[ref]: https://def.example",
        ["https://b.example", "https://def.example"],
    ),
    ("inline code span", "x `[a](https://code.example)` y", ["https://code.example)`"]),
    ("code span beats link", "[a `](https://x.example)` b](https://y.example)", []),
    ("fenced code not parsed", "```\n[a](https://fenced.example)\n```", ["https://fenced.example"]),
    ("tilde fence", "~~~\n<https://fenced.example>\n~~~", ["https://fenced.example"]),
    (
        "indented code not parsed",
        "x\n\n    [a](https://indented.example)",
        ["https://indented.example"],
    ),
    ("indented continuation parsed", "para\n    [a](https://cont.example)", []),
    ("blank line breaks link", "[a\n\nb](https://blank.example)", ["https://blank.example"]),
    (
        "html attribute masks bracket",
        '[foo <bar attr="](https://html.example)">',
        ["https://html.example"],
    ),
    (
        "link deactivates outer",
        "[a [b](https://in.example) c](https://out.example)",
        ["https://out.example"],
    ),
    (
        "reference deactivates outer",
        "[a [ref] b](https://r.example)\n\n[ref]: /u",
        ["https://r.example"],
    ),
    ("undefined reference is text", "[a [ref] b](https://nr.example)", []),
    ("space before paren", "[a] (https://sp.example)", ["https://sp.example"]),
    ("escaped bracket", "\\[a](https://esc.example)", ["https://esc.example"]),
    ("escaped closing bracket", "[a\\](https://esc.example)", ["https://esc.example"]),
    ("heading link", "# [a](https://h.example)\nhttps://b.example", ["https://b.example"]),
    ("blockquote link", "> [a\n> b](https://q.example)", []),
    ("span glued to url", "https://a.example/x[y](z)", ["https://a.example/x"]),
    (
        "fence with info string",
        "```python\n[a](https://f.example)\n```\n[b](https://g.example)",
        ["https://f.example"],
    ),
    ("unclosed fence runs to end", "```\n[a](https://f.example)", ["https://f.example"]),
    (
        "longer fence needs longer close",
        "````\n```\n[a](https://in.example)\n````",
        ["https://in.example"],
    ),
    ("backtick info is not a fence", "``` x`y\n[a](https://nf.example)", []),
    ("crlf indented code", "x\r\n\r\n    [a](https://crlf.example)", ["https://crlf.example"]),
    (
        "indented code after heading",
        "# T\n    [a](https://afterhead.example)",
        ["https://afterhead.example"],
    ),
    (
        "setext underline ends paragraph",
        "[a\n===\nb](https://setext.example)",
        ["https://setext.example"],
    ),
    (
        "definition across lines",
        '[ref]:\n  https://def2.example\n  "title"\n[x][ref]',
        ["https://def2.example"],
    ),
    (
        "label case and space folding",
        "[Foo  Bar]: https://d.example\n\n[a [foo bar] b](https://o.example)",
        ["https://d.example", "https://o.example"],
    ),
    ("list item link", "- [a](https://list.example)", []),
    # host checks (WHATWG normalisation, no DNS)
    (
        "userinfo blocked",
        "http://evil@127.0.0.1/ http://127.0.0.1@example.com/",
        ["http://127.0.0.1@example.com/"],
    ),
    (
        "hex short loopback",
        "http://0x7f.1/ http://127.1/ http://2130706433/ http://0177.0.0.1/",
        [],
    ),
    (
        "public hex allowed raw",
        "http://0x08080808/ http://8.8.2056/ http://01.02.03.04/",
        ["http://0x08080808/", "http://8.8.2056/", "http://01.02.03.04/"],
    ),
    ("fullwidth and circled", "http://①②⑦.0.0.1/ http://ⓛocalhost/ http://127。0。0。1/", []),
    ("percent host", "http://%31%32%37.0.0.1/", []),
    ("trailing dot loopback", "http://127.0.0.1./", []),
    (
        "parser rejects",
        "http://08.0.0.1/ http://999.1.1.1/ http://127..0.1/ http://1.2.3.4.5/ http://[fe80::1%25lo0]/ http://a.example:65536/",
        [],
    ),
    (
        "local names",
        "http://localhost:3000 http://a.local/ http://b.internal/ http://metadata.google.internal/",
        [],
    ),
    (
        "ipv6 loopback and mapped",
        "http://[::1]/ http://[::ffff:127.0.0.1]/ http://[fd00:ec2::254]/",
        [],
    ),
    (
        "nip.io extracted",
        "http://192.168.1.64.nip.io:8888/x http://169.254.169.254.nip.io/",
        ["http://192.168.1.64.nip.io:8888/x", "http://169.254.169.254.nip.io/"],
    ),
    (
        "cgnat neighbours",
        "http://100.63.255.255/ http://100.64.0.1/ http://100.128.0.0/",
        ["http://100.63.255.255/", "http://100.128.0.0/"],
    ),
    ("idna host", "https://bücher.example/a", ["https://bücher.example/a"]),
    ("nul in host", "http://exa\x00mple.com/", []),
    # dedupe and cap
    (
        "exact dedupe",
        "https://a.com https://a.com https://A.com https://a.com/",
        ["https://a.com", "https://A.com", "https://a.com/"],
    ),
    ("dedupe after trim", "https://a.com/x. https://a.com/x", ["https://a.com/x"]),
]


@pytest.mark.parametrize(
    ("message", "expected"), [c[1:] for c in DETECTION], ids=[c[0] for c in DETECTION]
)
def test_extract_links(message: str, expected: list[str]) -> None:
    assert extract_links(message, max_links=10) == expected


def test_default_cap_skips_blocked_and_duplicates() -> None:
    message = (
        "http://10.0.0.1 http://127.0.0.1 https://a.example https://a.example "
        "https://b.example https://c.example https://d.example"
    )
    assert extract_links(message) == ["https://a.example", "https://b.example", "https://c.example"]


CAPS = [
    ("one", 1, 1),
    ("two point nine", 2.9, 2),
    ("half means one", 0.5, 1),
    ("zero means three", 0, 3),
    ("negative means three", -2, 3),
    ("nan means three", float("nan"), 3),
    ("inf means three", float("inf"), 3),
    ("bool means three", True, 3),
    ("string means three", "5", 3),
    ("none means three", None, 3),
    ("big", 10**30, 5),
]


@pytest.mark.parametrize(("cap", "count"), [c[1:] for c in CAPS], ids=[c[0] for c in CAPS])
def test_max_links(cap: object, count: int) -> None:
    message = " ".join(f"https://{name}.example/" for name in "abcde")
    assert len(extract_links(message, cap)) == count


def test_resolve_max_links_floors() -> None:
    assert [resolve_max_links(v) for v in (1, 4.99, 7)] == [1, 4, 7]


def test_policy_opt_in_lets_intranet_links_through() -> None:
    message = "http://127.0.0.1:8000/page http://10.0.0.5/ http://169.254.169.254/latest"
    policy = SsrfPolicy(allow_private_network=True)
    assert extract_links(message, 10, policy) == ["http://127.0.0.1:8000/page", "http://10.0.0.5/"]


@pytest.mark.parametrize(
    ("token", "trimmed"),
    [
        ("https://x.example/a)))", "https://x.example/a"),
        ("https://x.example/(a))", "https://x.example/(a)"),
        ("https://x.example/a>", "https://x.example/a"),
        ("https://x.example/<a>", "https://x.example/<a>"),
        ("https://x.example/a}.", "https://x.example/a"),
        ("https://x.example/a#b).", "https://x.example/a#b)."),
        ("https://x.example/a.#b", "https://x.example/a.#b"),
    ],
)
def test_trim_trailing_punctuation(token: str, trimmed: str) -> None:
    assert trim_trailing_punctuation(token) == trimmed


def test_spans_cover_exact_source_ranges() -> None:
    text = 'a [x](y "t") b ![i](j) <https://k> c'
    assert [text[s:e] for s, e in markdown_link_spans(text)] == [
        '[x](y "t")',
        "![i](j)",
        "<https://k>",
    ]
    assert strip_markdown_links(text) == "a   b     c"


@pytest.mark.parametrize(
    "token",
    [
        "https://example.com/a",
        "HTTP://Example.COM:443/x?y#z",
        "http://example.123/",
        "http://a.0x1f/",
        "http://xn--nxasmq6b.com/",
        "http://xn--zz.com/",
        "http://a.example:65536/",
        "http://a.example:00080/",
        "http://a.local/x",
        "http://a.example\\@127.0.0.1/",
        "http://1.2.3.abc/",
    ],
)
def test_fast_path_agrees_with_check_url(token: str) -> None:
    assert is_fetchable(token) is (not check_url(token).blocked)


HOSTILE = [
    ("open brackets", "[" * 100_000),
    ("open parens", "(" * 100_000),
    ("open angles", "<" * 100_000),
    ("close brackets", "]" * 100_000),
    ("bracket paren", "[](" * 40_000),
    ("deep parens destination", "[a](" + "(" * 100_000),
    ("image openers then links", "![" * 50_000 + "[a](b)" * 2_000),
    ("many openers many closers", "[" * 50_000 + "](x" * 30_000),
    ("unclosed comments", "<!--" * 30_000),
    ("unclosed titles", '[a](b "' * 20_000),
    ("backticks", "` `` ``` " * 20_000 + "[a](b)"),
    ("url of closers", "https://x.example/" + ")" * 100_000),
    ("definitions", "[x]: <" * 20_000),
]


@pytest.mark.parametrize("message", [c[1] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_markdown_still_yields_the_tail_link(message: str) -> None:
    # 100 KiB of unclosed markdown: a backtracking or quadratic scanner would hang here.
    assert extract_links(message + "\n\nhttps://tail.example/", 10)[-1] == "https://tail.example/"


def test_overlong_message_still_finds_links() -> None:
    message = ("word " * 200_000) + "https://late.example/a."
    assert extract_links(message) == ["https://late.example/a"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("read https://a.example/x now", ["https://a.example/x"]),
        ("fooHTTPS://a.example/x", ["HTTPS://a.example/x"]),
        ("hhttp://a.example", ["http://a.example"]),
        ("http:// https://\u3000x http://", []),
        ("ttp://a.example ://b.example", []),
        ("http://a.example\ufeffhttp://b.example", ["http://a.example", "http://b.example"]),
        ("http://a.example/http://b.example", ["http://a.example/http://b.example"]),
        ("http://://x", ["http://://x"]),
    ],
    ids=[
        "plain",
        "mid-word upper-case",
        "repeated letter before scheme",
        "nothing after the separator",
        "no scheme",
        "BOM separates",
        "nested scheme stays in one token",
        "separator after separator",
    ],
)
def test_bare_tokens_scan(text: str, tokens: list[str]) -> None:
    assert list(bare_tokens(text)) == tokens


def test_pieces_with_needle_pass_paragraphs_without_it_unparsed() -> None:
    text = "[a](b) no link\n\nsee [c](http://d) and http://e"
    assert "".join(sanitized_pieces(text, needle="://")) == "[a](b) no link\n\nsee   and http://e"
    assert strip_markdown_links(text) == "  no link\n\nsee   and http://e"


def test_cached_verdicts_do_not_leak_between_policies_or_keys() -> None:
    clear_verdict_cache()
    private = SsrfPolicy(allow_private_network=True)
    assert is_fetchable("http://127.0.0.1/") is False
    assert is_fetchable("http://127.0.0.1/", private) is True
    assert is_fetchable("http://127.0.0.1/", SsrfPolicy()) is False  # equal to the default
    assert is_fetchable("a.example") is False  # not a URL: must not poison the host
    assert is_fetchable("http://a.example/") is True


@pytest.mark.parametrize(
    ("token", "fetchable"),
    [
        ("http://127.1/a", False),
        ("https://127.1:8443/b?c", False),
        ("http://0x08080808/x", True),
        ("HTTPS://0x08080808:443/y#z", True),
        ("http://0x08080808:65536/", False),
        ("http://xn--nxasmq6b.example/", True),
        ("http://XN--nxasmq6b.example:80/p", True),
        ("http://10.0.3.17:8080/admin", False),
        ("https://8.8.8.8/dns", True),
        ("http://010.0.0.1/", True),  # octal 010 is 8: host 8.0.0.1
        ("http://255.255.255.255/", False),
        ("http://1.2.3.256/", False),
    ],
)
def test_numeric_and_punycode_hosts_judged_alike_whatever_port_or_path(
    token: str, fetchable: bool
) -> None:
    for _ in range(2):  # cold, then from the cache
        assert is_fetchable(token) is fetchable
        assert (not check_url(token).blocked) is fetchable


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("x\r\r    [a](https://cr.example/a)", ["https://cr.example/a"]),
        (
            "~~~\r[a](https://cr.example/b)\r~~~\r[c](https://cr.example/c)",
            ["https://cr.example/b"],
        ),
        ("[a\r\rb](https://cr.example/d)", ["https://cr.example/d"]),
    ],
    ids=["indented-code", "fence-closed-before-a-link", "no-link-across-a-blank-line"],
)
def test_a_bare_carriage_return_ends_a_line(message: str, expected: list[str]) -> None:
    """CommonMark's line endings: a link in code is not a link, a bare URL there is."""
    assert extract_links(message) == expected
