"""Special-use IP ranges and IPv4-in-IPv6 embeddings, as plain facts (no policy).

Python's ``ipaddress.is_private``/``is_global`` use different reserved sets and never
unwrap 6to4, Teredo, ISATAP or NAT64, so the tables here are explicit. Ranges are
checked in table order and the first match names the class.

>>> ipv4_range_label(parse_ipv4("100.64.0.1"))
'carrier-grade NAT'
>>> ipv4_range_label(parse_ipv4("100.128.0.0")) is None
True
>>> embedded_ipv4(ipaddress.IPv6Address("2001::f7f7:f7f7"))
(IPv4Address('8.8.8.8'), 'Teredo')
"""

from __future__ import annotations

import ipaddress
import re
from ipaddress import IPv4Address, IPv6Address

LOOPBACK = "loopback"
PRIVATE = "private"
LINK_LOCAL = "link-local"
CARRIER_GRADE_NAT = "carrier-grade NAT"
UNSPECIFIED = "unspecified"
MULTICAST = "multicast"
BROADCAST = "broadcast"
RESERVED = "reserved"
DOCUMENTATION = "documentation"
RFC2544_BENCHMARK = "RFC 2544 benchmark"
UNIQUE_LOCAL = "unique-local"
SITE_LOCAL = "site-local"
DISCARD = "discard-only"
BENCHMARK_V6 = "benchmarking"
ORCHID = "ORCHID"

_Range = tuple[int, int, str | None]  # first, last, label (None = public carve-out)


def _v4(cidr: str, label: str | None) -> _Range:
    network = ipaddress.IPv4Network(cidr)
    return int(network.network_address), int(network.broadcast_address), label


def _v6(cidr: str, label: str | None) -> _Range:
    network = ipaddress.IPv6Network(cidr)
    return int(network.network_address), int(network.broadcast_address), label


IPV4_RANGES: tuple[_Range, ...] = (
    _v4("0.0.0.0/8", UNSPECIFIED),
    _v4("10.0.0.0/8", PRIVATE),
    _v4("100.64.0.0/10", CARRIER_GRADE_NAT),
    _v4("127.0.0.0/8", LOOPBACK),
    _v4("169.254.0.0/16", LINK_LOCAL),
    _v4("172.16.0.0/12", PRIVATE),
    _v4("192.0.0.0/24", RESERVED),
    _v4("192.0.2.0/24", DOCUMENTATION),
    _v4("192.88.99.0/24", RESERVED),
    _v4("192.168.0.0/16", PRIVATE),
    _v4("198.18.0.0/15", RFC2544_BENCHMARK),
    _v4("198.51.100.0/24", DOCUMENTATION),
    _v4("203.0.113.0/24", DOCUMENTATION),
    _v4("224.0.0.0/4", MULTICAST),
    _v4("255.255.255.255/32", BROADCAST),  # before 240/4 so it gets its own name
    _v4("240.0.0.0/4", RESERVED),
)

# Order matters: the 2001::/23 carve-outs (Teredo, AMT, AS112, drone IDs) are globally
# reachable per IANA and must win over the "reserved" remainder of 2001::/23.
IPV6_RANGES: tuple[_Range, ...] = (
    _v6("::/128", UNSPECIFIED),
    _v6("::1/128", LOOPBACK),
    _v6("fe80::/10", LINK_LOCAL),
    _v6("fec0::/10", SITE_LOCAL),
    _v6("fc00::/7", UNIQUE_LOCAL),
    _v6("ff00::/8", MULTICAST),
    _v6("100::/64", DISCARD),
    _v6("2001::/32", None),  # Teredo: judged by the embedded client address
    _v6("2001:2::/48", BENCHMARK_V6),
    _v6("2001:3::/32", None),  # AMT
    _v6("2001:4:112::/48", None),  # AS112-v6
    _v6("2001:10::/28", ORCHID),
    _v6("2001:20::/28", ORCHID),
    _v6("2001:30::/28", None),  # drone remote ID
    _v6("2001:db8::/32", DOCUMENTATION),
    _v6("2001::/23", RESERVED),
    _v6("3fff::/20", DOCUMENTATION),
    _v6("5f00::/16", RESERVED),  # SRv6 SIDs, not globally reachable
)


def _label(value: int, table: tuple[_Range, ...]) -> str | None:
    for first, last, label in table:
        if first <= value <= last:
            return label
    return None


def ipv4_range_label(address: IPv4Address) -> str | None:
    """Class name of a special-use IPv4 address, or None when it is public unicast."""
    return _label(int(address), IPV4_RANGES)


def ipv6_range_label(address: IPv6Address) -> str | None:
    """Class name of a special-use IPv6 range (embedding prefixes excluded), or None."""
    return _label(int(address), IPV6_RANGES)


_LOW32 = 0xFFFFFFFF


def embedded_ipv4(address: IPv6Address) -> tuple[IPv4Address, str] | None:
    """The IPv4 address an IPv6 address carries, with the name of the embedding form."""
    value = int(address)
    high96 = value >> 32
    low32 = IPv4Address(value & _LOW32)
    if high96 == 0xFFFF:
        return low32, "IPv4-mapped"
    if high96 == 0xFFFF << 16:
        return low32, "IPv4-translated"
    if high96 == 0x0064FF9B << 64:
        return low32, "NAT64"
    if value >> 80 == 0x0064FF9B0001:
        return low32, "local NAT64"
    if high96 == 0 and value > 1:
        return low32, "IPv4-compatible"
    if value >> 112 == 0x2002:
        return IPv4Address((value >> 80) & _LOW32), "6to4"
    if value >> 96 == 0x20010000:
        # Teredo stores the client address with every bit inverted.
        return IPv4Address(low32_inverted(value)), "Teredo"
    if (value >> 48) & 0xFCFF == 0 and (value >> 32) & 0xFFFF == 0x5EFE:
        return low32, "ISATAP"
    return None


def low32_inverted(value: int) -> int:
    return (value & _LOW32) ^ _LOW32


_CANONICAL_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
)


def parse_ipv4(text: str) -> IPv4Address | None:
    """Strict dotted-decimal IPv4: four decimal parts, no leading zeros, each 0-255."""
    if _CANONICAL_IPV4.fullmatch(text) is None:
        return None
    return IPv4Address(text)


def parse_ipv6(text: str) -> IPv6Address | None:
    """IPv6 without zone id; an embedded dotted quad must be canonical."""
    try:
        return IPv6Address(text)
    except ValueError:
        return None


_LEGACY_PART = re.compile(r"\d+|0[xX][0-9a-zA-Z]*")


def looks_like_ipv4_literal(text: str) -> bool:
    """True for numeric-looking hosts that are not canonical dotted decimal.

    Covers the legacy forms WHATWG or inet_aton would read as an address
    (``0177.0.0.1``, ``0x7f.1``, ``127.1``, ``2130706433``) plus broken ones
    (``999.1.1.1``, ``08.0.0.1``, ``127..0.1``, ``a..b.example``): 1-4 dot-separated
    parts where a part is empty or every part is digits or ``0x``-prefixed.
    """
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return False
    if any(part == "" for part in parts):
        return True
    return all(_LEGACY_PART.fullmatch(part) is not None for part in parts)
