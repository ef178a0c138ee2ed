"""The enrichment router: explain endpoints, enrichment, decision history, config."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Body, File, Form, Router
from ninja.files import UploadedFile
from pydantic import Field, ValidationError

from controlui.plumbing.errors import InvalidInput, PayloadTooLarge
from controlui.plumbing.json_guard import JsonInputError, parse_json
from controlui.plumbing.keyset import MAX_PAGE_SIZE
from controlui.plumbing.permissions import require_staff
from enrichment import config_versions, jobqueue, selectors, services
from enrichment.config_store import config_document
from enrichment.exports import export_response
from enrichment.pipeline.fetch.ssrf import SsrfPolicy, check_url, system_resolve
from enrichment.pipeline.links.detection import extract_links
from enrichment.pipeline.scope import evaluate_scope, parse_scope
from enrichment.records import decision_record
from enrichment.schemas import (
    MAX_ATTACHMENT_BYTES,
    DecisionDetail,
    DecisionPage,
    EnrichIn,
    EnrichOut,
    LinksExtractIn,
    LinksExtractOut,
    ScopeEvaluateIn,
    ScopeEvaluateOut,
    SsrfCheckIn,
    SsrfCheckOut,
)
from enrichment.selectors import DEFAULT_PAGE_SIZE, HistoryFilters

router = Router(tags=["enrichment"])

# Largest primary key a BigAutoField can hold: larger ids are a 422, not a database overflow.
MAX_ROW_ID = 2**63 - 1
MAX_UPLOAD_FILES = 8
MAX_ATTACHMENTS = 32
_UNKNOWN_CONTENT_TYPE = "application/octet-stream"


@router.post("/links/extract", response=LinksExtractOut, tags=["explain"])
def links_extract(request: HttpRequest, payload: LinksExtractIn) -> dict[str, object]:
    """Which links a message would enrich (nothing stored, no DNS)."""
    return {"links": extract_links(payload.message, payload.maxLinks)}


@router.post("/ssrf/check", response=SsrfCheckOut, tags=["explain"])
def ssrf_check(request: HttpRequest, payload: SsrfCheckIn) -> dict[str, object]:
    """The SSRF verdict for one URL, optionally with DNS (every answer classified)."""
    try:
        policy = SsrfPolicy.from_dict(payload.policy or {})
    except ValueError as exc:
        raise InvalidInput(f"policy: {exc}") from None
    verdict = check_url(payload.url, policy, system_resolve if payload.resolve else None)
    return {
        "blocked": verdict.blocked,
        "reason": verdict.reason,
        "host": verdict.host,
        "addresses": list(verdict.addresses),
    }


@router.post("/scope/evaluate", response=ScopeEvaluateOut, tags=["explain"])
def scope_evaluate(request: HttpRequest, payload: ScopeEvaluateIn) -> dict[str, object]:
    """Allow or deny for a context under a scope object; an invalid scope is a 422."""
    scope = None
    if payload.scope is not None:
        scope, issues = parse_scope(payload.scope, "scope")
        if issues:
            raise InvalidInput("Invalid scope.", [str(issue) for issue in issues])
    decision = evaluate_scope(scope, payload.channel, payload.chatType, payload.sessionKey)
    return {"decision": decision.decision, "matchedRule": decision.matched_rule}


@router.post("/enrich", response=EnrichOut, tags=["enrichment"])
def enrich(request: HttpRequest, payload: EnrichIn) -> dict[str, Any]:
    """Run the pipeline on one message with the stored config and record the run.

    Media understanding runs first, then link understanding on the rewritten body. Each
    attachment is ``{url}`` (downloaded under the stored SSRF policy), ``{path}`` (a file
    inside the media root), or ``{data}`` (base64, at most 25 MiB decoded; this endpoint's
    whole body is capped by ``DATA_UPLOAD_MAX_MEMORY_SIZE``, so big files go to
    ``POST /api/enrich/upload``); ``mime`` and ``name`` are optional.
    """
    return async_to_sync(jobqueue.enrichment_answer)(request=services.request_from_schema(payload))


@router.post("/enrich/upload", response=EnrichOut, tags=["enrichment"])
def enrich_upload(
    request: HttpRequest, payload: Form[str], files: File[list[UploadedFile]]
) -> dict[str, Any]:
    """``POST /api/enrich`` with the attachments uploaded as ``multipart/form-data``.

    Form fields: ``payload`` = the JSON object of ``POST /api/enrich``, as text; ``files`` =
    one to 8 files, each at most 25 MiB (a larger one is a 413). Uploaded files become
    attachments after those listed in ``payload.attachments``, in upload order; their name
    and content type come from the upload. Temp copies are deleted when the run ends.
    """
    message = _enrich_payload(payload)
    if len(files) > MAX_UPLOAD_FILES:
        raise InvalidInput(f"files: at most {MAX_UPLOAD_FILES} files per request")
    if len(message.attachments) + len(files) > MAX_ATTACHMENTS:
        raise InvalidInput(f"attachments: at most {MAX_ATTACHMENTS} per message")
    uploads = tuple(_uploaded_attachment(file) for file in files)
    enrich_request = services.request_from_schema(message)
    enrich_request = dataclasses.replace(
        enrich_request, attachments=enrich_request.attachments + uploads
    )
    return async_to_sync(services.enrichment_run)(request=enrich_request)


def _enrich_payload(payload: str) -> EnrichIn:
    try:
        return EnrichIn.model_validate(parse_json(payload, root="payload"))
    except JsonInputError as exc:
        raise InvalidInput(f"Invalid payload: {exc}", [str(exc)]) from None
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            errors = [
                "payload." + ".".join(str(part) for part in error["loc"]) + f": {error['msg']}"
                for error in exc.errors()
            ]
            raise InvalidInput("Invalid payload.", errors) from None
        raise InvalidInput(f"payload: not valid JSON ({exc})") from None


def _uploaded_attachment(file: UploadedFile) -> dict[str, Any]:
    # Checked before reading: Django keeps large uploads on disk until read().
    if file.size is not None and file.size > MAX_ATTACHMENT_BYTES:
        raise PayloadTooLarge(
            f"File {file.name!r} too large: {file.size} bytes; the limit is "
            f"{MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB ({MAX_ATTACHMENT_BYTES} bytes) per file."
        )
    mime = None if file.content_type == _UNKNOWN_CONTENT_TYPE else file.content_type
    return {"name": file.name, "mime": mime, "data": file.read()}


@router.get("/decisions", response=DecisionPage, tags=["history"])
def decisions(
    request: HttpRequest,
    cursor: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
) -> dict[str, Any]:
    """History, newest first. Filters: outcome, channel, chatType, sessionKey (prefix),
    url (substring), q (text in the bodies and summaries), since, until."""
    page = selectors.decision_list(
        filters=HistoryFilters.from_params(request.GET.dict()), cursor=cursor, limit=limit
    )
    return {
        "items": [services.run_summary(run) for run in page.items],
        "nextCursor": page.next_cursor,
    }


@router.get("/decisions/export", tags=["history"])
def decisions_export(request: HttpRequest, format: str = "json") -> StreamingHttpResponse:
    """The filtered history as a streamed CSV or JSON download."""
    filters = HistoryFilters.from_params(request.GET.dict())
    return export_response(filters=filters, format=format)


@router.get("/decisions/{run_id}", response=DecisionDetail, tags=["history"])
def decision_detail(
    request: HttpRequest,
    run_id: Annotated[int, Field(ge=1, le=MAX_ROW_ID)],
) -> dict[str, Any]:
    return decision_record(selectors.decision_get(run_id=run_id))


@router.get("/config", tags=["config"])
def config_get(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """The stored config in OpenClaw's shape; the ``ETag`` header is its version number
    (send it back as ``If-Match`` on ``PUT``)."""
    response["ETag"] = f'"{config_versions.latest_number()}"'
    return config_document()


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
    stored = services.config_replace(
        document=document,
        source="api",
        author=request.user.get_username(),
        note=note,
        base_version=base,
    )
    response["ETag"] = f'"{config_versions.latest_number()}"'
    return stored
