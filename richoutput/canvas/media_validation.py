"""The one media-reference validator, shared by ``MEDIA:`` lines and structured ``mediaUrls``.

Remote references must be public ``https:`` URLs without credentials whose host passes the
SSRF host classifier (plus the mainline media rule: the host needs a dot, so single labels
and IPv6 literals are refused). Local references must be safe paths: absolute, ``./``,
``~/``, a drive or UNC root, or workspace-relative with a slash; no ``..`` segment.

>>> validate_media_reference("https://cdn.example.com/a.png").ok
True
>>> validate_media_reference("https://127.1/a.png").reason
'blocked host: loopback address 127.0.0.1'
>>> validate_media_reference("../secret.png").reason
'path traversal'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import ada_url

from enrichment.pipeline.net.ssrf import DEFAULT_POLICY, SsrfPolicy, classify_host

MAX_REFERENCE_LENGTH = 4096

_FILE_PREFIX = re.compile(r"file:(?://)?", re.IGNORECASE)
_REMOTE_PREFIX = re.compile(r"https?://", re.IGNORECASE)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_DRIVE_ROOT = re.compile(r"[A-Za-z]:[\\/]")
_BARE_FILENAME = re.compile(r"[^\\/]+\.\w{1,10}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WHITESPACE = re.compile(r"\s")
_PATH_ROOTS = ("/", "./", "~/", "~\\", "\\\\")
_SEPARATORS = re.compile(r"[\\/]")


@dataclass(frozen=True)
class MediaCheck:
    ok: bool
    reason: str | None  # None when ok


OK = MediaCheck(True, None)


def _rejected(reason: str) -> MediaCheck:
    return MediaCheck(False, reason)


def starts_with_path_root(value: str) -> bool:
    """Roots that start a local path, traversal roots included (for re-joining fragments)."""
    return value.startswith(("/", "~", "./", "../", "\\\\")) or bool(_DRIVE_ROOT.match(value))


def has_scheme(value: str) -> bool:
    return bool(_SCHEME.match(value)) and not _DRIVE_ROOT.match(value)


def looks_like_local_path(value: str) -> bool:
    """Path-shaped, safe or not: such rejected lines are removed, never echoed."""
    if _FILE_PREFIX.match(value):
        return True
    if starts_with_path_root(value) or value == "..":
        return True
    return ("/" in value or "\\" in value) and not has_scheme(value)


def _check_remote(reference: str, policy: SsrfPolicy) -> MediaCheck:
    try:
        url = ada_url.URL(reference)
    except ValueError:
        return _rejected("unparseable URL")
    if url.protocol != "https:":
        return _rejected("only https URLs are allowed")
    if url.username or url.password:
        return _rejected("credentials in URL")
    if url.host_type == ada_url.HostType.IPV6:
        return _rejected("IPv6 literal host")
    host = url.hostname.rstrip(".")
    if not host or "." not in host:
        return _rejected(f"single-label host {host!r}")
    if "" in host.split("."):
        return _rejected(f"empty label in host {host!r}")
    verdict = classify_host(host, policy)
    if verdict.blocked:
        return _rejected(f"blocked host: {verdict.reason}")
    return OK


def _check_local(path: str, *, allow_bare_filename: bool) -> MediaCheck:
    segments = _SEPARATORS.split(path)
    if path == ".." or path.startswith(("../", "..\\")) or ".." in segments:
        return _rejected("path traversal")
    if path.startswith("~") and not path.startswith(("~/", "~\\")):
        return _rejected("unsupported home directory form")
    if path.startswith(_PATH_ROOTS) or _DRIVE_ROOT.match(path):
        return OK
    if ("/" in path or "\\" in path) and not has_scheme(path):
        return OK
    if _BARE_FILENAME.fullmatch(path) and not has_scheme(path):
        return OK if allow_bare_filename else _rejected("bare filename")
    if has_scheme(path):
        return _rejected("unsupported scheme")
    return _rejected("not a media reference")


def validate_media_reference(
    reference: str,
    *,
    allow_spaces: bool = False,
    allow_bare_filename: bool = False,
    policy: SsrfPolicy = DEFAULT_POLICY,
) -> MediaCheck:
    """Accept or reject one media reference; the reason is short and stable.

    ``allow_spaces`` is for references taken from quotes, re-joined spaced paths and
    structured fields; ``allow_bare_filename`` only for the whole-payload fallback."""
    if not reference:
        return _rejected("empty reference")
    if len(reference) > MAX_REFERENCE_LENGTH:
        return _rejected("reference too long")
    if _CONTROL.search(reference):
        return _rejected("control character")
    if not allow_spaces and _WHITESPACE.search(reference):
        return _rejected("whitespace in reference")
    if _REMOTE_PREFIX.match(reference):
        return _check_remote(reference, policy)
    file_prefix = _FILE_PREFIX.match(reference)
    path = reference[file_prefix.end() :] if file_prefix else reference
    if not path:
        return _rejected("empty reference")
    return _check_local(path, allow_bare_filename=allow_bare_filename)
