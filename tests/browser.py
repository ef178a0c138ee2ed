"""Headless Debian chromium through Playwright's sync API, shared by the browser tests.

Never a downloaded browser: ``make browser`` (called by ``make test``) installs Debian's
``chromium``. Without it a local run skips the browser tests; CI fails instead.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
# Without the background-networking flags chromium keeps dialling Google on this closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def layout_variants(names: Iterable[str], *, on_every_backend: str) -> list[Any]:
    """A page sweep's layout variants (sizes, colour schemes) as ``parametrize`` values.

    The layout of a page cannot differ with ``DATABASE_URL`` or ``REDIS_URL``: only the
    variant ``on_every_backend`` runs in .ci/run's PostgreSQL and Redis pass (so every page
    is still visited with the workers and the Redis channel layer, errors and failed requests
    checked); the others are marked ``backend_independent`` and run in the embedded pass.
    """
    names = list(names)
    if on_every_backend not in names:
        raise ValueError(f"{on_every_backend!r} is none of the variants {names}")
    return [
        pytest.param(
            name, marks=() if name == on_every_backend else pytest.mark.backend_independent
        )
        for name in names
    ]


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless browser, closed afterwards."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing; CI needs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def save_screenshot(page: Any, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    page.screenshot(path=str(path), full_page=full_page)
    return path


def wait_until(check: Callable[[], bool], *, timeout: float = 15.0, what: str = "") -> None:
    """Poll ``check`` from the test side until it holds. Playwright's ``wait_for_function``
    evaluates its string with ``eval`` in the page once it has to poll, which the site's
    Content-Security-Policy (``script-src 'self'``) rightly refuses."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or check}")
        time.sleep(0.1)
