"""Saved views of the history: named filter sets (and sort) per user, optionally shared.

Create from the page's form (POST + CSRF), list them as links that restore the filters,
delete one's own; others' shared views are usable but not deletable, others' private ones do
not exist for you. Hostile names and query strings are refused by name, never stored raw.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from enrichment.models import Run, SavedView

pytestmark = pytest.mark.django_db


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-pass-123")


@pytest.fixture
def bob_client(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


def save(client: Client, name: str, query: str, shared: bool = False, **extra: str):
    data = {"name": name, "query": query, **extra}
    if shared:
        data["shared"] = "on"
    return client.post("/decisions/views/", data)


def listed(html: str) -> list[tuple[str, str]]:
    """(name, href) of each saved view link on the history page."""
    block = re.search(r'<section class="card saved-views".*?</section>', html, re.S)
    assert block, "no saved-views section"
    return [
        (name, href.replace("&amp;", "&"))
        for href, name in re.findall(r'<li>\s*<a href="([^"]+)">([^<]*)</a>', block.group(0))
    ]


def test_empty_state_and_form(user_client) -> None:
    html = user_client.get("/decisions/?outcome=error&sort=-duration").content.decode()
    assert "No saved views yet" in html
    form = re.search(r'<form method="post" action="/decisions/views/".*?</form>', html, re.S)
    assert form, "no save form"
    assert 'name="csrfmiddlewaretoken"' in form.group(0)
    assert 'name="query" value="outcome=error&amp;sort=-duration"' in form.group(0)
    assert 'maxlength="80" required' in form.group(0)


def test_save_keeps_only_known_filters_and_restores_them(user_client, user) -> None:
    Run.objects.create(outcome="error", channel="slack", duration_ms=5)
    response = save(
        user_client,
        "  Slow   errors ",
        "?outcome=error&channel=slack&sort=-duration&cursor=abc&limit=7&trail=x&evil=1",
    )
    assert response.status_code == 303
    view = SavedView.objects.get()
    assert (view.owner, view.name, view.shared) == (user, "Slow errors", False)
    assert parse_qs(view.query) == {
        "outcome": ["error"],
        "channel": ["slack"],
        "sort": ["-duration"],
    }
    target = urlsplit(response["Location"])
    assert target.path == "/decisions/" and parse_qs(target.query) == parse_qs(view.query)
    html = user_client.get(response["Location"]).content.decode()
    assert "Saved the view “Slow errors”." in html
    assert listed(html) == [("Slow errors", "/decisions/?" + view.query)]
    # The link restores filters and order.
    opened = user_client.get("/decisions/?" + view.query).content.decode()
    assert '<option value="-duration" selected>' in opened
    assert 'value="slack"' in opened
    # And so does its stable address.
    redirect = user_client.get(f"/decisions/views/{view.pk}/")
    assert redirect.status_code == 302 and redirect["Location"] == "/decisions/?" + view.query


def test_an_empty_view_is_the_whole_history(user_client) -> None:
    assert save(user_client, "Everything", "").status_code == 303
    assert listed(user_client.get("/decisions/").content.decode()) == [
        ("Everything", "/decisions/")
    ]


def test_names_are_unique_per_user_not_across_users(user_client, bob_client) -> None:
    assert save(user_client, "Errors", "outcome=error").status_code == 303
    again = save(user_client, "Errors", "outcome=success")
    assert again.status_code == 400
    html = again.content.decode()
    assert "you already have a view called &#x27;Errors&#x27;" in html
    assert (
        'id="view-name" name="name" maxlength="80" required value="Errors" aria-invalid="true"'
        in html
    )
    # The page the form was on is shown again (its filters kept).
    assert 'name="outcome" value="success" form="history-filters" checked>' in html
    assert SavedView.objects.filter(name="Errors").count() == 1
    assert save(bob_client, "Errors", "outcome=error").status_code == 303
    assert SavedView.objects.filter(name="Errors").count() == 2


@pytest.mark.parametrize(
    "name, query, problem",
    [
        ("", "outcome=error", "name: a view needs a name"),
        ("   ", "", "name: a view needs a name"),
        ("x" * 81, "", "name: longer than 80 characters"),
        ("bad\x00name", "", "name: contains a NUL character"),
        ("ok", "outcome=error&q=a%00b", "q: contains a NUL character"),
        ("ok", "outcome=" + "e" * 2100, "query: longer than 2,000 characters"),
        ("ok", "channel=" + "%C3%A9" * 400, "query: longer than 2,000 characters"),
        ("ok", "outcome=bogus", "outcome: unknown outcome"),
        ("ok", "sort=size", "sort: unknown order"),
        ("ok", "since=yesterday", "since: not an ISO 8601"),
    ],
    ids=[
        "empty",
        "blank",
        "overlong-name",
        "nul-name",
        "nul-in-query",
        "overlong-query",
        "overlong-encoded-query",
        "bad-outcome",
        "bad-sort",
        "bad-date",
    ],
)
def test_hostile_input_is_refused_by_name(user_client, name, query, problem) -> None:
    response = save(user_client, name, query)
    assert response.status_code == 400
    assert problem in response.content.decode()
    assert not SavedView.objects.exists()


def test_eighty_characters_is_fine(user_client) -> None:
    assert save(user_client, "é" * 80, "").status_code == 303
    assert SavedView.objects.get().name == "é" * 80


def test_name_is_escaped_everywhere(user_client) -> None:
    save(user_client, "<img src=x onerror=alert(1)>", "outcome=error")
    html = user_client.get("/decisions/").content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_shared_views_are_listed_for_others_but_only_the_owner_deletes(
    user_client, bob_client, user
) -> None:
    save(user_client, "Team errors", "outcome=error", shared=True)
    save(user_client, "My drafts", "outcome=running")
    shared = SavedView.objects.get(name="Team errors")
    private = SavedView.objects.get(name="My drafts")

    html = bob_client.get("/decisions/").content.decode()
    assert listed(html) == [("Team errors", "/decisions/?outcome=error")]
    assert "shared by alice" in html
    assert f"/decisions/views/{shared.pk}/delete/" not in html  # no delete button for bob
    assert bob_client.get(f"/decisions/views/{shared.pk}/").status_code == 302
    assert bob_client.get(f"/decisions/views/{private.pk}/").status_code == 404

    refused = bob_client.post(f"/decisions/views/{shared.pk}/delete/")
    assert refused.status_code == 403
    assert "Only its owner can delete a shared view." in refused.content.decode()
    assert bob_client.post(f"/decisions/views/{private.pk}/delete/").status_code == 404
    assert bob_client.post("/decisions/views/999999/delete/").status_code == 404
    assert SavedView.objects.count() == 2

    own = user_client.get("/decisions/").content.decode()
    assert [name for name, _ in listed(own)] == ["My drafts", "Team errors"]
    deleted = user_client.post(f"/decisions/views/{private.pk}/delete/")
    assert deleted.status_code == 303 and deleted["Location"] == "/decisions/"
    assert "Deleted the view “My drafts”." in user_client.get("/decisions/").content.decode()
    assert list(SavedView.objects.values_list("name", flat=True)) == ["Team errors"]


def test_others_shared_views_come_after_ones_own(user_client, bob_client) -> None:
    save(bob_client, "Alpha (bob)", "outcome=error", shared=True)
    save(user_client, "Zulu", "outcome=success")
    names = [name for name, _ in listed(user_client.get("/decisions/").content.decode())]
    assert names == ["Zulu", "Alpha (bob)"]


def test_writes_need_post_and_csrf(user) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post("/decisions/views/", {"name": "x", "query": ""}).status_code == 403
    assert client.get("/decisions/views/").status_code == 405
    view = SavedView.objects.create(owner=user, name="kept", query="")
    assert client.post(f"/decisions/views/{view.pk}/delete/").status_code == 403
    assert client.get(f"/decisions/views/{view.pk}/delete/").status_code == 405
    assert SavedView.objects.filter(pk=view.pk).exists()
    # With the token from the page's form it works.
    html = client.get("/decisions/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        "/decisions/views/", {"name": "x", "query": "", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 303


def test_anonymous_cannot_save_or_list(client) -> None:
    response = client.post("/decisions/views/", {"name": "x", "query": ""})
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert not SavedView.objects.exists()
