"""The parsed stored config, kept in memory per config version.

Reading the config was four queries and a parse for every message. Now each process keeps
the last parsed config — the ``Config``, its document and the number of the config version
that document is — with the *stamp* it was read under: the active config row's ``(id,
updated_at)`` and the latest version number, checked with one indexed query per message. Any
saved or deleted config row (the config itself, its agents, scope rules or link models, from
the admin, the API, an import, or another process such as ``manage.py`` or a worker) moves
the stamp in the same transaction, and so does a new version, so the very next message in
every process reads the config again. The database is the one place every process shares,
with or without Redis.

The version number (``enrichment.config.versions.version_for_snapshot``) depends only on the document
and the latest versions; versions are immutable and numbered upwards, so a stamp that has not
moved means the number is still right.

A race we accept on purpose: a process that read the old stamp and then already the new rows
keeps them under the old stamp, so the next message simply reads them once more.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Subquery
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from common.errors import InvalidInput
from enrichment.config.store import config_document
from enrichment.config.versions import version_for_snapshot
from enrichment.models import Agent, ConfigVersion, EnrichmentConfig, LinkModel, ScopeRule
from enrichment.pipeline.config.model import Config, ConfigError
from enrichment.pipeline.config.parser import parse_config

# The active config's id, when any part of it last changed, and the latest version number,
# as the database driver gives them back: only ever compared for equality.
Stamp = tuple[Any, ...]


@dataclass(frozen=True)
class LoadedConfig:
    """The config in force. ``document`` is shared by every message of this config
    version: read it, never change it (``config_load`` hands out copies)."""

    config: Config
    document: dict[str, Any]
    version: int | None  # the config version the document is (None: rows edited around it)


_lock = threading.Lock()
_memo: tuple[Stamp, LoadedConfig] | None = None


def config_stamp() -> Stamp | None:
    """The active config's version stamp, in one query (its SQL compiled once per database:
    compiling it was most of its cost, and it runs for every message)."""
    sql, params = _stamp_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return tuple(row) if row else None


@functools.cache
def _stamp_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    latest = ConfigVersion.objects.order_by("-number").values("number")[:1]
    query = (
        EnrichmentConfig.objects.filter(is_active=True)
        .annotate(latest_version=Subquery(latest))
        .values_list("pk", "updated_at", "latest_version")
        .order_by("pk")[:1]
        .query
    )
    sql, params = query.get_compiler(connection=connection).as_sql()
    return sql, tuple(params)


def config_cached(load: Callable[[], LoadedConfig]) -> LoadedConfig:
    """``load()``'s answer, reused while the active config's stamp has not moved."""
    global _memo
    stamp = config_stamp()
    memo = _memo
    if stamp is not None and memo is not None and memo[0] == stamp:
        return memo[1]
    loaded = load()
    stamp = stamp or config_stamp()  # a fresh install created the default row just now
    if stamp is not None:
        # A private copy: the caller's document may be changed by whoever built it.
        loaded = LoadedConfig(loaded.config, copy.deepcopy(loaded.document), loaded.version)
        with _lock:
            _memo = (stamp, loaded)
    return loaded


def config_copy(loaded: LoadedConfig) -> tuple[Config, dict[str, Any]]:
    """The config and a document of the caller's own."""
    return loaded.config, copy.deepcopy(loaded.document)


def _touch(sender: type, instance: Any, **_kwargs: Any) -> None:
    config_id = instance.pk if sender is EnrichmentConfig else instance.config_id
    # ``update`` (no signal, no recursion); for the config row itself it also covers a
    # ``save(update_fields=...)`` that left ``updated_at`` out.
    EnrichmentConfig.objects.filter(pk=config_id).update(updated_at=timezone.now())


def connect_signals() -> None:
    for model in (EnrichmentConfig, Agent, ScopeRule, LinkModel):
        post_save.connect(_touch, sender=model, dispatch_uid=f"config-stamp-save-{model.__name__}")
        post_delete.connect(_touch, sender=model, dispatch_uid=f"config-stamp-del-{model.__name__}")


def config_load() -> tuple[Config, dict[str, Any]]:
    """The stored config, parsed; kept in memory until a config row changes (any process)."""
    return config_copy(config_in_force())


def config_in_force() -> LoadedConfig:
    """The stored config, its document (shared: read only) and its version number."""
    return config_cached(_config_read)


def _config_read() -> LoadedConfig:
    document = config_document()
    try:
        config = parse_config(document)
    except ConfigError as exc:  # only reachable if rows were edited around the validators
        raise InvalidInput(
            "The stored configuration is invalid.", [str(i) for i in exc.errors]
        ) from None
    return LoadedConfig(config, document, version_for_snapshot(document))
