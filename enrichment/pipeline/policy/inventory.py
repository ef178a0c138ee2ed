"""Tool names, groups, profiles, the tool inventory, and matching names against them.

The config values and the stage pipeline live in `enrichment.pipeline.policy.resolve`. Facts follow
`reference/web-fetch-and-tool-policy.md` part B (baseline era): B1 names, B2 groups,
B3 profiles, B4 matching, B6 agent ids, B9 unknown / plugin-only allowlists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

# JavaScript's String.prototype.trim() set. Python's str.strip() differs at the edges
# (it keeps U+FEFF and strips U+001C..U+001F), and the reference trims the JS way.
JS_WHITESPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

TOOL_NAME_ALIASES: Mapping[str, str] = MappingProxyType(
    {"bash": "exec", "apply-patch": "apply_patch"}
)

PLUGINS_GROUP = "group:plugins"

DROPPED_ALLOWLIST_SUFFIX = (
    "Ignoring allowlist so core tools remain available. "
    "Use tools.alsoAllow for additive plugin tool enablement."
)
KEPT_ALLOWLIST_SUFFIX = "These entries won't match any tool unless the plugin is enabled."

REASON_DENIED = "denied"
REASON_NOT_ALLOWED = "not in allowlist"

_SESSION_TOOLS = (
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
)

# Static groups (B2). `group:plugins` and plugin ids are dynamic and expanded per inventory.
TOOL_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "group:memory": ("memory_search", "memory_get"),
        "group:web": ("web_search", "web_fetch"),
        "group:fs": ("read", "write", "edit", "apply_patch"),
        "group:runtime": ("exec", "process"),
        "group:sessions": _SESSION_TOOLS,
        "group:ui": ("browser", "canvas"),
        "group:automation": ("cron", "gateway"),
        "group:messaging": ("message",),
        "group:nodes": ("nodes",),
        "group:openclaw": (
            "browser",
            "canvas",
            "nodes",
            "cron",
            "message",
            "gateway",
            "agents_list",
            *_SESSION_TOOLS,
            "memory_search",
            "memory_get",
            "web_search",
            "web_fetch",
            "image",
        ),
    }
)

PROFILE_NAMES: tuple[str, ...] = ("minimal", "coding", "messaging", "full")

# B3. `full` has no allowlist: it restricts nothing, exactly like an unset profile.
TOOL_PROFILES: Mapping[str, tuple[str, ...] | None] = MappingProxyType(
    {
        "minimal": ("session_status",),
        "coding": ("group:fs", "group:runtime", "group:sessions", "group:memory", "image"),
        "messaging": (
            "group:messaging",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
        ),
        "full": None,
    }
)


@dataclass(frozen=True)
class BuiltinTool:
    """A built-in tool and the most specific policy group that names it."""

    name: str
    group: str


# The seed docs inventory, in the docs' group order. `image` and `agents_list` belong to no
# specific group, only to `group:openclaw`.
BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (
    *(BuiltinTool(name, "group:runtime") for name in ("exec", "process")),
    *(BuiltinTool(name, "group:fs") for name in ("read", "write", "edit", "apply_patch")),
    *(BuiltinTool(name, "group:sessions") for name in _SESSION_TOOLS),
    *(BuiltinTool(name, "group:memory") for name in ("memory_search", "memory_get")),
    *(BuiltinTool(name, "group:web") for name in ("web_search", "web_fetch")),
    *(BuiltinTool(name, "group:ui") for name in ("browser", "canvas")),
    *(BuiltinTool(name, "group:automation") for name in ("cron", "gateway")),
    BuiltinTool("message", "group:messaging"),
    BuiltinTool("nodes", "group:nodes"),
    BuiltinTool("image", "group:openclaw"),
    BuiltinTool("agents_list", "group:openclaw"),
)

BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in BUILTIN_TOOLS)


def tool_groups() -> dict[str, list[str]]:
    """Return the static policy groups (a fresh copy, safe to mutate) for grouping the UI."""
    return {group: list(members) for group, members in TOOL_GROUPS.items()}


def js_trim(value: str) -> str:
    return value.strip(JS_WHITESPACE)


def normalize_tool_name(name: str) -> str:
    """Trim, lower-case, then resolve aliases: `" Bash "` → `"exec"`."""
    normalized = js_trim(name).lower()
    return TOOL_NAME_ALIASES.get(normalized, normalized)


def normalize_tool_list(entries: Iterable[str] | None) -> list[str]:
    """Normalise every entry and drop the empty ones (duplicates are kept)."""
    if entries is None:
        return []
    return [name for name in (normalize_tool_name(entry) for entry in entries) if name]


def unique(values: Iterable[str]) -> list[str]:
    """Remove duplicates, keeping the first occurrence's position."""
    return list(dict.fromkeys(values))


def expand_tool_groups(entries: Iterable[str] | None) -> list[str]:
    """Normalise entries and expand the static groups; an unknown `group:x` stays literal."""
    expanded: list[str] = []
    for entry in normalize_tool_list(entries):
        expanded.extend(TOOL_GROUPS.get(entry, (entry,)))
    return unique(expanded)


DEFAULT_AGENT_ID = "main"
_VALID_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}", re.IGNORECASE | re.ASCII)
_INVALID_AGENT_ID_CHARS = re.compile(r"[^a-z0-9_-]+")


def normalize_agent_id(value: str | None) -> str:
    """Normalise an agent id the way the reference does (B6).

    `" Support "` → `"support"`; `"My Agent!"` → `"my-agent"`; `""` and `"!!!"` → `"main"`.
    Dashes are trimmed *before* cutting to 64 characters, so a cut can leave a trailing dash.
    """
    trimmed = js_trim(value or "")
    if not trimmed:
        return DEFAULT_AGENT_ID
    if _VALID_AGENT_ID.fullmatch(trimmed):
        return trimmed.lower()
    collapsed = _INVALID_AGENT_ID_CHARS.sub("-", trimmed.lower()).strip("-")
    return collapsed[:64] or DEFAULT_AGENT_ID


@dataclass(frozen=True)
class InventoryTool:
    """One tool offered to the policy: its name as given, its normalised key, its plugin."""

    name: str
    key: str
    plugin_id: str | None = None


@dataclass(frozen=True)
class ToolInventory:
    """The tools a resolution starts from: core tools first, then plugin tools.

    >>> inv = ToolInventory.build(["read", "exec"], {"Lobster": ["lobster", "workflow_tool"]})
    >>> [tool.key for tool in inv.tools], inv.plugin_ids
    (['read', 'exec', 'lobster', 'workflow_tool'], ('lobster',))
    """

    tools: tuple[InventoryTool, ...]

    @classmethod
    def build(
        cls,
        available: Iterable[str] | None = None,
        plugin_tools: Mapping[str, Sequence[str]] | None = None,
    ) -> ToolInventory:
        """Build from core tool names (default: the built-ins) and plugin id → tool names.

        Blank names are skipped and a name given twice is kept once (first occurrence).
        """
        core = BUILTIN_TOOL_NAMES if available is None else available
        entries: list[tuple[str, str | None]] = [(name, None) for name in core]
        for plugin_id, names in (plugin_tools or {}).items():
            entries.extend((name, js_trim(plugin_id).lower()) for name in names)
        tools: list[InventoryTool] = []
        seen: set[str] = set()
        for name, owner in entries:
            key = normalize_tool_name(name)
            if key and name not in seen:
                seen.add(name)
                tools.append(InventoryTool(name, key, owner))
        return cls(tuple(tools))

    @cached_property
    def core_keys(self) -> frozenset[str]:
        return frozenset(tool.key for tool in self.tools if tool.plugin_id is None)

    @cached_property
    def plugin_keys(self) -> tuple[str, ...]:
        return tuple(unique(tool.key for tool in self.tools if tool.plugin_id is not None))

    @cached_property
    def plugin_ids(self) -> tuple[str, ...]:
        return tuple(unique(tool.plugin_id for tool in self.tools if tool.plugin_id is not None))

    def plugin_tool_keys(self, plugin_id: str) -> tuple[str, ...]:
        return tuple(unique(tool.key for tool in self.tools if tool.plugin_id == plugin_id))

    def expand_plugin_entries(self, entries: Iterable[str] | None) -> list[str] | None:
        """Replace `group:plugins` and plugin ids by the plugin tools they stand for.

        With no plugin tools loaded, `group:plugins` stays literal and so matches nothing.
        """
        if entries is None:
            return None
        expanded: list[str] = []
        for entry in normalize_tool_list(entries):
            if entry == PLUGINS_GROUP and self.plugin_keys:
                expanded.extend(self.plugin_keys)
            else:
                expanded.extend(self.plugin_tool_keys(entry) or (entry,))
        return unique(expanded)


# --- matching (B4) ----------------------------------------------------------------------


@dataclass(frozen=True)
class Glob:
    """An anchored glob where only `*` is special (any run of characters, newlines too).

    Matched by scanning for the literal pieces left to right instead of with a regex, so a
    hostile pattern like `*a*a*a*a*c` cannot trigger catastrophic backtracking.
    """

    pieces: tuple[str, ...]

    @classmethod
    def compile(cls, pattern: str) -> Glob:
        return cls(tuple(pattern.split("*")))

    def matches(self, name: str) -> bool:
        head, *middle, tail = self.pieces
        end = len(name) - len(tail)
        if end < len(head) or not name.startswith(head) or not name.endswith(tail):
            return False
        position = len(head)
        for piece in middle:
            found = name.find(piece, position, end)
            if found < 0:
                return False
            position = found + len(piece)
        return True


@dataclass(frozen=True)
class ToolPatterns:
    """A compiled allow or deny list: `*`, exact names and anchored globs."""

    match_all: bool = False
    exact: frozenset[str] = frozenset()
    globs: tuple[Glob, ...] = ()

    @classmethod
    def compile(cls, entries: Sequence[str] | None) -> ToolPatterns:
        names = expand_tool_groups(entries)
        return cls(
            match_all="*" in names,
            exact=frozenset(name for name in names if "*" not in name),
            globs=tuple(Glob.compile(name) for name in names if "*" in name and name != "*"),
        )

    @property
    def empty(self) -> bool:
        return not (self.match_all or self.exact or self.globs)

    def matches(self, key: str) -> bool:
        if self.match_all or key in self.exact:
            return True
        return any(glob.matches(key) for glob in self.globs)


@dataclass(frozen=True)
class ToolMatcher:
    """One policy `{allow?, deny?}`: deny wins; an empty allow restricts nothing."""

    allow: ToolPatterns
    deny: ToolPatterns

    @classmethod
    def compile(cls, allow: Sequence[str] | None, deny: Sequence[str] | None) -> ToolMatcher:
        return cls(ToolPatterns.compile(allow), ToolPatterns.compile(deny))

    def rejection(self, name: str) -> str | None:
        """Return why `name` is removed, or None when it is allowed."""
        key = normalize_tool_name(name)
        if self.deny.matches(key):
            return REASON_DENIED
        if self.allow.empty or self.allow.matches(key):
            return None
        # apply_patch rides on exec: allowing exec (or bash, group:runtime) allows it too.
        if key == "apply_patch" and self.allow.matches("exec"):
            return None
        return REASON_NOT_ALLOWED


def is_tool_allowed(
    name: str, *, allow: Sequence[str] | None = None, deny: Sequence[str] | None = None
) -> bool:
    """Check one tool against one policy (static groups only, no plugin expansion)."""
    return ToolMatcher.compile(allow, deny).rejection(name) is None


# --- unknown / plugin-only allowlists (B9) ----------------------------------------------


@dataclass(frozen=True)
class AllowlistCheck:
    """Outcome of B9 for one stage: unknown entries, and whether the allowlist is dropped."""

    unknown: tuple[str, ...] = ()
    dropped: bool = False


def check_allowlist(allow: Sequence[str] | None, inventory: ToolInventory) -> AllowlistCheck:
    """Classify allow entries as core, plugin or unknown (B9).

    An entry is core only if its *literal* group expansion names an available core tool,
    so a glob like `web_*` is never core. Without a core entry (or `*`) the allowlist is
    dropped: `allow ["web_*"]` alone keeps every tool and warns.
    """
    entries = normalize_tool_list(allow)
    has_core = "*" in entries
    unknown: list[str] = []
    for entry in entries:
        if entry == "*":
            continue
        is_core = any(name in inventory.core_keys for name in expand_tool_groups([entry]))
        is_plugin = (
            entry == PLUGINS_GROUP
            or entry in inventory.plugin_ids
            or entry in inventory.plugin_keys
        )
        has_core = has_core or is_core
        if not (is_core or is_plugin):
            unknown.append(entry)
    return AllowlistCheck(tuple(unique(unknown)), dropped=bool(entries) and not has_core)


def allowlist_warning(label: str, check: AllowlistCheck) -> str:
    suffix = DROPPED_ALLOWLIST_SUFFIX if check.dropped else KEPT_ALLOWLIST_SUFFIX
    entries = ", ".join(check.unknown)
    return f"tools: {label} allowlist contains unknown entries ({entries}). {suffix}"
