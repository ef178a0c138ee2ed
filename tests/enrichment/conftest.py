from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

SUMMARIZER = str(Path(__file__).with_name("summarizer.py"))


def summarizer_config(**links: Any) -> dict[str, Any]:
    """A config whose link model is the local test summarizer, with 127.0.0.1 allowed."""
    return {
        "tools": {
            "links": {
                "models": [
                    {"type": "cli", "command": sys.executable, "args": [SUMMARIZER, "{{LinkUrl}}"]}
                ],
                **links,
            },
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        }
    }


@pytest.fixture
def summarizer(db) -> dict[str, Any]:
    from enrichment.config.changes import config_replace

    document = summarizer_config()
    config_replace(document=document)
    return document
