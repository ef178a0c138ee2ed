"""Canvas documents are owned: only the author or staff may replace a viewId (issue 17, item 12)."""

from __future__ import annotations

import json

import pytest

from richoutput.models import CanvasDocument

pytestmark = pytest.mark.django_db


def store(client, html: str, view_id: str = "board"):
    return client.post(
        "/api/canvas/documents",
        json.dumps({"html": html, "viewId": view_id}),
        content_type="application/json",
    )


@pytest.fixture
def mallory_client(client, django_user_model):
    mallory = django_user_model.objects.create_user(username="mallory", password="m-pass-12345")
    client.force_login(mallory)
    return client


def test_the_author_owns_and_may_replace_their_document(user_client, user) -> None:
    assert store(user_client, "<p>v1</p>").status_code == 201
    assert CanvasDocument.objects.get().owner == user
    assert store(user_client, "<p>v2</p>").status_code == 200
    assert CanvasDocument.objects.get().html == "<p>v2</p>"


def test_another_user_cannot_overwrite_it(user, mallory_client) -> None:
    CanvasDocument.objects.create(view_id="board", html="<p>alice's</p>", owner=user)
    response = store(mallory_client, "<script>steal()</script>")
    assert response.status_code == 403
    assert "belongs to another user" in response.json()["detail"]
    document = CanvasDocument.objects.get()
    assert document.html == "<p>alice's</p>" and document.owner == user


def test_staff_may_replace_anyones_document(user, staff_client) -> None:
    CanvasDocument.objects.create(view_id="board", html="<p>alice's</p>", owner=user)
    assert store(staff_client, "<p>moderated</p>").status_code == 200
    document = CanvasDocument.objects.get()
    assert document.html == "<p>moderated</p>" and document.owner == user


def test_an_ownerless_document_is_replaced_by_staff_only(mallory_client) -> None:
    CanvasDocument.objects.create(view_id="board", html="<p>seeded</p>")
    assert store(mallory_client, "<p>mine now</p>").status_code == 403
    assert CanvasDocument.objects.get().html == "<p>seeded</p>"
