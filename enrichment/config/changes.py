"""Changing the stored config: validate a whole document, write it, record it as a version.

Every writer (``PUT /api/config``, import, restore, the demo) goes through
``config_replace_versioned``; the admin writes its forms itself and records the version in
``enrichment.config.admin_versions``. Nothing is written (no rows, no version) when the
document is invalid or the base version is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from common.errors import InvalidInput
from enrichment.config.limits import config_column_problems
from enrichment.config.store import config_document, config_write
from enrichment.config.versions import (
    lock_and_check,
    version_document,
    version_get,
    version_record,
)
from enrichment.models import ConfigVersion
from enrichment.pipeline.config.model import ConfigError
from enrichment.pipeline.config.parser import parse_config


@dataclass(frozen=True)
class ReplaceResult:
    document: dict[str, Any]
    version: ConfigVersion | None  # None: nothing changed


def config_replace_versioned(
    *,
    document: Mapping[str, Any],
    source: str,
    author: str = "",
    note: str = "",
    base_version: int | None = None,
    restored_from: int | None = None,
) -> ReplaceResult:
    """Validate ``document``, replace the stored config atomically and record a version.

    Nothing is written (no rows, no version) when the document is invalid or the base
    version is stale.
    """
    try:
        parse_config(document)
    except ConfigError as exc:
        raise InvalidInput("Invalid configuration.", [str(issue) for issue in exc.errors]) from None
    too_big = config_column_problems(document)
    if too_big:
        raise InvalidInput("Invalid configuration.", too_big)
    with transaction.atomic():
        previous = lock_and_check(base_version)
        config_write(document=document)
        version = version_record(
            document=config_document(),
            source=source,
            author=author,
            note=note,
            restored_from=restored_from,
            previous=previous,
        )
    return ReplaceResult(config_document(), version)


def version_restore(
    *, number: int, author: str, note: str = "", base_version: int | None = None
) -> ReplaceResult:
    """Make version ``number`` the stored config again: validated and written like a PUT,
    recorded as a new version (source ``restore``)."""
    version = version_get(number=number)
    return config_replace_versioned(
        document=version_document(version),
        source=ConfigVersion.Source.RESTORE,
        author=author,
        note=note or f"restored version {number}",
        base_version=base_version,
        restored_from=number,
    )


def config_replace(
    *,
    document: Mapping[str, Any],
    source: str = "command",
    author: str = "",
    note: str = "",
    base_version: int | None = None,
) -> dict[str, Any]:
    """``config_replace_versioned`` for callers that want the stored document back."""
    return config_replace_versioned(
        document=document, source=source, author=author, note=note, base_version=base_version
    ).document
