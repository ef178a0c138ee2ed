"""SSRF guard: decide whether a host, an address or a URL may be fetched.

Blocks local names (``localhost``, ``*.local`` ...), every special-use IPv4/IPv6 range
(see ``ipranges``), IPv4 carried inside IPv6 (mapped, NAT64, 6to4, Teredo, ISATAP ...),
numeric host spellings that are not canonical dotted decimal, and cloud metadata
endpoints, which stay blocked under every policy opt-in.

>>> classify_host("[::ffff:127.0.0.1]")
HostClassification(blocked=True, reason='loopback address 127.0.0.1 (IPv4-mapped ::ffff:7f00:1)')
>>> classify_host("127.0.0.1", SsrfPolicy(allow_private_network=True)).blocked
False
>>> check_url("http://evil@10.0.0.5:8080/x").reason
'private address 10.0.0.5'
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address

import ada_url

from enrichment.pipeline.net import ipranges

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

BLOCKED_NAMES = frozenset({"localhost", "localhost.localdomain"})
BLOCKED_SUFFIXES = (".localhost", ".local")
# `.internal` stays blocked under allow_private_network: cloud providers use it for
# metadata-like names. Only an explicit allowed_hostnames entry lets one through.
INTERNAL_SUFFIX = ".internal"
METADATA_NAMES = frozenset({"metadata.google.internal"})
METADATA_ADDRESSES = frozenset(
    {IPv4Address("169.254.169.254"), IPv4Address("100.100.100.200"), IPv6Address("fd00:ec2::254")}
)


@dataclass(frozen=True)
class SsrfPolicy:
    """Opt-ins for intranet users and tests. The default blocks everything special."""

    allowed_hostnames: tuple[str, ...] = ()  # exact names or "*.suffix" (never the apex)
    allow_private_network: bool = False
    allow_rfc2544_benchmark_range: bool = False
    allow_ipv6_unique_local_range: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> SsrfPolicy:
        """Build from OpenClaw camelCase keys; ValueError names the bad key or type."""
        unknown = [key for key in data if key not in _FLAG_KEYS and key != "allowedHostnames"]
        if unknown:
            raise ValueError(f"unknown SSRF policy key {unknown[0]!r}")
        flags: dict[str, bool] = {}
        for key, field in _FLAG_KEYS.items():
            value = data.get(key, False)
            if not isinstance(value, bool):
                raise ValueError(f"SSRF policy key {key!r} must be a boolean")
            flags[field] = value
        return cls(allowed_hostnames=_parse_hostnames(data.get("allowedHostnames", [])), **flags)

    def to_dict(self) -> dict[str, object]:
        result: dict[str, object] = {"allowedHostnames": list(self.allowed_hostnames)}
        for key, field in _FLAG_KEYS.items():
            result[key] = getattr(self, field)
        return result


_FLAG_KEYS = {
    "allowPrivateNetwork": "allow_private_network",
    "allowRfc2544BenchmarkRange": "allow_rfc2544_benchmark_range",
    "allowIpv6UniqueLocalRange": "allow_ipv6_unique_local_range",
}


def _parse_hostnames(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError("SSRF policy key 'allowedHostnames' must be a list of strings")
    names: list[str] = []
    bad: list[object] = []
    for item in value:
        if not isinstance(item, str) or not _is_hostname_pattern(item):
            bad.append(item)
        else:
            names.append(item.strip())
    # Every bad entry at once: fixing a pasted list one error per save is slow.
    if len(bad) == 1:
        raise ValueError(f"SSRF policy key 'allowedHostnames' has a bad entry {bad[0]!r}")
    if bad:
        listed = ", ".join(repr(item) for item in bad)
        raise ValueError(f"SSRF policy key 'allowedHostnames' has {len(bad)} bad entries: {listed}")
    return tuple(names)


def _is_hostname_pattern(entry: str) -> bool:
    pattern = normalize_hostname(entry)
    name = pattern.removeprefix("*.")
    return bool(name) and "*" not in name


DEFAULT_POLICY = SsrfPolicy()


@dataclass(frozen=True)
class HostClassification:
    blocked: bool
    reason: str | None


ALLOWED = HostClassification(blocked=False, reason=None)


def _blocked(reason: str) -> HostClassification:
    return HostClassification(blocked=True, reason=reason)


def normalize_hostname(host: str) -> str:
    """Trim, lower-case, drop one trailing dot, then unwrap ``[...]``.

    >>> normalize_hostname(" [FE80::1%ETH0]. ")
    'fe80::1%eth0'
    """
    name = host.strip(JS_WHITESPACE).lower().removesuffix(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name


def is_allowed_hostname(name: str, policy: SsrfPolicy) -> bool:
    """Exact match, or ``*.suffix`` matching a strict subdomain (never the apex)."""
    for entry in policy.allowed_hostnames:
        pattern = normalize_hostname(entry)
        if pattern.startswith("*."):
            if name.endswith(pattern[1:]) and len(name) > len(pattern) - 1:
                return True
        elif pattern and pattern == name:
            return True
    return False


def classify_host(host: str, policy: SsrfPolicy = DEFAULT_POLICY) -> HostClassification:
    """Classify a hostname or IP literal as written in a URL. No DNS."""
    name = normalize_hostname(host)
    if not name:
        return _blocked("empty hostname")
    if ":" not in name and _UNUSUAL_HOST_CHARACTER.search(name):
        # Percent-escapes and IDNA mapping (fullwidth dots, circled letters) are what a
        # WHATWG client would dial, so judge that spelling too; junk is invalid.
        whatwg = _whatwg_host(name)
        if whatwg is None:
            return _blocked(f"invalid hostname {name}")
        if whatwg != name:
            verdict = classify_host(whatwg, policy)
            if verdict.blocked:
                return verdict
    return _classify_normalized(name, policy, trusted=is_allowed_hostname(name, policy))


_UNUSUAL_HOST_CHARACTER = re.compile(r"[^a-z0-9._-]")


def _whatwg_host(name: str) -> str | None:
    try:
        return normalize_hostname(ada_url.URL(f"http://{name}/").hostname)
    except (ValueError, UnicodeError):
        return None


def _classify_normalized(name: str, policy: SsrfPolicy, *, trusted: bool) -> HostClassification:
    if name in METADATA_NAMES:
        return _blocked(f"cloud metadata hostname {name}")
    if ":" in name:
        address, _, _zone = name.partition("%")
        ipv6 = ipranges.parse_ipv6(address)
        if ipv6 is None:
            return _blocked(f"invalid IPv6 address {name}")
        return _classify_ip(ipv6, policy, trusted=trusted)
    ipv4 = ipranges.parse_ipv4(name)
    if ipv4 is not None:
        return _classify_ip(ipv4, policy, trusted=trusted)
    if ipranges.looks_like_ipv4_literal(name):
        return _blocked(f"non-canonical IPv4 literal {name}")
    if trusted:
        return ALLOWED
    if name.endswith(INTERNAL_SUFFIX):
        return _blocked(f"blocked hostname {name}")
    if policy.allow_private_network:
        return ALLOWED
    if name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES):
        return _blocked(f"blocked hostname {name}")
    return ALLOWED


def classify_address(address: str, policy: SsrfPolicy = DEFAULT_POLICY) -> HostClassification:
    """Classify an IP address string (for example a DNS answer); non-IPs are blocked."""
    ip = _parse_address(address)
    if ip is None:
        return _blocked(f"invalid address {address}")
    return _classify_ip(ip, policy, trusted=False)


def _parse_address(address: str) -> IPv4Address | IPv6Address | None:
    text = normalize_hostname(address).partition("%")[0]
    if ":" in text:
        return ipranges.parse_ipv6(text)
    return ipranges.parse_ipv4(text)


def _classify_ip(
    ip: IPv4Address | IPv6Address, policy: SsrfPolicy, *, trusted: bool
) -> HostClassification:
    """Trusted = named in allowed_hostnames: private is fine, link-local never is."""
    embedded = ipranges.embedded_ipv4(ip) if isinstance(ip, IPv6Address) else None
    if ip in METADATA_ADDRESSES:
        return _blocked(f"cloud metadata address {ip}")
    if embedded is not None and embedded[0] in METADATA_ADDRESSES:
        return _blocked(f"cloud metadata address {embedded[0]} ({embedded[1]} {ip})")
    if isinstance(ip, IPv4Address):
        label = ipranges.ipv4_range_label(ip)
    else:
        label = ipranges.ipv6_range_label(ip)
    if label is None and embedded is not None:
        inner = _classify_ip(embedded[0], policy, trusted=trusted)
        if inner.blocked:
            return _blocked(f"{inner.reason} ({embedded[1]} {ip})")
        return ALLOWED
    if label is None or _label_allowed(label, ip, policy, trusted=trusted):
        return ALLOWED
    return _blocked(f"{label} address {ip}")


def _label_allowed(
    label: str, ip: IPv4Address | IPv6Address, policy: SsrfPolicy, *, trusted: bool
) -> bool:
    if policy.allow_private_network:
        return True
    if label == ipranges.RFC2544_BENCHMARK and policy.allow_rfc2544_benchmark_range:
        return True
    if label == ipranges.UNIQUE_LOCAL and policy.allow_ipv6_unique_local_range:
        return True
    return trusted and label != ipranges.LINK_LOCAL


Resolver = Callable[[str], list[str]]


def system_resolve(host: str) -> list[str]:
    """All A/AAAA answers for ``host``, deduped, in resolver order. Raises OSError."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except UnicodeError as error:  # IDNA failures surface as UnicodeError, not gaierror
        raise socket.gaierror(str(error)) from error
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


UNRESOLVED = "hostname does not resolve"
# Messages about a refused address start like the reference's (``Blocked: resolves to
# private/internal IP address``), in the fetcher's error, the script's stderr and the
# link run's pseudo-attempt alike.
BLOCKED_PREFIX = "Blocked: "


def blocked_message(reason: str) -> str:
    """``'resolves to loopback address 127.0.0.1'`` -> ``'Blocked: resolves to loopback
    address 127.0.0.1'``; ``'blocked hostname a.local'`` -> ``'Blocked hostname a.local'``
    (no doubled word). A name that does not resolve was not refused, so it stays as is."""
    if reason == UNRESOLVED:
        return reason
    if reason.startswith("blocked "):
        return "B" + reason[1:]
    return f"{BLOCKED_PREFIX}{reason}"


def is_blocked_message(message: str) -> bool:
    """Whether ``message`` (a fetch error) is a refusal by the SSRF policy."""
    return message.startswith("Blocked")


def blocked_reason(message: str) -> str:
    """The policy's own words inside a refusal: ``'Blocked: private address 10.0.0.5'`` ->
    ``'private address 10.0.0.5'``, ``'Blocked hostname a.local'`` -> ``'blocked hostname
    a.local'``."""
    if message.startswith(BLOCKED_PREFIX):
        return message.removeprefix(BLOCKED_PREFIX)
    return "b" + message[1:] if message.startswith("Blocked") else message


@dataclass(frozen=True)
class Verdict:
    blocked: bool
    reason: str | None
    host: str | None
    addresses: tuple[str, ...]


def check_url(
    url: str, policy: SsrfPolicy = DEFAULT_POLICY, resolve: Resolver | None = None
) -> Verdict:
    """Parse ``url`` with the WHATWG parser, classify its host, then every DNS answer.

    >>> check_url("http://a.example/", resolve=lambda host: ["93.184.216.34", "10.0.0.5"])
    Verdict(blocked=True, reason='resolves to private address 10.0.0.5', host='a.example', addresses=('93.184.216.34', '10.0.0.5'))
    """
    try:
        parsed = ada_url.URL(url)
        scheme, hostname = parsed.protocol, parsed.hostname
    except (ValueError, UnicodeError):
        return Verdict(blocked=True, reason="invalid URL", host=None, addresses=())
    if scheme not in ("http:", "https:"):
        reason = f"unsupported scheme {scheme.removesuffix(':')}"
        return Verdict(blocked=True, reason=reason, host=None, addresses=())
    host = normalize_hostname(hostname)
    verdict = classify_host(host, policy)
    if verdict.blocked:
        return Verdict(blocked=True, reason=verdict.reason, host=host, addresses=())
    if _parse_address(host) is not None:
        return Verdict(blocked=False, reason=None, host=host, addresses=(host,))
    if resolve is None:
        return Verdict(blocked=False, reason=None, host=host, addresses=())
    return _check_resolved(host, policy, resolve)


async def check_url_async(
    url: str, policy: SsrfPolicy = DEFAULT_POLICY, resolve: Resolver | None = None
) -> Verdict:
    """``check_url`` without blocking the event loop: DNS (``resolve``) runs in a thread.

    A URL the guard decides without asking DNS — blocked by its text, or an IP literal
    (``check_url`` never calls ``resolve`` for either) — is decided here on the loop: the same
    verdict, without a thread hop per check.
    """
    verdict = check_url(url, policy, None)
    if verdict.blocked or verdict.addresses or resolve is None:
        return verdict
    return await asyncio.to_thread(check_url, url, policy, resolve)


def _check_resolved(host: str, policy: SsrfPolicy, resolve: Resolver) -> Verdict:
    try:
        addresses = tuple(dict.fromkeys(resolve(host)))
    except (OSError, ValueError):
        addresses = ()
    if not addresses:
        return Verdict(blocked=True, reason=UNRESOLVED, host=host, addresses=())
    trusted = is_allowed_hostname(host, policy)
    for address in addresses:
        ip = _parse_address(address)
        answer = (
            _blocked(f"invalid address {address}")
            if ip is None
            else _classify_ip(ip, policy, trusted=trusted)
        )
        if answer.blocked:
            reason = f"resolves to {answer.reason}"
            return Verdict(blocked=True, reason=reason, host=host, addresses=addresses)
    return Verdict(blocked=False, reason=None, host=host, addresses=addresses)
