"""Config versions: every accepted change of the stored config is one immutable, numbered
version (who, when, from where, an optional note, the whole document); reads and diffs.
Making a change (validate, write, record) is ``enrichment.config.changes``.

Writers hold the active config row locked (``select_for_update``) from the base-version
check to the new version, so two saves based on the same version cannot both win: the
second sees that the stored config moved on and gets a 409 naming the version it was based
on. A change that leaves the document as it was creates no version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction

from common.errors import DomainError, InvalidInput, NotFound
from common.keyset import KeysetPage, keyset_page
from enrichment.models import ConfigVersion, EnrichmentConfig
from enrichment.pipeline.config.diff import Change, diff_documents, summarize

# How many recent versions a run's snapshot is matched against (a save racing a run).
SNAPSHOT_LOOKBACK = 5


class ConfigConflict(DomainError):
    """The stored config is no longer the version the change was based on."""

    status = 409


def document_text(document: Mapping[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False)


def version_document(version: ConfigVersion) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(version.document)
    return document


def latest_version() -> ConfigVersion | None:
    return ConfigVersion.objects.order_by("-number").first()


def latest_number() -> int:
    version = latest_version()
    return version.number if version else 0


def conflict_message(base: int, current: ConfigVersion | None) -> str:
    if current is None:
        return f"The config has no version {base} to be based on."
    return (
        f"Conflict: this change was based on version {base}, but the stored config is now "
        f"version {current.number} ({current.source} by {current.author or 'unknown'}, "
        f"{current.created_at:%Y-%m-%d %H:%M:%S} UTC). Reload, re-apply the change and save again."
    )


def lock_and_check(base_version: int | None) -> ConfigVersion | None:
    """Lock the active config row for this transaction; raise ``ConfigConflict`` when
    ``base_version`` is given and is not the latest version. Returns the latest version."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("lock_and_check must run inside transaction.atomic")
    active = EnrichmentConfig.objects.select_for_update().filter(is_active=True).first()
    if active is not None:
        # A write takes SQLite's database lock too (it has no row locks), so a concurrent
        # writer waits here instead of reading the same "latest" version.
        EnrichmentConfig.objects.filter(pk=active.pk).update(updated_at=active.updated_at)
    current = latest_version()
    if base_version is not None and (current is None or current.number != base_version):
        raise ConfigConflict(conflict_message(base_version, current))
    return current


def version_record(
    *,
    document: Mapping[str, Any],
    source: str,
    author: str = "",
    note: str = "",
    restored_from: int | None = None,
    previous: ConfigVersion | None = None,
) -> ConfigVersion | None:
    """Record ``document`` (the stored config, as just written) as a new version, inside
    the writer's transaction; None when it equals the previous version."""
    text = document_text(document)
    previous = previous if previous is not None else latest_version()
    if previous is not None and previous.document == text:
        return None
    try:
        with transaction.atomic():
            return ConfigVersion.objects.create(
                number=(previous.number if previous else 0) + 1,
                source=source,
                author=author[:200],
                note=note[:500],
                restored_from=restored_from,
                document=text,
            )
    except IntegrityError:  # another writer took the number: same outcome as a stale base
        raise ConfigConflict(
            conflict_message(previous.number if previous else 0, latest_version())
        ) from None


def version_get(*, number: int) -> ConfigVersion:
    version = ConfigVersion.objects.filter(number=number).first()
    if version is None:
        raise NotFound(f"No config version {number}.")
    return version


def version_list(*, cursor: str | None, limit: int) -> KeysetPage[ConfigVersion]:
    rows = ConfigVersion.objects.defer("document").order_by("-created_at", "-id")
    return keyset_page(rows, cursor=cursor, limit=limit)


def version_diff(*, old: int, new: int) -> list[Change]:
    return diff_documents(
        version_document(version_get(number=old)), version_document(version_get(number=new))
    )


def version_summary(version: ConfigVersion, previous: ConfigVersion | None) -> str:
    if previous is None:
        return "first version"
    return summarize(diff_documents(version_document(previous), version_document(version)))


def version_summaries(versions: list[ConfigVersion]) -> dict[int, str]:
    """number → one-line summary against its predecessor, for a page of versions (one
    extra query for the predecessors, documents loaded once)."""
    numbers = {v.number for v in versions} | {v.number - 1 for v in versions}
    documents = {
        number: json.loads(text)
        for number, text in ConfigVersion.objects.filter(number__in=numbers).values_list(
            "number", "document"
        )
    }
    summaries = {}
    for version in versions:
        before = documents.get(version.number - 1)
        after = documents[version.number]
        summaries[version.number] = (
            "first version" if before is None else summarize(diff_documents(before, after))
        )
    return summaries


def version_for_snapshot(snapshot: Mapping[str, Any]) -> int | None:
    """The version whose document a run's config snapshot is (None when rows were changed
    around the versioned writers)."""
    text = document_text(snapshot)
    recent = ConfigVersion.objects.order_by("-number").values_list("number", "document")
    for number, document in recent[:SNAPSHOT_LOOKBACK]:
        if document == text:
            return int(number)
    return None


def version_to_dict(version: ConfigVersion, summary: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "number": version.number,
        "createdAt": version.created_at.isoformat(),
        "author": version.author,
        "source": version.source,
        "note": version.note,
        "restoredFrom": version.restored_from,
    }
    if summary is not None:
        result["summary"] = summary
    return result


def parse_base_version(value: str | None) -> int | None:
    """``If-Match: "3"``, ``W/"3"``, ``3`` or ``?baseVersion=3`` → 3; junk is a 422."""
    if value is None or not value.strip():
        return None
    text = value.strip().removeprefix("W/").strip('"')
    if not text.isdigit() or int(text) < 1:
        raise InvalidInput(
            f"base version: expected a version number such as 3, got {value[:40]!r}",
            ["baseVersion"],
        )
    return int(text)
