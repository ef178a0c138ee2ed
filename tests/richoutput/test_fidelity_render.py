"""Issue 15, rich output (notes §4.2): ``MEDIA:`` edge cases through ``POST /api/render``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client


def render(client: Client, **payload: Any) -> dict[str, Any]:
    response = client.post("/api/render", json.dumps(payload), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize(
    ("line", "accepted", "visible"),
    [
        (
            r"MEDIA:C:\Users\First Last\shot.png https://127.0.0.1/secret.png",
            [r"C:\Users\First Last\shot.png"],
            "https://127.0.0.1/secret.png",
        ),
        (
            "MEDIA:/Users/pete/My File.png http://example.com/a.png",
            ["/Users/pete/My File.png"],
            "http://example.com/a.png",
        ),
        (
            "MEDIA:./shots/My Shot.png https://localhost/x.png",
            ["./shots/My Shot.png"],
            "https://localhost/x.png",
        ),
    ],
    ids=["windows-spaced-path", "posix-spaced-path-http", "relative-spaced-path-localhost"],
)
def test_rejected_url_next_to_a_spaced_path_stays_visible(
    user_client: Client, line: str, accepted: list[str], visible: str
) -> None:
    result = render(user_client, text=f"Here you go\n{line}")
    assert result["mediaUrls"] == accepted
    assert result["text"] == f"Here you go\n{visible}"


def test_spaced_path_alone_is_still_one_reference(user_client: Client) -> None:
    result = render(user_client, text="MEDIA:C:\\Users\\First Last\\shot.png")
    assert result["mediaUrls"] == ["C:\\Users\\First Last\\shot.png"]
    assert result["text"] == ""


@pytest.mark.parametrize(
    "text", ["MEDIA:image.png", "MEDIA: image.png ", "MEDIA:`image.png`"], ids=str
)
def test_bare_filename_as_the_whole_payload_is_accepted(user_client: Client, text: str) -> None:
    result = render(user_client, text=f"Done.\n{text}")
    assert result["mediaUrls"] == ["image.png"]
    assert result["text"] == "Done."


def test_bare_filename_next_to_another_reference_is_not_a_reference(user_client: Client) -> None:
    result = render(user_client, text="MEDIA:https://example.com/a.png image.png")
    assert result["mediaUrls"] == ["https://example.com/a.png"]
    assert result["text"] == "image.png"


def test_structured_media_urls_accept_a_bare_filename(user_client: Client) -> None:
    result = render(
        user_client,
        text="see attachment",
        mediaUrls=["image.png", "https://example.com/b.png", "https://127.0.0.1/c.png", "x"],
    )
    assert result["mediaUrls"] == ["image.png", "https://example.com/b.png"]


@pytest.mark.parametrize(
    "entry",
    ["../image.png", "~user/image.png", "image", "javascript:alert(1).png", "a.png\x1f.sh"],
    ids=["traversal", "other-home", "no-extension", "script-scheme", "control-character"],
)
def test_structured_media_urls_still_refuse_unsafe_entries(user_client: Client, entry: str) -> None:
    result = render(user_client, text="hi", mediaUrls=[entry])
    assert result["mediaUrls"] == []


def test_a_nul_in_structured_media_urls_is_refused_naming_the_entry(user_client: Client) -> None:
    # NUL never reaches the renderer: the API's input guard refuses it (422, field named).
    response = user_client.post(
        "/api/render",
        {"text": "hi", "mediaUrls": ["a.png\x00.sh"]},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["errors"] == ["mediaUrls.0: contains a NUL character (U+0000)"]
