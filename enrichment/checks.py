"""System checks (``manage.py check``): the stored config is valid and its CLIs exist.

Ids are stable: ``enrichment.E001`` stored config invalid (one message listing every path at
fault), ``enrichment.W001`` none of the global link model commands is on PATH (every link
would fail), ``enrichment.W002`` the extraction pool is not fair (one host's pages may hold
every process).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.db import DatabaseError

from enrichment.config.store import config_document
from enrichment.models import EnrichmentConfig
from enrichment.pipeline.config.model import Config, ConfigError
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.fetch.fair_slots import unfair_pool
from enrichment.services.links import cli_environment

TAG = "enrichment"


def stored_document() -> dict[str, Any] | None:
    """The active config as a document, or None when there is none yet (or no database).

    Checks also run before ``migrate`` has created the tables, so an unreachable or empty
    database is simply nothing to check; a fresh install gets the (valid) default later.
    """
    try:
        config = EnrichmentConfig.objects.filter(is_active=True).first()
        return config_document(config) if config is not None else None
    except (DatabaseError, RuntimeError):  # RuntimeError: database access blocked (tests)
        return None


@register(TAG)
def check_stored_config(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    document = stored_document()
    if document is None:
        return []
    try:
        parse_config(document)
    except ConfigError as exc:
        return [config_invalid(exc)]
    return []


def config_invalid(exc: ConfigError) -> Error:
    return Error(
        "The stored enrichment config is invalid: " + "; ".join(str(issue) for issue in exc.errors),
        hint="Fix it in the admin, or replace it with PUT /api/config or "
        "manage.py import_openclaw_config.",
        id="enrichment.E001",
    )


@register(TAG)
def check_link_commands(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    document = stored_document()
    if document is None:
        return []
    try:
        config = parse_config(document)
    except ConfigError:
        return []  # E001 reports it
    commands = [model.command for model in config.links.models]
    if not commands or any(found(command, config) for command in commands):
        return []
    return [
        Warning(
            "No link model command is on PATH: " + ", ".join(commands),
            hint="Every link will fail until one is installed; the built-in one is "
            "link-understand (pip install of this project).",
            id="enrichment.W001",
        )
    ]


def found(command: str, config: Config) -> bool:
    # The same PATH the runs themselves get (this venv's scripts first).
    return shutil.which(command, path=cli_environment(config)["PATH"]) is not None


@register(TAG)
def check_fair_pool(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    problem = unfair_pool(settings.EXTRACTION_WORKERS, settings.EXTRACTION_SLOTS_PER_HOST)
    if problem is None:
        return []
    return [
        Warning(
            f"The extraction pool is not fair: {problem}.",
            hint="One sender's slow pages would make every other link wait. Set "
            "EXTRACTION_WORKERS to 2 or more (the default is one per core, at least 2), or "
            "EXTRACTION_SLOTS_PER_HOST below it.",
            id="enrichment.W002",
        )
    ]
