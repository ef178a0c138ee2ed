from __future__ import annotations

import socket
import threading

import pytest

from enrichment.pipeline.net.ssrf import (
    DEFAULT_POLICY,
    HostClassification,
    SsrfPolicy,
    Verdict,
    check_url,
    check_url_async,
    classify_address,
    classify_host,
    normalize_hostname,
    system_resolve,
)

BLOCKED_HOSTS = [
    # names and suffixes
    ("localhost", "blocked hostname localhost"),
    ("LOCALHOST.", "blocked hostname localhost"),
    ("localhost.localdomain", "blocked hostname localhost.localdomain"),
    ("metadata.google.internal", "cloud metadata hostname metadata.google.internal"),
    ("app.localhost", "blocked hostname app.localhost"),
    ("printer.local", "blocked hostname printer.local"),
    ("db.corp.internal", "blocked hostname db.corp.internal"),
    ("ⓛocalhost", "blocked hostname localhost"),
    # IPv4 special-use ranges
    ("0.0.0.0", "unspecified address 0.0.0.0"),
    ("0.255.255.255", "unspecified address 0.255.255.255"),
    ("10.0.0.5", "private address 10.0.0.5"),
    ("172.16.0.1", "private address 172.16.0.1"),
    ("172.31.255.255", "private address 172.31.255.255"),
    ("192.168.1.1", "private address 192.168.1.1"),
    ("100.64.0.1", "carrier-grade NAT address 100.64.0.1"),
    ("100.127.255.255", "carrier-grade NAT address 100.127.255.255"),
    ("127.0.0.1", "loopback address 127.0.0.1"),
    ("127.255.255.254", "loopback address 127.255.255.254"),
    ("169.254.1.1", "link-local address 169.254.1.1"),
    ("192.0.0.8", "reserved address 192.0.0.8"),
    ("192.0.2.1", "documentation address 192.0.2.1"),
    ("192.88.99.1", "reserved address 192.88.99.1"),
    ("198.18.0.1", "RFC 2544 benchmark address 198.18.0.1"),
    ("198.19.255.255", "RFC 2544 benchmark address 198.19.255.255"),
    ("198.51.100.7", "documentation address 198.51.100.7"),
    ("203.0.113.9", "documentation address 203.0.113.9"),
    ("224.0.0.1", "multicast address 224.0.0.1"),
    ("239.255.255.255", "multicast address 239.255.255.255"),
    ("240.0.0.1", "reserved address 240.0.0.1"),
    ("255.255.255.255", "broadcast address 255.255.255.255"),
    # cloud metadata
    ("169.254.169.254", "cloud metadata address 169.254.169.254"),
    ("100.100.100.200", "cloud metadata address 100.100.100.200"),
    ("[fd00:ec2::254]", "cloud metadata address fd00:ec2::254"),
    # IPv6 special-use ranges
    ("[::]", "unspecified address ::"),
    ("[::1]", "loopback address ::1"),
    ("fe80::1", "link-local address fe80::1"),
    ("[fe80::1%eth0]", "link-local address fe80::1"),
    ("[FE80::1%25lo0]", "link-local address fe80::1"),
    ("fec0::1", "site-local address fec0::1"),
    ("fc00::1", "unique-local address fc00::1"),
    ("fd12:3456::1", "unique-local address fd12:3456::1"),
    ("ff02::1", "multicast address ff02::1"),
    ("100::1", "discard-only address 100::1"),
    ("2001:2::1", "benchmarking address 2001:2::1"),
    ("2001:db8::1", "documentation address 2001:db8::1"),
    ("2001:20::1", "ORCHID address 2001:20::1"),
    ("2001:100::1", "reserved address 2001:100::1"),
    ("3fff::1", "documentation address 3fff::1"),
    # IPv4 embedded in IPv6, judged by the embedded address
    ("[::ffff:127.0.0.1]", "loopback address 127.0.0.1 (IPv4-mapped ::ffff:7f00:1)"),
    ("::ffff:10.0.0.1", "private address 10.0.0.1 (IPv4-mapped ::ffff:a00:1)"),
    ("::ffff:0:10.0.0.1", "private address 10.0.0.1 (IPv4-translated ::ffff:0:a00:1)"),
    ("::127.0.0.1", "loopback address 127.0.0.1 (IPv4-compatible ::7f00:1)"),
    ("64:ff9b::127.0.0.1", "loopback address 127.0.0.1 (NAT64 64:ff9b::7f00:1)"),
    ("64:ff9b:1::10.0.0.1", "private address 10.0.0.1 (local NAT64 64:ff9b:1::a00:1)"),
    ("2002:7f00:1::", "loopback address 127.0.0.1 (6to4 2002:7f00:1::)"),
    ("2002:c0a8:0101::1", "private address 192.168.1.1 (6to4 2002:c0a8:101::1)"),
    ("2001:0:0:0:0:0:80ff:fffe", "loopback address 127.0.0.1 (Teredo 2001::80ff:fffe)"),
    ("2001:4860:1::5efe:10.0.0.1", "private address 10.0.0.1 (ISATAP 2001:4860:1::5efe:a00:1)"),
    (
        "2001:4860:1:0:200:5efe:7f00:1",
        "loopback address 127.0.0.1 (ISATAP 2001:4860:1:0:200:5efe:7f00:1)",
    ),
    (
        "::ffff:169.254.169.254",
        "cloud metadata address 169.254.169.254 (IPv4-mapped ::ffff:a9fe:a9fe)",
    ),
    ("::ffff:198.18.0.1", "RFC 2544 benchmark address 198.18.0.1 (IPv4-mapped ::ffff:c612:1)"),
    # legacy and malformed literals (the raw classifier fails closed)
    ("0177.0.0.1", "non-canonical IPv4 literal 0177.0.0.1"),
    ("0x7f.0.0.1", "non-canonical IPv4 literal 0x7f.0.0.1"),
    ("0x7f.1", "non-canonical IPv4 literal 0x7f.1"),
    ("127.1", "non-canonical IPv4 literal 127.1"),
    ("2130706433", "non-canonical IPv4 literal 2130706433"),
    ("0x7f000001", "non-canonical IPv4 literal 0x7f000001"),
    ("017700000001", "non-canonical IPv4 literal 017700000001"),
    ("8.8.2056", "non-canonical IPv4 literal 8.8.2056"),
    ("0x08080808", "non-canonical IPv4 literal 0x08080808"),
    ("08.0.0.1", "non-canonical IPv4 literal 08.0.0.1"),
    ("999.1.1.1", "non-canonical IPv4 literal 999.1.1.1"),
    ("0x7g.0.0.1", "non-canonical IPv4 literal 0x7g.0.0.1"),
    ("127..0.1", "non-canonical IPv4 literal 127..0.1"),
    ("a..b.example", "non-canonical IPv4 literal a..b.example"),
    ("::::", "invalid IPv6 address ::::"),
    ("2001:db8::gggg", "invalid IPv6 address 2001:db8::gggg"),
    # WHATWG spellings a client would dial
    ("127。0。0。1", "loopback address 127.0.0.1"),
    ("%31%32%37.0.0.1", "loopback address 127.0.0.1"),
    ("①②⑦.0.0.1", "loopback address 127.0.0.1"),
    ("１０.0.0.1", "private address 10.0.0.1"),
    ("", "empty hostname"),
    ("  ", "empty hostname"),
    ("exa\x00mple.com", "invalid hostname exa\x00mple.com"),
    ("bad\ud800host", "invalid hostname bad\ud800host"),
]


@pytest.mark.parametrize(("host", "reason"), BLOCKED_HOSTS, ids=[repr(h) for h, _ in BLOCKED_HOSTS])
def test_classify_host_blocks_with_reason(host: str, reason: str) -> None:
    assert classify_host(host) == HostClassification(blocked=True, reason=reason)


PUBLIC_HOSTS = [
    "example.com",
    "EXAMPLE.COM.",
    "local",
    "internal",
    "localhost.com",
    "example.localdomain",
    "foo.lan",
    "foo.home.arpa",
    "abc.123.example",
    "1password.com",
    "0x.example.com",
    "192.168.1.64.nip.io",
    "8.8.8.8",
    "1.1.1.1",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.0.3.0",
    "192.167.255.255",
    "192.169.0.0",
    "192.175.48.1",
    "192.31.196.1",
    "192.52.193.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "[2606:4700:4700::1111]",
    "2001:4860:4860::8888",
    "fbff:ffff::1",
    "fe00::1",
    "2001:3::1",
    "2001:4:112::1",
    "2001:30::1",
    "2001:db7:ffff::1",
    "2001:db9::1",
    "64:ff9b::8.8.8.8",
    "::ffff:8.8.8.8",
    "2002:0808:0808::",
    "2001::f7f7:f7f7",
    "2001:4860:1234::5efe:8.8.8.8",
    "bücher.example",
]


@pytest.mark.parametrize("host", PUBLIC_HOSTS, ids=PUBLIC_HOSTS)
def test_classify_host_allows_public_neighbours(host: str) -> None:
    assert classify_host(host) == HostClassification(blocked=False, reason=None)


POLICY_CASES = [
    ("private opt-in: loopback", SsrfPolicy(allow_private_network=True), "127.0.0.1", False),
    ("private opt-in: private", SsrfPolicy(allow_private_network=True), "10.0.0.5", False),
    ("private opt-in: localhost", SsrfPolicy(allow_private_network=True), "localhost", False),
    ("private opt-in: .local", SsrfPolicy(allow_private_network=True), "nas.local", False),
    ("private opt-in: mapped", SsrfPolicy(allow_private_network=True), "::ffff:10.0.0.1", False),
    ("private opt-in: .internal stays", SsrfPolicy(allow_private_network=True), "a.internal", True),
    (
        "private opt-in: metadata v4",
        SsrfPolicy(allow_private_network=True),
        "169.254.169.254",
        True,
    ),
    (
        "private opt-in: metadata alibaba",
        SsrfPolicy(allow_private_network=True),
        "100.100.100.200",
        True,
    ),
    ("private opt-in: metadata v6", SsrfPolicy(allow_private_network=True), "fd00:ec2::254", True),
    (
        "private opt-in: metadata name",
        SsrfPolicy(allow_private_network=True),
        "metadata.google.internal",
        True,
    ),
    (
        "private opt-in: mapped metadata",
        SsrfPolicy(allow_private_network=True),
        "::ffff:169.254.169.254",
        True,
    ),
    ("private opt-in: legacy literal", SsrfPolicy(allow_private_network=True), "127.1", True),
    ("rfc2544 opt-in", SsrfPolicy(allow_rfc2544_benchmark_range=True), "198.18.0.1", False),
    (
        "rfc2544 opt-in: mapped",
        SsrfPolicy(allow_rfc2544_benchmark_range=True),
        "::ffff:198.19.0.1",
        False,
    ),
    (
        "rfc2544 opt-in: NAT64",
        SsrfPolicy(allow_rfc2544_benchmark_range=True),
        "64:ff9b::198.18.0.1",
        False,
    ),
    (
        "rfc2544 opt-in: not private",
        SsrfPolicy(allow_rfc2544_benchmark_range=True),
        "10.0.0.1",
        True,
    ),
    ("ula opt-in", SsrfPolicy(allow_ipv6_unique_local_range=True), "fd12::1", False),
    ("ula opt-in: fc00", SsrfPolicy(allow_ipv6_unique_local_range=True), "fc00::1", False),
    ("ula opt-in: metadata", SsrfPolicy(allow_ipv6_unique_local_range=True), "fd00:ec2::254", True),
    (
        "ula opt-in: link-local stays",
        SsrfPolicy(allow_ipv6_unique_local_range=True),
        "fe80::1",
        True,
    ),
    ("allowed exact", SsrfPolicy(allowed_hostnames=("intranet.local",)), "intranet.local", False),
    (
        "allowed exact case",
        SsrfPolicy(allowed_hostnames=("Intranet.Local.",)),
        "INTRANET.local",
        False,
    ),
    ("allowed exact other", SsrfPolicy(allowed_hostnames=("intranet.local",)), "other.local", True),
    (
        "allowed wildcard sub",
        SsrfPolicy(allowed_hostnames=("*.corp.internal",)),
        "a.corp.internal",
        False,
    ),
    (
        "allowed wildcard deep",
        SsrfPolicy(allowed_hostnames=("*.corp.internal",)),
        "a.b.corp.internal",
        False,
    ),
    (
        "allowed wildcard apex",
        SsrfPolicy(allowed_hostnames=("*.corp.internal",)),
        "corp.internal",
        True,
    ),
    (
        "allowed wildcard lookalike",
        SsrfPolicy(allowed_hostnames=("*.corp.internal",)),
        "evilcorp.internal",
        True,
    ),
    ("allowed ip literal", SsrfPolicy(allowed_hostnames=("127.0.0.1",)), "127.0.0.1", False),
    (
        "allowed link-local literal",
        SsrfPolicy(allowed_hostnames=("169.254.1.1",)),
        "169.254.1.1",
        True,
    ),
    (
        "allowed metadata name",
        SsrfPolicy(allowed_hostnames=("metadata.google.internal",)),
        "metadata.google.internal",
        True,
    ),
    (
        "allowed metadata ip",
        SsrfPolicy(allowed_hostnames=("169.254.169.254",)),
        "169.254.169.254",
        True,
    ),
]


@pytest.mark.parametrize(
    ("policy", "host", "blocked"),
    [case[1:] for case in POLICY_CASES],
    ids=[case[0] for case in POLICY_CASES],
)
def test_policy_opt_ins(policy: SsrfPolicy, host: str, blocked: bool) -> None:
    assert classify_host(host, policy).blocked is blocked


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.0.0.5", "private address 10.0.0.5"),
        ("fe80::1%eth0", "link-local address fe80::1"),
        ("::ffff:127.0.0.1", "loopback address 127.0.0.1 (IPv4-mapped ::ffff:7f00:1)"),
        ("not-an-ip", "invalid address not-an-ip"),
        ("127.1", "invalid address 127.1"),
    ],
)
def test_classify_address_blocks(address: str, reason: str) -> None:
    assert classify_address(address) == HostClassification(blocked=True, reason=reason)


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_classify_address_allows_public(address: str) -> None:
    assert classify_address(address).blocked is False


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        (" Example.COM. ", "example.com"),
        ("[::1]", "::1"),
        ("[FE80::1%ETH0].", "fe80::1%eth0"),
        ("a..", "a."),
    ],
)
def test_normalize_hostname(raw: str, normalized: str) -> None:
    assert normalize_hostname(raw) == normalized


def _resolver(answers: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    def resolve(host: str) -> list[str]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return resolve


FAKE_DNS = _resolver(
    {
        "public.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
        "private.example": ["10.0.0.5"],
        "mixed.example": ["93.184.216.34", "192.168.1.7"],
        "rebind.example": ["93.184.216.34", "::ffff:169.254.169.254"],
        "dup.example": ["93.184.216.34", "93.184.216.34"],
        "empty.example": [],
        "intranet.corp": ["10.1.2.3"],
        "linklocal.corp": ["169.254.10.10"],
        "garbage.example": ["not-an-address"],
        "192.168.1.64.nip.io": ["192.168.1.64"],
    }
)

URL_CASES = [
    (
        "public",
        "https://public.example/a",
        DEFAULT_POLICY,
        Verdict(
            False, None, "public.example", ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")
        ),
    ),
    (
        "private answer",
        "http://private.example/",
        DEFAULT_POLICY,
        Verdict(True, "resolves to private address 10.0.0.5", "private.example", ("10.0.0.5",)),
    ),
    (
        "mixed answers",
        "http://mixed.example/",
        DEFAULT_POLICY,
        Verdict(
            True,
            "resolves to private address 192.168.1.7",
            "mixed.example",
            ("93.184.216.34", "192.168.1.7"),
        ),
    ),
    (
        "mapped metadata answer",
        "http://rebind.example/",
        SsrfPolicy(allow_private_network=True),
        Verdict(
            True,
            "resolves to cloud metadata address 169.254.169.254 (IPv4-mapped ::ffff:a9fe:a9fe)",
            "rebind.example",
            ("93.184.216.34", "::ffff:169.254.169.254"),
        ),
    ),
    (
        "deduped answers",
        "http://dup.example/",
        DEFAULT_POLICY,
        Verdict(False, None, "dup.example", ("93.184.216.34",)),
    ),
    (
        "unresolvable",
        "http://nowhere.example/",
        DEFAULT_POLICY,
        Verdict(True, "hostname does not resolve", "nowhere.example", ()),
    ),
    (
        "no answers",
        "http://empty.example/",
        DEFAULT_POLICY,
        Verdict(True, "hostname does not resolve", "empty.example", ()),
    ),
    (
        "garbage answer",
        "http://garbage.example/",
        DEFAULT_POLICY,
        Verdict(
            True,
            "resolves to invalid address not-an-address",
            "garbage.example",
            ("not-an-address",),
        ),
    ),
    (
        "nip.io",
        "http://192.168.1.64.nip.io:8888/x",
        DEFAULT_POLICY,
        Verdict(
            True,
            "resolves to private address 192.168.1.64",
            "192.168.1.64.nip.io",
            ("192.168.1.64",),
        ),
    ),
    (
        "trusted name private answer",
        "http://intranet.corp/",
        SsrfPolicy(allowed_hostnames=("intranet.corp",)),
        Verdict(False, None, "intranet.corp", ("10.1.2.3",)),
    ),
    (
        "trusted name link-local answer",
        "http://linklocal.corp/",
        SsrfPolicy(allowed_hostnames=("linklocal.corp",)),
        Verdict(
            True,
            "resolves to link-local address 169.254.10.10",
            "linklocal.corp",
            ("169.254.10.10",),
        ),
    ),
    (
        "private opt-in",
        "http://private.example/",
        SsrfPolicy(allow_private_network=True),
        Verdict(False, None, "private.example", ("10.0.0.5",)),
    ),
    (
        "ip literal skips dns",
        "http://8.8.8.8/",
        DEFAULT_POLICY,
        Verdict(False, None, "8.8.8.8", ("8.8.8.8",)),
    ),
    (
        "ipv6 literal",
        "http://[2606:4700:4700::1111]:8080/",
        DEFAULT_POLICY,
        Verdict(False, None, "2606:4700:4700::1111", ("2606:4700:4700::1111",)),
    ),
    (
        "hex literal normalised",
        "http://0x7f.1/",
        DEFAULT_POLICY,
        Verdict(True, "loopback address 127.0.0.1", "127.0.0.1", ()),
    ),
    (
        "userinfo host",
        "http://evil@127.0.0.1/",
        DEFAULT_POLICY,
        Verdict(True, "loopback address 127.0.0.1", "127.0.0.1", ()),
    ),
    (
        "userinfo looks like ip",
        "http://127.0.0.1@example.com/",
        DEFAULT_POLICY,
        Verdict(True, "hostname does not resolve", "example.com", ()),
    ),
    (
        "blocked name before dns",
        "http://localhost:8080/",
        DEFAULT_POLICY,
        Verdict(True, "blocked hostname localhost", "localhost", ()),
    ),
    (
        "unsupported scheme",
        "ftp://public.example/",
        DEFAULT_POLICY,
        Verdict(True, "unsupported scheme ftp", None, ()),
    ),
    (
        "file scheme",
        "file:///etc/passwd",
        DEFAULT_POLICY,
        Verdict(True, "unsupported scheme file", None, ()),
    ),
    ("invalid url", "not a url", DEFAULT_POLICY, Verdict(True, "invalid URL", None, ())),
    (
        "port out of range",
        "http://public.example:99999/",
        DEFAULT_POLICY,
        Verdict(True, "invalid URL", None, ()),
    ),
    (
        "zone id rejected",
        "http://[fe80::1%25lo0]/",
        DEFAULT_POLICY,
        Verdict(True, "invalid URL", None, ()),
    ),
    ("nul byte", "http://exa\x00mple.com/", DEFAULT_POLICY, Verdict(True, "invalid URL", None, ())),
    (
        "lone surrogate",
        "http://a\ud800.example/",
        DEFAULT_POLICY,
        Verdict(True, "invalid URL", None, ()),
    ),
]


@pytest.mark.parametrize(
    ("url", "policy", "expected"),
    [case[1:] for case in URL_CASES],
    ids=[case[0] for case in URL_CASES],
)
def test_check_url_with_fake_resolver(url: str, policy: SsrfPolicy, expected: Verdict) -> None:
    assert check_url(url, policy, resolve=FAKE_DNS) == expected


@pytest.mark.parametrize(
    ("url", "policy", "expected"),
    [case[1:] for case in URL_CASES],
    ids=[case[0] for case in URL_CASES],
)
async def test_check_url_async_gives_the_same_verdicts(
    url: str, policy: SsrfPolicy, expected: Verdict
) -> None:
    assert await check_url_async(url, policy, resolve=FAKE_DNS) == expected


async def test_check_url_async_asks_dns_off_the_loop_only_for_names() -> None:
    loop_thread = threading.get_ident()
    asked: list[tuple[str, bool]] = []

    def resolve(host: str) -> list[str]:
        asked.append((host, threading.get_ident() == loop_thread))
        return ["93.184.216.34"]

    allow_loopback = SsrfPolicy(allow_private_network=True)
    assert not (await check_url_async("http://127.0.0.1:8080/", allow_loopback, resolve)).blocked
    assert (await check_url_async("http://10.0.0.5/", DEFAULT_POLICY, resolve)).blocked
    verdict = await check_url_async("http://public.example/", DEFAULT_POLICY, resolve)
    assert verdict.addresses == ("93.184.216.34",)
    assert asked == [("public.example", False)]


def test_check_url_without_resolver_skips_dns() -> None:
    assert check_url("https://public.example/") == Verdict(False, None, "public.example", ())


def test_check_url_resolver_unicode_error_means_unresolvable() -> None:
    def broken(host: str) -> list[str]:
        raise UnicodeError("label too long")

    assert check_url("http://x.example/", resolve=broken).reason == "hostname does not resolve"


def test_system_resolve_loopback_literal_and_failure() -> None:
    assert system_resolve("127.0.0.1") == ["127.0.0.1"]
    with pytest.raises(OSError):
        system_resolve("a" * 70 + ".invalid")


def test_policy_round_trips_camel_case_dict() -> None:
    data: dict[str, object] = {
        "allowedHostnames": ["intranet.corp", "*.svc.example"],
        "allowPrivateNetwork": True,
        "allowRfc2544BenchmarkRange": False,
        "allowIpv6UniqueLocalRange": True,
    }
    policy = SsrfPolicy.from_dict(data)
    assert policy == SsrfPolicy(
        allowed_hostnames=("intranet.corp", "*.svc.example"),
        allow_private_network=True,
        allow_ipv6_unique_local_range=True,
    )
    assert policy.to_dict() == data
    assert SsrfPolicy.from_dict({}) == DEFAULT_POLICY


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"allowPrivate": True}, "unknown SSRF policy key 'allowPrivate'"),
        ({"allowPrivateNetwork": "yes"}, "'allowPrivateNetwork' must be a boolean"),
        ({"allowRfc2544BenchmarkRange": 1}, "'allowRfc2544BenchmarkRange' must be a boolean"),
        ({"allowedHostnames": "a.example"}, "'allowedHostnames' must be a list of strings"),
        ({"allowedHostnames": [3]}, "'allowedHostnames' has a bad entry 3"),
        ({"allowedHostnames": ["*."]}, "'allowedHostnames' has a bad entry '*.'"),
        ({"allowedHostnames": [" "]}, "'allowedHostnames' has a bad entry ' '"),
    ],
    ids=[
        "unknown key",
        "string flag",
        "int flag",
        "names not list",
        "non-string name",
        "bare wildcard",
        "blank name",
    ],
)
def test_policy_from_dict_rejects_bad_values(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        SsrfPolicy.from_dict(data)
