"""Check a validated config document against the columns it will be written to.

The pure core validates meaning (a timeout is a positive integer, a command is a non-empty
string); it knows nothing of column widths. PostgreSQL refuses a 400-character user agent in
a ``varchar(300)`` and 3e9 in an ``integer`` column (SQLite silently keeps both), so without
this check such a document passes validation and fails halfway through
``config_store.config_write`` as a 500. Each limit is read from the model field itself, and
the integer ranges are the portable ones (the same answer on SQLite and PostgreSQL).

It mirrors the traversal of ``config_write``: every value written to a column is checked
under the document path it came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

from enrichment.config.fields import FETCH_FIELDS, LINK_FIELDS
from enrichment.models import Agent, EnrichmentConfig, LinkModel, ScopeRule

_SCOPE_MATCH = (("channel", "channel"), ("chatType", "chat_type"), ("keyPrefix", "key_prefix"))


def column_problem(model: type[models.Model], field_name: str, value: Any) -> str | None:
    """Why ``value`` does not fit the column of ``model.field_name``, or None."""
    field = model._meta.get_field(field_name)
    assert isinstance(field, models.Field)
    if isinstance(value, str) and field.max_length is not None and len(value) > field.max_length:
        return f"at most {field.max_length} characters, got {len(value)}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = BaseDatabaseOperations.integer_field_ranges.get(
            field.get_internal_type(), (None, None)
        )
        if high is not None and value > high:
            return (
                f"at most {high}, got {value:g}"
                if isinstance(value, float)
                else f"at most {high}, got {value}"
            )
        if low is not None and value < low:
            return f"at least {low}, got {value}"
    return None


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def value(self, path: str, model: type[models.Model], field: str, value: Any) -> None:
        problem = column_problem(model, field, value)
        if problem is not None:
            self.problems.append(f"{path}: {problem}")

    def scalars(
        self,
        path: str,
        model: type[models.Model],
        source: Mapping[str, Any],
        pairs: Iterable[tuple[str, str]],
    ) -> None:
        for key, field in pairs:
            if key in source:
                self.value(f"{path}.{key}", model, field, source[key])

    def scope(self, path: str, scope: Any) -> None:
        if not isinstance(scope, Mapping):
            return
        for index, rule in enumerate(_list(scope.get("rules"))):
            if isinstance(rule, Mapping) and isinstance(rule.get("match"), Mapping):
                self.scalars(f"{path}.rules[{index}].match", ScopeRule, rule["match"], _SCOPE_MATCH)

    def link_models(self, path: str, entries: Any) -> None:
        for index, entry in enumerate(_list(entries)):
            if isinstance(entry, Mapping):
                self.scalars(
                    f"{path}[{index}]",
                    LinkModel,
                    entry,
                    (("command", "command"), ("timeoutSeconds", "timeout_seconds")),
                )

    def links(self, path: str, model: type[models.Model], links: Mapping[str, Any]) -> None:
        self.scalars(path, model, links, LINK_FIELDS)
        self.scope(f"{path}.scope", links.get("scope"))
        self.link_models(f"{path}.models", links.get("models"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def config_column_problems(document: Mapping[str, Any]) -> list[str]:
    """Every value of ``document`` too long or too large for its column, by document path."""
    check = _Checker()
    tools = _mapping(document.get("tools"))
    check.links("tools.links", EnrichmentConfig, _mapping(tools.get("links")))
    fetch = _mapping(_mapping(tools.get("web")).get("fetch"))
    check.scalars("tools.web.fetch", EnrichmentConfig, fetch, FETCH_FIELDS)
    for index, agent in enumerate(_list(_mapping(document.get("agents")).get("list"))):
        if not isinstance(agent, Mapping):
            continue
        path = f"agents.list[{index}]"
        check.scalars(path, Agent, agent, (("id", "agent_id"),))
        agent_links = _mapping(_mapping(agent.get("tools")).get("links"))
        check.links(f"{path}.tools.links", Agent, agent_links)
    return check.problems
