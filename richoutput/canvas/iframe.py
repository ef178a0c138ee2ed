"""How the dashboard frames a canvas block (SPEC §8, notes §9).

>>> canvas_iframe_attrs({"type": "canvas", "preview": {"url": "/__openclaw__/canvas/x/../y"}})
IframeAttrs(src='/__openclaw__/canvas/y', sandbox='allow-scripts', height=320, title='Canvas', refused=None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ada_url

CANVAS_PATH = "/__openclaw__/canvas"
DEFAULT_HEIGHT = 320
MIN_HEIGHT = 160
MAX_HEIGHT = 1200
DEFAULT_TITLE = "Canvas"
SANDBOX_BY_MODE = {
    "default": "allow-scripts",
    "scripts": "allow-scripts",
    "strict": "",
    "trusted": "allow-scripts allow-same-origin",
}
# Relative URLs are resolved against a base that can never be a real origin, so "same
# origin" means "relative, or spelled with this impossible host".
_DUMMY_BASE = "https://controlui.invalid/"
_DUMMY_ORIGIN = "https://controlui.invalid"


@dataclass(frozen=True)
class IframeAttrs:
    src: str | None
    sandbox: str
    height: int
    title: str
    refused: str | None = None  # why there is no ``src``: the page shows it, not a blank frame


def iframe_refusal(url: object, *, allow_external: bool = False) -> str | None:
    """Why ``iframe_src`` gives no ``src`` for ``url`` (None when it gives one).

    >>> iframe_refusal("https://evil.example/x")
    'external embed URLs are not allowed in the dashboard; only canvas documents (/__openclaw__/canvas/…) are framed'
    """
    if iframe_src(url, allow_external=allow_external) is not None:
        return None
    if not isinstance(url, str) or not url.strip():
        return "the embed has no URL"
    shown = url.strip() if len(url.strip()) <= 120 else url.strip()[:119] + "…"
    try:
        resolved = ada_url.URL(url.strip(), _DUMMY_BASE)
    except ValueError:
        return f"the embed URL cannot be parsed ({shown})"
    if resolved.origin == _DUMMY_ORIGIN:
        return f"only canvas documents (/__openclaw__/canvas/…) are framed, not {resolved.pathname}"
    if resolved.protocol in ("https:", "http:"):
        # The URL itself is not repeated: the page never shows a refused target.
        return (
            "external embed URLs are not allowed in the dashboard; only canvas documents "
            "(/__openclaw__/canvas/…) are framed"
        )
    return f"only http(s) and canvas URLs are framed, not {resolved.protocol}"


def iframe_src(url: object, *, allow_external: bool = False) -> str | None:
    """Same-origin canvas paths (normalised, as path+query+fragment); external http(s)
    only when allowed; anything else (``javascript:``, ``data:``, other paths) -> None."""
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        resolved = ada_url.URL(url.strip(), _DUMMY_BASE)
    except ValueError:
        return None
    if resolved.origin == _DUMMY_ORIGIN:
        path = resolved.pathname
        if path == CANVAS_PATH or path.startswith(CANVAS_PATH + "/"):
            return path + resolved.search + resolved.hash
        return None
    if allow_external and resolved.protocol in ("https:", "http:"):
        return resolved.href
    return None


def iframe_sandbox(sandbox_mode: str, ceiling: object = None) -> str:
    """The configured mode, lowered (never raised) by a block's own ``sandbox`` ceiling."""
    if sandbox_mode not in SANDBOX_BY_MODE:
        raise ValueError(f"unknown embed sandbox mode {sandbox_mode!r}")
    sandbox = SANDBOX_BY_MODE[sandbox_mode]
    if ceiling == "strict":
        return ""
    if ceiling == "scripts":
        return "allow-scripts" if sandbox else ""
    return sandbox


def iframe_height(preferred: object) -> int:
    """``preferredHeight`` truncated and clamped to 160-1200; 320 when absent or not finite."""
    if isinstance(preferred, bool) or not isinstance(preferred, int | float):
        return DEFAULT_HEIGHT
    if not math.isfinite(preferred):
        return DEFAULT_HEIGHT
    return max(MIN_HEIGHT, min(MAX_HEIGHT, int(preferred)))


def canvas_iframe_attrs(
    block: dict[str, object], *, allow_external: bool = False, sandbox_mode: str = "default"
) -> IframeAttrs:
    preview = block.get("preview")
    fields: dict[str, object] = preview if isinstance(preview, dict) else {}
    title = fields.get("title")
    label = title.strip() if isinstance(title, str) and title.strip() else DEFAULT_TITLE
    return IframeAttrs(
        src=iframe_src(fields.get("url"), allow_external=allow_external),
        sandbox=iframe_sandbox(sandbox_mode, fields.get("sandbox")),
        height=iframe_height(fields.get("preferredHeight")),
        title=label,
        refused=iframe_refusal(fields.get("url"), allow_external=allow_external),
    )
