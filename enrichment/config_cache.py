"""The parsed stored config, kept in memory per config version.

Reading the config was four queries and a parse for every message. Now each process keeps
the last parsed ``(Config, document)`` with the *stamp* of the active config row it was read
under — ``(id, updated_at)`` — and checks the stamp with one indexed query per message. Any
saved or deleted config row (the config itself, its agents, scope rules or link models, from
the admin, the API, an import, or another process such as ``manage.py`` or a worker) moves
the stamp in the same transaction, so the very next message in every process reads the
config again. The database is the one place every process shares, with or without Redis.

A race we accept on purpose: a process that read the old stamp and then already the new rows
keeps them under the old stamp, so the next message simply reads them once more.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from enrichment.models import Agent, EnrichmentConfig, LinkModel, ScopeRule
from enrichment.pipeline.config.model import Config

Loaded = tuple[Config, dict[str, Any]]
Stamp = tuple[int, datetime]

_lock = threading.Lock()
_memo: tuple[Stamp, Config, dict[str, Any]] | None = None


def config_stamp() -> Stamp | None:
    """The active config's version: its id and when any part of it last changed."""
    row = EnrichmentConfig.objects.filter(is_active=True).values_list("pk", "updated_at").first()
    return (row[0], row[1]) if row else None


def config_cached(load: Callable[[], Loaded]) -> Loaded:
    """``load()``'s answer, reused while the active config's stamp has not moved."""
    global _memo
    stamp = config_stamp()
    memo = _memo
    if stamp is not None and memo is not None and memo[0] == stamp:
        return memo[1], copy.deepcopy(memo[2])
    config, document = load()
    stamp = stamp or config_stamp()  # a fresh install created the default row just now
    if stamp is not None:
        with _lock:
            _memo = (stamp, config, copy.deepcopy(document))
    return config, document


def _touch(sender: type, instance: Any, **_kwargs: Any) -> None:
    config_id = instance.pk if sender is EnrichmentConfig else instance.config_id
    # ``update`` (no signal, no recursion); for the config row itself it also covers a
    # ``save(update_fields=...)`` that left ``updated_at`` out.
    EnrichmentConfig.objects.filter(pk=config_id).update(updated_at=timezone.now())


def connect_signals() -> None:
    for model in (EnrichmentConfig, Agent, ScopeRule, LinkModel):
        post_save.connect(_touch, sender=model, dispatch_uid=f"config-stamp-save-{model.__name__}")
        post_delete.connect(_touch, sender=model, dispatch_uid=f"config-stamp-del-{model.__name__}")
