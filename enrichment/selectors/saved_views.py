"""Saved views of the decision history a user can open: their own and everyone's shared ones."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from common.errors import NotFound
from enrichment.models import SavedView

MAX_LISTED = 200  # a page of links, not an unbounded list


def saved_views_for(*, user: Any) -> list[SavedView]:
    """The user's views, then the views others shared, each by name."""
    rows = (
        SavedView.objects.filter(Q(owner=user) | Q(shared=True))
        .select_related("owner")
        .order_by("name", "id")[:MAX_LISTED]
    )
    own = [view for view in rows if view.owner_id == user.pk]
    return own + [view for view in rows if view.owner_id != user.pk]


def saved_view_get(*, user: Any, view_id: int) -> SavedView:
    """One view the user may open (own or shared); anything else is a 404."""
    view = SavedView.objects.filter(Q(owner=user) | Q(shared=True), pk=view_id).first()
    if view is None:
        raise NotFound(f"No saved view with id {view_id}.")
    return view
