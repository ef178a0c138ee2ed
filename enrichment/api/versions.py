"""Config versions and dry run: ``/api/config/versions…`` and ``/api/config/dry-run``.

Reads need a login, restore needs staff (as ``PUT /api/config``). The dry run writes
nothing, so any logged-in user may ask it.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import ConfigDict, Field, ValidationError

from common.errors import InvalidInput
from common.keyset import DEFAULT_PAGE_SIZE
from common.permissions import require_staff
from enrichment.config import changes as config_changes
from enrichment.config import dryrun as config_dryrun
from enrichment.config import versions as config_versions

router = Router(tags=["config"])


class VersionOut(Schema):
    number: int
    createdAt: str
    author: str
    source: str
    note: str
    restoredFrom: int | None
    summary: str


class VersionPage(Schema):
    items: list[VersionOut]
    nextCursor: str | None


class VersionDetail(VersionOut):
    document: dict[str, Any]


class ChangeOut(Schema):
    path: str
    kind: str
    old: Any = None
    new: Any = None
    movedFrom: str | None = None
    label: str | None = None  # "global rule 2": rule numbers from 1 (paths stay 0-based)
    movedFromLabel: str | None = None


class DiffOut(Schema):
    model_config = ConfigDict(populate_by_name=True)

    from_: int = Field(alias="from")
    to: int
    summary: str
    changes: list[ChangeOut]


class RestoreIn(Schema):
    model_config = ConfigDict(extra="forbid")

    note: str = Field(default="", max_length=500)
    baseVersion: int | None = Field(default=None, ge=1)


class RestoreOut(Schema):
    version: VersionOut | None
    config: dict[str, Any]


class DryRunIn(Schema):
    model_config = ConfigDict(extra="forbid")

    config: dict[str, Any]
    window: dict[str, Any] | None = Field(
        default=None,
        description='{"lastRuns": 1..10000 (default 1000), "days": >0..90}; both: the smaller set',
    )


@router.get("/config/versions", response=VersionPage)
def versions(
    request: HttpRequest, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
) -> dict[str, Any]:
    """Config versions, newest first (keyset paging: pass ``nextCursor`` as ``cursor``)."""
    page = config_versions.version_list(cursor=cursor, limit=limit)
    summaries = config_versions.version_summaries(page.items)
    return {
        "items": [config_versions.version_to_dict(v, summaries[v.number]) for v in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/config/versions/{number}", response=VersionDetail)
def version_detail(request: HttpRequest, number: int) -> dict[str, Any]:
    """One version: who, when, from where, its summary and the whole document."""
    version = config_versions.version_get(number=number)
    previous = config_versions.ConfigVersion.objects.filter(number=number - 1).first()
    summary = config_versions.version_summary(version, previous)
    return {
        **config_versions.version_to_dict(version, summary),
        "document": config_versions.version_document(version),
    }


@router.get("/config/versions/{old}/diff/{new}", response=DiffOut, by_alias=True, exclude_none=True)
def version_diff(request: HttpRequest, old: int, new: int) -> dict[str, Any]:
    """What changes going from version ``old`` to version ``new`` (either order)."""
    changes = config_versions.version_diff(old=old, new=new)
    return {
        "from": old,
        "to": new,
        "summary": config_versions.summarize(changes),
        "changes": [change.to_dict() for change in changes],
    }


@router.post(
    "/config/versions/{number}/restore",
    response=RestoreOut,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": RestoreIn.model_json_schema()}},
        }
    },
)
def version_restore(request: HttpRequest, number: int) -> dict[str, Any]:
    """Make version ``number`` the stored config again (staff): validated and replaced
    atomically like ``PUT /api/config``, recorded as a new version. Optional body
    ``{"note", "baseVersion"}``; a base version (or ``If-Match``) makes a config that moved
    on since a 409."""
    require_staff(request)
    payload = _restore_payload(request.body)
    base = config_versions.parse_base_version(
        request.headers.get("If-Match")
        or (str(payload.baseVersion) if payload.baseVersion is not None else None)
    )
    result = config_changes.version_restore(
        number=number, author=request.user.get_username(), note=payload.note, base_version=base
    )
    version = result.version
    return {
        "version": config_versions.version_to_dict(version, f"restored version {number}")
        if version
        else None,
        "config": result.document,
    }


def _restore_payload(body: bytes) -> RestoreIn:
    if not body.strip():
        return RestoreIn()
    try:
        return RestoreIn.model_validate_json(body)
    except ValidationError as exc:
        errors = [
            ".".join(str(part) for part in error["loc"]) + f": {error['msg']}"
            for error in exc.errors()
        ]
        raise InvalidInput("Invalid restore request.", errors or ["body: not JSON"]) from None


@router.post("/config/dry-run")
def dry_run(request: HttpRequest, payload: DryRunIn) -> dict[str, Any]:
    """What a proposed whole config would decide for the recorded runs of a window (by
    default the last 1,000; at most 10,000) — without running any CLI, fetching or DNS.

    Answers counts by change (``"41 runs would become scope-deny"``) and the affected runs
    (up to 200) with the recorded decision (``before``) and the predicted one (``after``).
    """
    return config_dryrun.config_dry_run(document=payload.config, window=payload.window)
