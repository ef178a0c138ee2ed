"""``tools.media`` configuration: typed values, defaults, validation and the OpenClaw shape.

Precedence for every run of one model entry (notes §2.1): the entry's value, else the
capability's (``tools.media.<capability>``), else the per-capability default below.

Worked example (image, capability ``maxChars: 200``, entry without its own prompt)::

    resolve_prompt(entry, capability_config, "image")
    # -> "Describe the image. Respond in at most 200 characters."
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Literal, TypedDict, cast

from enrichment.pipeline.config.readers import ConfigIssue, ConfigReader, json_copy, json_issues
from enrichment.pipeline.config.scope import ScopeConfig, parse_scope, scope_to_dict
from enrichment.pipeline.templates import find_template_errors

Capability = Literal["image", "audio", "video"]
CAPABILITIES: tuple[Capability, ...] = ("image", "audio", "video")
MIB = 1024 * 1024

DEFAULT_MAX_BYTES: Mapping[Capability, int] = {
    "image": 10 * MIB,
    "audio": 20 * MIB,
    "video": 50 * MIB,
}
DEFAULT_MAX_CHARS: Mapping[Capability, int | None] = {"image": 500, "audio": None, "video": 500}
DEFAULT_TIMEOUT_SECONDS: Mapping[Capability, int] = {"image": 60, "audio": 60, "video": 120}
DEFAULT_PROMPT: Mapping[Capability, str] = {
    "image": "Describe the image.",
    "audio": "Transcribe the audio.",
    "video": "Describe the video.",
}
DEFAULT_CONCURRENCY = 2


@dataclass(frozen=True)
class MediaModelEntry:
    """One ``models[]`` item: a CLI (``command`` + templated ``args``) or an HTTP provider."""

    type: Literal["cli", "provider"]
    command: str | None = None
    args: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    capabilities: tuple[Capability, ...] = ()
    prompt: str | None = None
    max_chars: int | None = None
    max_bytes: int | None = None
    timeout_seconds: float | None = None
    language: str | None = None
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AttachmentPolicy:
    mode: Literal["first", "all"] = "first"
    max_attachments: int = 1
    prefer: Literal["first", "last", "path", "url"] = "first"


@dataclass(frozen=True)
class CapabilityConfig:
    enabled: bool | None = None  # None: auto mode allowed; False: outcome "disabled"
    scope: ScopeConfig | None = None
    models: tuple[MediaModelEntry, ...] = ()
    prompt: str | None = None
    max_chars: int | None = None
    max_bytes: int | None = None
    timeout_seconds: float | None = None
    language: str | None = None
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    attachments: AttachmentPolicy = field(default_factory=AttachmentPolicy)


@dataclass(frozen=True)
class MediaConfig:
    concurrency: int = DEFAULT_CONCURRENCY
    models: tuple[MediaModelEntry, ...] = ()
    image: CapabilityConfig = field(default_factory=CapabilityConfig)
    audio: CapabilityConfig = field(default_factory=CapabilityConfig)
    video: CapabilityConfig = field(default_factory=CapabilityConfig)

    def capability(self, capability: Capability) -> CapabilityConfig:
        return cast(CapabilityConfig, getattr(self, capability))


# --- resolution -----------------------------------------------------------------------------


def resolve_max_bytes(
    entry: MediaModelEntry | None, config: CapabilityConfig, cap: Capability
) -> int:
    for value in (entry.max_bytes if entry else None, config.max_bytes):
        if value is not None:
            return value
    return DEFAULT_MAX_BYTES[cap]


def resolve_max_chars(
    entry: MediaModelEntry | None, config: CapabilityConfig, cap: Capability
) -> int | None:
    """``None`` and ``0`` both mean "no trimming"."""
    for value in (entry.max_chars if entry else None, config.max_chars):
        if value is not None:
            return value
    return DEFAULT_MAX_CHARS[cap]


def resolve_timeout_seconds(
    entry: MediaModelEntry | None, config: CapabilityConfig, cap: Capability
) -> float:
    """Seconds, floored to whole milliseconds and at least one second (notes §2.1)."""
    for value in (entry.timeout_seconds if entry else None, config.timeout_seconds):
        if value is not None and math.isfinite(value):
            return max(1000, math.floor(value * 1000)) / 1000
    return float(DEFAULT_TIMEOUT_SECONDS[cap])


def resolve_prompt(entry: MediaModelEntry | None, config: CapabilityConfig, cap: Capability) -> str:
    """First *defined* prompt (an empty string masks later ones); blank -> the default."""
    chosen = entry.prompt if entry is not None and entry.prompt is not None else config.prompt
    prompt = chosen.strip() if chosen is not None and chosen.strip() else DEFAULT_PROMPT[cap]
    max_chars = resolve_max_chars(entry, config, cap)
    if cap != "audio" and max_chars:
        prompt += f" Respond in at most {max_chars} characters."
    return prompt


def resolve_headers(entry: MediaModelEntry | None, config: CapabilityConfig) -> dict[str, str]:
    merged = dict(config.headers)
    merged.update(entry.headers if entry else ())
    return merged


def clamp_concurrency(value: float) -> int:
    """Workers for the capability pool: positive finite -> floor, else 2; at most 3."""
    count = math.floor(value) if math.isfinite(value) and value > 0 else DEFAULT_CONCURRENCY
    return max(1, min(count, len(CAPABILITIES)))


def trim_output(text: str, max_chars: int | None) -> str:
    text = text.strip()
    if max_chars and len(text) > max_chars:
        text = text[:max_chars].strip()
    return text


# --- parsing ------------------------------------------------------------------------------

MEDIA_KEYS = frozenset({"concurrency", "models", *CAPABILITIES})
_COMMON_KEYS = {
    "prompt",
    "maxChars",
    "maxBytes",
    "timeoutSeconds",
    "language",
    "baseUrl",
    "headers",
}
CAPABILITY_KEYS = frozenset({"enabled", "scope", "models", "attachments", *_COMMON_KEYS})
ENTRY_KEYS = frozenset(
    {"type", "command", "args", "provider", "model", "capabilities", *_COMMON_KEYS}
)
ATTACHMENT_KEYS = frozenset({"mode", "maxAttachments", "prefer"})


def parse_media_config(
    obj: object, path: str = "tools.media"
) -> tuple[MediaConfig, list[ConfigIssue]]:
    """Parse a raw ``tools.media`` object; callers must reject the config if issues exist."""
    issues: list[ConfigIssue] = []
    read = ConfigReader(issues)
    raw = read.mapping({} if obj is None else obj, path, MEDIA_KEYS)
    concurrency = read.integer(raw, "concurrency", path, minimum=1)
    config = MediaConfig(
        concurrency=DEFAULT_CONCURRENCY if concurrency is None else concurrency,
        models=_parse_entries(read, raw.get("models", []), f"{path}.models"),
        **{cap: _parse_capability(read, raw.get(cap, {}), f"{path}.{cap}") for cap in CAPABILITIES},
    )
    return config, issues


def parse_media_block(
    read: ConfigReader, block: Mapping[str, object], path: str
) -> dict[str, object] | None:
    """``<path>.media`` as it is stored: a plain JSON copy once it parses (None when absent or
    invalid). The parsed ``MediaConfig`` is built per run (``media_glue``) after the agent's
    block is merged."""
    if "media" not in block:
        return None
    value = read.json_object(block["media"], f"{path}.media")
    if value is None:
        return None
    found = json_issues(value, f"{path}.media") or parse_media_config(value, f"{path}.media")[1]
    read.issues.extend(found)
    return None if found else dict(json_copy(value))


def _parse_capability(read: ConfigReader, obj: object, path: str) -> CapabilityConfig:
    raw = read.mapping(obj, path, CAPABILITY_KEYS)
    enabled = raw.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        read.fail(f"{path}.enabled", "must be true or false")
        enabled = None
    scope = None
    if raw.get("scope") is not None:
        scope, scope_issues = parse_scope(raw["scope"], f"{path}.scope")
        read.issues.extend(scope_issues)
    policy = read.mapping(raw.get("attachments", {}), f"{path}.attachments", ATTACHMENT_KEYS)
    apath = f"{path}.attachments"
    attachments = AttachmentPolicy(
        mode=cast(
            Literal["first", "all"], read.choice(policy, "mode", apath, ("first", "all")) or "first"
        ),
        max_attachments=read.integer(policy, "maxAttachments", apath, minimum=1) or 1,
        prefer=cast(
            Literal["first", "last", "path", "url"],
            read.choice(policy, "prefer", apath, ("first", "last", "path", "url")) or "first",
        ),
    )
    return CapabilityConfig(
        enabled=enabled,
        scope=scope,
        models=_parse_entries(read, raw.get("models", []), f"{path}.models"),
        attachments=attachments,
        **_common_fields(read, raw, path),
    )


class _CommonFields(TypedDict):
    prompt: str | None
    max_chars: int | None
    max_bytes: int | None
    timeout_seconds: float | None
    language: str | None
    base_url: str | None
    headers: tuple[tuple[str, str], ...]


def _common_fields(read: ConfigReader, raw: Mapping[str, object], path: str) -> _CommonFields:
    return {
        "prompt": read.text(raw, "prompt", path),
        "max_chars": read.integer(raw, "maxChars", path, minimum=0),
        "max_bytes": read.integer(raw, "maxBytes", path, minimum=1),
        "timeout_seconds": read.number(raw, "timeoutSeconds", path, minimum=1),
        "language": read.text(raw, "language", path),
        "base_url": read.text(raw, "baseUrl", path),
        "headers": read.headers(raw, path),
    }


def _parse_entries(read: ConfigReader, obj: object, path: str) -> tuple[MediaModelEntry, ...]:
    if isinstance(obj, str) or not isinstance(obj, Sequence):
        read.fail(path, "must be a list")
        return ()
    entries = (_parse_entry(read, item, f"{path}[{i}]") for i, item in enumerate(obj))
    return tuple(entry for entry in entries if entry is not None)


def _parse_entry(read: ConfigReader, obj: object, path: str) -> MediaModelEntry | None:
    raw = read.mapping(obj, path, ENTRY_KEYS)
    if not raw:
        return None
    command = read.text(raw, "command", path)
    kind = read.choice(raw, "type", path, ("cli", "provider")) or ("cli" if command else "provider")
    args = read.strings(raw, "args", path)
    for index, arg in enumerate(args):
        for problem in find_template_errors(arg):
            read.fail(f"{path}.args[{index}]", problem)
    capabilities = read.strings(raw, "capabilities", path)
    for capability in capabilities:
        if capability not in CAPABILITIES:
            read.fail(f"{path}.capabilities", f'unknown capability "{capability}"')
    provider = read.text(raw, "provider", path)
    if kind == "cli" and not (command or "").strip():
        read.fail(f"{path}.command", "required for a cli entry")
    if kind == "provider" and not (provider or "").strip():
        read.fail(f"{path}.provider", "required for a provider entry")
    return MediaModelEntry(
        type=cast(Literal["cli", "provider"], kind),
        command=command,
        args=args,
        provider=provider,
        model=read.text(raw, "model", path),
        capabilities=tuple(c for c in capabilities if c in CAPABILITIES),
        **_common_fields(read, raw, path),
    )


# --- serialisation ------------------------------------------------------------------------

_CAMEL = {
    "max_chars": "maxChars",
    "max_bytes": "maxBytes",
    "timeout_seconds": "timeoutSeconds",
    "base_url": "baseUrl",
    "max_attachments": "maxAttachments",
}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _value_to_json(name: str, value: object) -> object:
    if isinstance(value, ScopeConfig):
        return scope_to_dict(value)
    if isinstance(value, AttachmentPolicy):
        return {_CAMEL.get(f.name, f.name): getattr(value, f.name) for f in fields(value)}
    if name == "headers":
        return dict(cast(tuple[tuple[str, str], ...], value))
    if name == "models":
        return [_fields_to_json(entry) for entry in cast(tuple[MediaModelEntry, ...], value)]
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float):
        return _number(value)
    return value


def _fields_to_json(obj: MediaModelEntry | CapabilityConfig) -> dict[str, object]:
    """Only set values are written: None, empty tuples and default policies are left out."""
    result: dict[str, object] = {}
    for item in fields(obj):
        value = getattr(obj, item.name)
        if value is None or value == () or value == AttachmentPolicy():
            continue
        result[_CAMEL.get(item.name, item.name)] = _value_to_json(item.name, value)
    return result


def media_config_to_dict(config: MediaConfig) -> dict[str, object]:
    """OpenClaw camelCase shape; ``parse_media_config`` of the result gives ``config`` back."""
    result: dict[str, object] = {"concurrency": config.concurrency}
    if config.models:
        result["models"] = _value_to_json("models", config.models)
    for cap in CAPABILITIES:
        section = _fields_to_json(config.capability(cap))
        if section:
            result[cap] = section
    return result


def with_capability(config: MediaConfig, cap: Capability, **changes: object) -> MediaConfig:
    """A copy of ``config`` with some fields of one capability replaced (handy in tests/glue)."""
    updated = replace(config.capability(cap), **changes)  # type: ignore[arg-type]
    return replace(config, **{cap: updated})  # type: ignore[arg-type]
