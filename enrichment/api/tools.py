"""``POST /api/tools/resolve``: the tools an agent run may use under a config (SPEC §7, §9).

Nothing is stored. Without ``config`` the stored config decides; a given ``config`` is a
whole OpenClaw document, validated like ``PUT /api/config`` (422 naming every bad path).
"""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import Field, field_validator

from enrichment.selectors.tool_access import tools_resolve

router = Router(tags=["explain"])

MAX_TOOL_NAMES = 1000
MAX_NAME_CHARS = 200

ToolName = Annotated[str, Field(max_length=MAX_NAME_CHARS)]


class ToolsResolveIn(Schema):
    config: dict[str, Any] | None = Field(
        default=None, description="A whole OpenClaw config document; default: the stored one."
    )
    agentId: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    provider: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    model: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    available: list[ToolName] | None = Field(
        default=None,
        max_length=MAX_TOOL_NAMES,
        description="Core tools present; default: the built-in inventory.",
    )
    pluginTools: dict[ToolName, list[ToolName]] | None = Field(
        default=None, max_length=MAX_TOOL_NAMES, description="Loaded plugin tools by plugin id."
    )

    @field_validator("pluginTools")
    @classmethod
    def plugin_tools_bounded(
        cls, value: dict[str, list[str]] | None
    ) -> dict[str, list[str]] | None:
        total = sum(len(names) for names in (value or {}).values())
        if total > MAX_TOOL_NAMES:
            raise ValueError(f"at most {MAX_TOOL_NAMES} plugin tool names in all (got {total})")
        return value


class ToolsResolveOut(Schema):
    allowed: list[str]
    warnings: list[str]


@router.post("/tools/resolve", response=ToolsResolveOut, summary="Resolve the allowed tools")
def tools_resolve_endpoint(request: HttpRequest, payload: ToolsResolveIn) -> dict[str, object]:
    """Allowed tools (input order: core tools, then plugin tools) and the policy warnings."""
    resolution = tools_resolve(
        config_document=payload.config,
        agent_id=payload.agentId,
        provider=payload.provider,
        model=payload.model,
        available=payload.available,
        plugin_tools=payload.pluginTools,
    )
    return {"allowed": list(resolution.allowed), "warnings": list(resolution.warnings)}
