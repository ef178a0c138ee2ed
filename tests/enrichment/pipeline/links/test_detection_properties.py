from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from enrichment.pipeline.links.detection import (
    bare_tokens,
    clear_verdict_cache,
    extract_links,
    is_fetchable,
    markdown_link_spans,
    resolve_max_links,
    sanitized_pieces,
    strip_markdown_links,
)
from enrichment.pipeline.net.ssrf import (
    DEFAULT_POLICY,
    JS_WHITESPACE,
    SsrfPolicy,
    check_url,
    classify_address,
    classify_host,
)

# Fragments that exercise the markdown scanner, trimming and the host check together.
FRAGMENTS = st.sampled_from(
    [
        "[",
        "]",
        "(",
        ")",
        "<",
        ">",
        "`",
        "``",
        "\\",
        '"',
        "'",
        "!",
        "![",
        "](",
        "]:",
        " ",
        "\n",
        "\n\n",
        "    ",
        "```",
        "# ",
        "> ",
        ".",
        ",",
        "?",
        "#",
        "…",
        "\u3000",
        "\ufeff",
        "https://a.example/",
        "http://B.example",
        "https://a.example/x?q=1",
        "http://127.0.0.1/",
        "http://0x7f.1/",
        "http://[::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://evil@10.0.0.1/",
        "http://x.local/",
        "http://①②⑦.0.0.1/",
        "http://%31%30.0.0.1/",
        "https://bücher.example/",
        "http://example.123/",
        "http://a.example:99999/",
        "http://a.example:8080/",
        "\x00",
        "\ud800",
    ]
)
MARKDOWNISH = st.lists(FRAGMENTS, max_size=40).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=300), MARKDOWNISH)
CAPS = st.one_of(st.none(), st.integers(-3, 12), st.floats(allow_nan=True), st.text(max_size=3))


@settings(max_examples=300, deadline=None)
@given(message=ANY_TEXT, cap=CAPS)
def test_extracted_links_are_verbatim_unique_capped_and_pass_the_guard(
    message: str, cap: object
) -> None:
    links = extract_links(message, cap)
    assert len(links) == len(set(links))
    assert len(links) <= resolve_max_links(cap)
    for link in links:
        assert link in message
        assert link.lower().startswith(("http://", "https://"))
        assert check_url(link).blocked is False


@settings(max_examples=300, deadline=None)
@given(host=st.one_of(st.text(max_size=60), FRAGMENTS))
def test_classifiers_never_raise(host: str) -> None:
    assert isinstance(classify_host(host).blocked, bool)
    assert isinstance(classify_address(host).blocked, bool)
    verdict = check_url(host)
    assert verdict.blocked or verdict.host is not None
    assert check_url("http://" + host + "/").blocked in (True, False)


HOST_LABELS = st.sampled_from(
    [
        "a",
        "example",
        "xn--a",
        "xn--nxasmq6b",
        "123",
        "0x1f",
        "0x",
        "local",
        "internal",
        "localhost",
        "10",
        "127",
        "0",
        "255",
        "A-b",
        "-",
        "1a",
    ]
)
HOSTS = st.lists(HOST_LABELS, min_size=1, max_size=5).map(".".join)
PORTS = st.one_of(st.just(""), st.integers(0, 99999).map(lambda port: f":{port}"))
TAILS = st.sampled_from(["", "/", "/a.b", "?q=1", "#x", "\\x", "/\x7f", "/é", "@127.0.0.1/"])


@settings(max_examples=500, deadline=None)
@given(scheme=st.sampled_from(["http", "HTTPS"]), host=HOSTS, port=PORTS, tail=TAILS)
def test_fast_host_path_matches_full_check(scheme: str, host: str, port: str, tail: str) -> None:
    url = f"{scheme}://{host}{port}{tail}"
    assert is_fetchable(url) is (not check_url(url).blocked)


@settings(max_examples=300, deadline=None)
@given(message=MARKDOWNISH)
def test_spans_are_ordered_disjoint_link_shapes(message: str) -> None:
    spans = markdown_link_spans(message)
    assert all(end > start for start, end in spans)
    assert all(first[1] <= second[0] for first, second in zip(spans, spans[1:], strict=False))
    for start, end in spans:
        assert message.startswith(("[", "![", "<"), start)
        assert message[end - 1] in ")>"
    stripped = strip_markdown_links(message)
    assert len(stripped) == len(message) - sum(end - start - 1 for start, end in spans)


# The regex the scanner replaced: JS \S after a case-insensitive http(s)://.
REFERENCE_BARE_URL = re.compile(r"[hH][tT][tT][pP][sS]?://[^" + JS_WHITESPACE + r"]+")


@settings(max_examples=500, deadline=None)
@given(text=ANY_TEXT)
def test_bare_tokens_match_the_reference_regex(text: str) -> None:
    assert list(bare_tokens(text)) == [m.group() for m in REFERENCE_BARE_URL.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(message=MARKDOWNISH)
def test_skipping_paragraphs_without_urls_finds_the_same_tokens(message: str) -> None:
    stripped = strip_markdown_links(message)
    pieces = list(sanitized_pieces(message, needle="://"))
    assert [token for piece in pieces for token in bare_tokens(piece)] == list(
        bare_tokens(stripped)
    )


@settings(max_examples=300, deadline=None)
@given(message=ANY_TEXT, private=st.booleans())
def test_verdict_cache_never_changes_results(message: str, private: bool) -> None:
    policy = SsrfPolicy(allow_private_network=private)
    clear_verdict_cache()
    cold = extract_links(message, 10, policy)
    assert extract_links(message, 10, policy) == cold
    assert extract_links(message, 10, SsrfPolicy()) == extract_links(message, 10, DEFAULT_POLICY)
