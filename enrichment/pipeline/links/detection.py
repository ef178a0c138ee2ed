"""Find the bare http(s) links in a chat message that link understanding may fetch.

Markdown inline links, images and ``<…>`` autolinks are removed first (CommonMark
rules, each span replaced by one space; see ``markdown_spans``), so links a user
*presented* are not re-fetched; reference definitions and code are left in and
scanned. Each bare token loses trailing punctuation (never inside the query or
fragment, balanced closers kept), must pass the SSRF host check (WHATWG-normalised
host, no DNS), is deduped by exact string and returned as written.

Speed: a message without "://" returns at once. The common message (plain links,
images, autolinks, code spans, fences: ``simple_link_spans``) goes through a fast path
that yields its tokens with their plain ASCII hosts: ``_linkscan.c`` when the install
compiled it, else ``python_candidates`` (same answers; the tests hold both to the full
scan). Other messages get the full CommonMark scan, only in paragraphs holding "://"
and only as far as needed. Host verdicts are remembered (pure: no DNS here).

>>> extract_links("see [docs](https://a.example/d) and (https://b.example/wiki/X_(y)), ok?")
['https://b.example/wiki/X_(y)']
>>> extract_links("http://127.1/ http://0x7f.1/ HTTP://Example.com/A. https://example.com/a?q=1.")
['HTTP://Example.com/A', 'https://example.com/a?q=1.']
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator

from enrichment.pipeline.links.markdown_spans import (
    markdown_link_spans,
    sanitized_pieces,
    simple_link_spans,
    strip_markdown_links,
)
from enrichment.pipeline.net.ssrf import (
    DEFAULT_POLICY,
    JS_WHITESPACE,
    SsrfPolicy,
    check_url,
    classify_host,
)

__all__ = [
    "DEFAULT_MAX_LINKS",
    "bare_tokens",
    "clear_verdict_cache",
    "extract_links",
    "is_fetchable",
    "markdown_link_spans",
    "resolve_max_links",
    "sanitized_pieces",
    "strip_markdown_links",
    "trim_trailing_punctuation",
]

DEFAULT_MAX_LINKS = 3

_SCHEME_SEPARATOR = "://"
# Every case spelling of the schemes, so the scan can look for the literal "://" (a fast
# substring search) and check the few characters before it, instead of trying a
# case-insensitive pattern at every position of the message.
_HTTP_SPELLINGS = frozenset("".join(chars) for chars in itertools.product("hH", "tT", "tT", "pP"))
_HTTPS_SPELLINGS = frozenset(http + s for http in _HTTP_SPELLINGS for s in "sS")
_NON_WHITESPACE_RUN = re.compile(r"[^" + JS_WHITESPACE + r"]+")
_TRAILING_PUNCTUATION = frozenset(",.;:?!\"'\u2026")
_OPENER_OF = {")": "(", "]": "[", "}": "{", ">": "<"}
_TRIM_CANDIDATES = _TRAILING_PUNCTUATION | frozenset(_OPENER_OF)


Candidate = tuple[str, str | None]  # a trimmed token, and its host if it is a plain URL


def extract_links(
    message: str, max_links: object = DEFAULT_MAX_LINKS, policy: SsrfPolicy = DEFAULT_POLICY
) -> list[str]:
    if _SCHEME_SEPARATOR not in message:
        return []  # every bare token holds "://": most chat messages end here
    source = message.strip(JS_WHITESPACE)
    cap = resolve_max_links(max_links)
    verdicts = _verdict_cache(policy)
    links: list[str] = []
    seen: set[str] = set()
    for token, host in _candidates(source):
        if token in seen:
            continue
        seen.add(token)  # blocked tokens too: they would be blocked again
        if host is None:
            fetchable = _verdict(_url_fetchable, token, policy, verdicts)
        else:
            fetchable = _verdict(_plain_host_fetchable, host, policy, verdicts)
        if fetchable:
            links.append(token)
            if len(links) >= cap:
                break
    return links


def python_candidates(source: str) -> list[Candidate] | None:
    """The tokens of a common message (see ``simple_link_spans``), as ``candidate`` pairs;
    None when the message needs the full markdown scan. ``_linkscan`` does the same in C.
    """
    if "](" not in source and "<" not in source:
        spans: list[tuple[int, int]] | None = []  # no inline link or autolink can exist
    else:
        spans = simple_link_spans(source)
    if spans is None:
        return None
    edges = [0, *(edge for span in spans for edge in span), len(source)]
    gaps = zip(edges[::2], edges[1::2], strict=True)  # the text between spans
    return [
        candidate(trim_trailing_punctuation(raw))
        for start, end in gaps
        for raw in bare_tokens(source[start:end])  # each span stands for a space
    ]


def _candidates(source: str) -> Iterator[Candidate]:
    simple = _fast_candidates(source)
    if simple is not None:
        yield from simple
        return
    # The full parser, paragraph by paragraph, only as far as the caller reads.
    for piece in sanitized_pieces(source, needle=_SCHEME_SEPARATOR):
        for raw in bare_tokens(piece):
            yield candidate(trim_trailing_punctuation(raw))


try:  # the C fast path, built from _linkscan.c by pip install (see bench/links.py)
    from enrichment.pipeline.links._linkscan import candidates as _fast_candidates
except ImportError:  # no C compiler at install time: the same answers, slower
    _fast_candidates = python_candidates


def candidate(token: str) -> Candidate:
    """``(token, host)`` for a plain ASCII URL (``_SIMPLE_URL``, port <= 65535), else
    ``(token, None)``.

    >>> candidate("https://Docs.example/a?b"), candidate("https://bücher.example/")
    (('https://Docs.example/a?b', 'Docs.example'), ('https://bücher.example/', None))
    """
    simple = _SIMPLE_URL.fullmatch(token)
    if simple is None or int(simple.group(2) or 0) > 65535:
        return token, None
    return token, simple.group(1)


def bare_tokens(text: str) -> Iterator[str]:
    """What ``re.finditer(r"[hH][tT][tT][pP][sS]?://\\S+", text)`` yields (JS ``\\S``).

    >>> list(bare_tokens("fooHTTPS://a.example/x y http:// z http://b"))
    ['HTTPS://a.example/x', 'http://b']
    """
    pos = 0
    while (separator := text.find(_SCHEME_SEPARATOR, pos)) != -1:
        # A scheme is letters, so no earlier match can start before this separator's.
        if separator >= 5 and text[separator - 5 : separator] in _HTTPS_SPELLINGS:
            start = separator - 5
        elif separator >= 4 and text[separator - 4 : separator] in _HTTP_SPELLINGS:
            start = separator - 4
        else:
            pos = separator + 1
            continue
        rest = _NON_WHITESPACE_RUN.match(text, separator + 3)
        if rest is None:
            pos = separator + 1
            continue
        yield text[start : rest.end()]
        pos = rest.end()


_SIMPLE_URL = re.compile(
    r"[hH][tT][tT][pP][sS]?://((?:[A-Za-z0-9-]+\.)*[A-Za-z0-9-]+)(?::([0-9]{1,5}))?"
    r"(?:[/?#\\][!-~]*)?"
)
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9A-Fa-f]*")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # no leading zero: WHATWG octal
_CANONICAL_IPV4 = re.compile(rf"(?:{_OCTET}\.){{3}}{_OCTET}")


def is_fetchable(token: str, policy: SsrfPolicy = DEFAULT_POLICY) -> bool:
    """``not check_url(token, policy).blocked``, with a fast path for plain ASCII URLs.

    For a printable-ASCII URL whose authority is only ``name(.name)*`` and a valid
    port, the WHATWG host is the lower-cased name, unless a label is punycode or the
    last label is numeric (WHATWG then parses an IPv4 address; only canonical dotted
    decimal comes out as written). Those are parsed in full, as ``http://name/``:
    scheme, port and path do not change how the host parses.
    Verdicts are pure functions of (host or token, policy), so recent ones are reused.
    """
    verdicts = _verdict_cache(policy)
    host = candidate(token)[1]
    if host is None:
        return _verdict(_url_fetchable, token, policy, verdicts)
    return _verdict(_plain_host_fetchable, host, policy, verdicts)


def clear_verdict_cache() -> None:
    """Forget remembered host and URL verdicts (benchmarks measure cold passes)."""
    _default_verdicts.clear()
    _cached_with_policy.cache_clear()


_CACHED_KEY_LIMIT = 512  # longer hosts or tokens are checked uncached (bounds memory)
_DEFAULT_CACHE_SIZE = 4096
_Check = Callable[[str, SsrfPolicy], bool]
_Verdicts = dict[tuple[_Check, str], bool]
# Verdicts under the default policy, keyed by (check, host) or (check, whole token).
_default_verdicts: _Verdicts = {}


def _verdict_cache(policy: SsrfPolicy) -> _Verdicts | None:
    """The remembered verdicts that hold under ``policy`` (decided once per message)."""
    return _default_verdicts if policy is DEFAULT_POLICY or policy == DEFAULT_POLICY else None


def _verdict(check: _Check, key: str, policy: SsrfPolicy, verdicts: _Verdicts | None) -> bool:
    if len(key) > _CACHED_KEY_LIMIT:
        return check(key, policy)
    if verdicts is not None:
        verdict = verdicts.get((check, key))
        if verdict is None:
            if len(verdicts) >= _DEFAULT_CACHE_SIZE:
                verdicts.clear()
            verdict = verdicts[check, key] = check(key, DEFAULT_POLICY)
        return verdict
    try:
        return _cached_with_policy(check, key, policy)
    except TypeError:  # a policy built with unhashable fields (e.g. a list)
        return check(key, policy)


@functools.lru_cache(maxsize=1024)
def _cached_with_policy(
    check: Callable[[str, SsrfPolicy], bool], key: str, policy: SsrfPolicy
) -> bool:
    return check(key, policy)


def _plain_host_fetchable(host: str, policy: SsrfPolicy) -> bool:
    """The verdict on the host of a plain ASCII URL (see ``is_fetchable``)."""
    host = host.lower()
    if ("xn--" in host or _NUMERIC_LABEL.fullmatch(host.rpartition(".")[2])) and not (
        _CANONICAL_IPV4.fullmatch(host)
    ):
        return not check_url(f"http://{host}/", policy).blocked
    return not classify_host(host, policy).blocked


def _url_fetchable(token: str, policy: SsrfPolicy) -> bool:
    return not check_url(token, policy).blocked


def resolve_max_links(value: object) -> int:
    """A positive finite number is floored (at least 1); anything else means 3.

    >>> [resolve_max_links(v) for v in (2.9, 0.5, 0, -1, float("nan"), True, "5", None)]
    [2, 1, 3, 3, 3, 3, 3, 3]
    """
    if type(value) is int and value > 0:
        return value  # the usual case, checked first because it runs once per message
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DEFAULT_MAX_LINKS
    if not math.isfinite(value) or value <= 0:
        return DEFAULT_MAX_LINKS
    # The reference checks the cap only after a push, so 0.5 (floor 0) still yields one.
    return max(1, math.floor(value))


def trim_trailing_punctuation(token: str) -> str:
    """Drop trailing punctuation and unbalanced closers, but only in the path region.

    >>> trim_trailing_punctuation("https://x.example/a(b)_c).,")
    'https://x.example/a(b)_c'
    >>> trim_trailing_punctuation("https://x.example/s?q=a,b,")
    'https://x.example/s?q=a,b,'
    """
    if token[-1] not in _TRIM_CANDIDATES:
        return token
    path_end = len(token)
    for marker in "?#":
        index = token.find(marker)
        if index != -1:
            path_end = min(path_end, index)
    counts: dict[str, int] = {}  # closer and opener counts in token[:end], filled on demand
    end = len(token)
    while 0 < end <= path_end:
        last = token[end - 1]
        opener = _OPENER_OF.get(last)
        if opener is not None:
            if last not in counts:
                counts[last] = token.count(last, 0, end)
                counts[opener] = token.count(opener, 0, end)
            if counts[last] <= counts[opener]:
                break
            counts[last] -= 1
        elif last not in _TRAILING_PUNCTUATION:
            break
        end -= 1
    return token[:end]
