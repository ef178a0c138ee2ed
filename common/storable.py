"""Make text the database can hold out of text that came from outside.

A fetched page, a CLI's output or an extracted PDF may contain NUL characters or lone
surrogates. SQLite stores them; PostgreSQL refuses NUL in ``text`` and ``jsonb`` and psycopg
cannot encode a lone surrogate, so one such page used to fail the run's final save and leave
the run ``running``. The decision log keeps such text with each offending character
replaced by U+FFFD (the Unicode replacement character), so the reader sees where something
was dropped:

>>> storable_text("a\\x00b\\udc00c")
'a\\ufffdb\\ufffdc'

Input a client typed (API bodies, WebSocket frames) is refused instead, with the field named
(``server.input_guard``); this module is for what the pipeline produced.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def storable_json(value: Any) -> Any:
    """``value`` (a JSON-shaped structure) with every string, key included, made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list | tuple):
        return [storable_json(item) for item in value]
    if isinstance(value, dict):
        return {storable_text(str(key)): storable_json(item) for key, item in value.items()}
    return value
