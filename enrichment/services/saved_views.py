"""Saved views of the decision history (writes): a user names the filters and sort of
``/decisions/`` and may share them with everyone. Reads are in ``selectors.saved_views``.

What is stored is never the raw query string the browser sent: only the known filter
parameters survive, each validated exactly as the history page validates it, and the result
is the page's own canonical query (so opening a view can never be a 400 or a 500).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.http import QueryDict

from common.errors import InvalidInput, NotFound, PermissionDenied
from common.json_guard import text_problem
from enrichment.models import SavedView
from enrichment.selectors import HistoryFilters, query_params

MAX_NAME = 80
MAX_QUERY = 2000
# What a view keeps: the history's filters and its order (not the page, cursor or limit).
VIEW_PARAMS = (
    "outcome",
    "status",
    "channel",
    "chatType",
    "sessionKey",
    "sessionMatch",
    "url",
    "q",
    "since",
    "until",
    "command",
    "sort",
    "range",
)


def saved_view_query(raw: str) -> str:
    """The canonical history query for ``raw`` (a query string, with or without ``?``):
    unknown parameters dropped, every kept one validated; ``InvalidInput`` names the one at
    fault."""
    if len(raw) > MAX_QUERY:
        raise InvalidInput(f"query: longer than {MAX_QUERY:,} characters", ["query"])
    problem = text_problem(raw)
    if problem is not None:
        raise InvalidInput(f"query: {problem}", ["query"])
    params = QueryDict(raw.removeprefix("?"))
    flat = query_params(params)
    kept = {name: flat[name] for name in VIEW_PARAMS if name in flat}
    query = urlencode(HistoryFilters.from_params(kept).as_params())
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"query: longer than {MAX_QUERY:,} characters", ["query"])
    return query


def _clean_name(raw: str) -> str:
    problem = text_problem(raw)
    if problem is not None:
        raise InvalidInput(f"name: {problem}", ["name"])
    name = " ".join(raw.split())
    if not name:
        raise InvalidInput("name: a view needs a name", ["name"])
    if len(name) > MAX_NAME:
        raise InvalidInput(f"name: longer than {MAX_NAME} characters", ["name"])
    return name


def saved_view_create(*, owner: Any, name: str, query: str, shared: bool) -> SavedView:
    """Store a view of ``owner``; the name must be new among the owner's views."""
    clean = _clean_name(name)
    canonical = saved_view_query(query)
    taken = f"name: you already have a view called {clean!r}; choose another name"
    if SavedView.objects.filter(owner=owner, name=clean).exists():
        raise InvalidInput(taken, ["name"])
    try:
        with transaction.atomic():
            return SavedView.objects.create(
                owner=owner, name=clean, query=canonical, shared=bool(shared)
            )
    except IntegrityError:  # the same name saved a moment ago (another tab)
        raise InvalidInput(taken, ["name"]) from None


def saved_view_delete(*, user: Any, view_id: int) -> SavedView:
    """Delete one of ``user``'s views. Someone else's shared view is a 403 (it can be used,
    not deleted); someone else's private view, like a missing one, is a 404."""
    view = SavedView.objects.filter(pk=view_id).first()
    if view is None or (view.owner_id != user.pk and not view.shared):
        raise NotFound(f"No saved view with id {view_id}.")
    if view.owner_id != user.pk:
        raise PermissionDenied("Only its owner can delete a shared view.")
    view.delete()
    return view
