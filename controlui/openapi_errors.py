"""Document in the OpenAPI schema the 4xx answers every endpoint can give.

Endpoints declare their success shapes; the refusals come from one place
(``controlui.api``'s exception handlers and ``server.input_guard``), so they are added to
every operation here rather than repeated in each decorator. A client generator, and
schemathesis, then see which statuses to expect and what an error body looks like.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA_NAME = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "title": ERROR_SCHEMA_NAME,
    "type": "object",
    "properties": {
        "detail": {
            "description": "What was wrong (ninja's own 422 lists pydantic errors here).",
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}],
        },
        "errors": {
            "description": "Each path or parameter at fault, with the reason.",
            "type": "array",
            "items": {"type": "string"},
        },
    },
    "required": ["detail"],
}

ERROR_RESPONSES = {
    "400": "Malformed request (body is not valid JSON, or a value the service refuses).",
    "401": "Not authenticated: log in or send Authorization: Bearer <token>.",
    "403": "Authenticated but not allowed (e.g. staff only).",
    "404": "No such object.",
    "409": "Conflict: the object moved on since the base version the request named.",
    "413": "Request body or file larger than the limit named in the answer.",
    "422": "Invalid input: each field at fault is named (NUL, lone surrogate, length, range, nesting).",
    "429": "Too many connections from this client address (MAX_CONNECTIONS_PER_CLIENT).",
}

_METHODS = {"get", "put", "post", "delete", "patch"}


def add_error_responses(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the shared error schema and every 4xx answer an operation does not yet declare."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components[ERROR_SCHEMA_NAME] = ERROR_SCHEMA
    reference = {"$ref": f"#/components/schemas/{ERROR_SCHEMA_NAME}"}
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            responses = operation.setdefault("responses", {})
            declared = {str(status) for status in responses}  # ninja's keys are ints
            for status, description in ERROR_RESPONSES.items():
                if status in declared:
                    continue
                responses.setdefault(
                    status,
                    {
                        "description": description,
                        "content": {"application/json": {"schema": reference}},
                    },
                )
    return schema
