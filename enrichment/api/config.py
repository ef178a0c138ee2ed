"""The stored config: read it, replace it whole (staff), versioned."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Body, Router, Schema

from common.permissions import require_staff
from enrichment.config import versions as config_versions
from enrichment.config.changes import config_replace
from enrichment.config.openclaw_export import OPENCLAW_VERSION, Target, export_openclaw
from enrichment.config.store import config_document

router = Router(tags=["config"])


class OpenClawExportOut(Schema):
    target: Target
    openclawVersion: str  # noqa: N815 - the public JSON name
    config: dict[str, Any]
    notes: list[str]


@router.get("/config", tags=["config"])
def config_get(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """The stored config in OpenClaw's shape; the ``ETag`` header is its version number
    (send it back as ``If-Match`` on ``PUT``)."""
    response["ETag"] = f'"{config_versions.latest_number()}"'
    return config_document()


@router.get("/config/openclaw", response=OpenClawExportOut, tags=["config"])
def config_openclaw(
    request: HttpRequest, response: HttpResponse, target: Target = "current"
) -> dict[str, Any]:
    """The stored config as an OpenClaw config file for ``target``: ``current`` (OpenClaw
    2026.9: ``agents.entries``, one ``tools.media.models`` list; the default) or ``legacy``
    (the shape of ``GET /api/config``). ``notes`` names each setting the target has no home
    for (left out of ``config``) and each rewrite; the ``ETag`` is the config version."""
    response["ETag"] = f'"{config_versions.latest_number()}"'
    exported = export_openclaw(config_document(), target)
    return {
        "target": exported.target,
        "openclawVersion": OPENCLAW_VERSION,
        "config": exported.document,
        "notes": exported.notes,
    }


@router.put("/config", tags=["config"])
def config_put(
    request: HttpRequest,
    response: HttpResponse,
    document: Body[dict[str, Any]],
    baseVersion: int | None = None,  # noqa: N803 - the query parameter's public name
    note: str = "",
) -> dict[str, Any]:
    """Replace the whole config (staff). Keys left out return to their defaults; on any
    validation error nothing changes and the 422 lists every path at fault. With a base
    version (``If-Match: "3"`` or ``?baseVersion=3``) a config that moved on since is a 409
    naming that version; an accepted change becomes a new config version."""
    require_staff(request)
    base = config_versions.parse_base_version(
        request.headers.get("If-Match") or (str(baseVersion) if baseVersion is not None else None)
    )
    stored = config_replace(
        document=document,
        source="api",
        author=request.user.get_username(),
        note=note,
        base_version=base,
    )
    response["ETag"] = f'"{config_versions.latest_number()}"'
    return stored
