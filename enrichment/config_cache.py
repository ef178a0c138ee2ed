"""The parsed stored config, kept in memory per config generation.

Reading the config is four queries and a parse; it was done for every message. Now each
process keeps the last parsed ``(Config, document)`` with the *generation* it was read under.
The generation is a token in the shared cache (Redis when configured, so web processes and
workers see the same one): any save or delete of a config row replaces it, so the next message
in every process reads the config again — a saved change applies to the very next message.

Order matters (a race): the token is replaced when the row is saved *and again after the
transaction commits*. A process that read the old token and then the new rows only keeps
them under the old token, which is already stale; one that sees the newest token started
reading after the commit. A token lost from the cache (eviction, Redis restart) means
"unknown": the config is read again and a new token is issued.
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from enrichment.pipeline.config import Config

GENERATION_KEY = "enrichment-config-generation"
Loaded = tuple[Config, dict[str, Any]]

_lock = threading.Lock()
_memo: tuple[str, Config, dict[str, Any]] | None = None


def config_cached(load: Callable[[], Loaded]) -> Loaded:
    """``load()``'s answer, reused while the generation token has not changed."""
    global _memo
    generation = cache.get(GENERATION_KEY)
    memo = _memo
    if generation is not None and memo is not None and memo[0] == generation:
        return memo[1], copy.deepcopy(memo[2])
    if generation is None:
        cache.add(GENERATION_KEY, uuid.uuid4().hex, timeout=None)
        generation = cache.get(GENERATION_KEY)
    config, document = load()
    if generation is not None:
        with _lock:
            _memo = (generation, config, copy.deepcopy(document))
    return config, document


def config_invalidate() -> None:
    """Forget this process's copy and make every other process read the config again."""
    global _memo
    with _lock:
        _memo = None
    cache.set(GENERATION_KEY, uuid.uuid4().hex, timeout=None)


def _changed(**_kwargs: Any) -> None:
    config_invalidate()
    transaction.on_commit(config_invalidate)


def connect_signals() -> None:
    from enrichment.models import Agent, EnrichmentConfig, LinkModel, ScopeRule

    for model in (EnrichmentConfig, Agent, ScopeRule, LinkModel):
        post_save.connect(_changed, sender=model, dispatch_uid=f"config-cache-{model.__name__}")
        post_delete.connect(_changed, sender=model, dispatch_uid=f"config-del-{model.__name__}")
