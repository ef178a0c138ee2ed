"""The rich-output API (SPEC §9): render, neutralize, stored messages, canvas documents."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.models import ApiToken
from richoutput import services as canvas_services
from richoutput.models import AssistantMessage, CanvasBlock, CanvasDocument

pytestmark = pytest.mark.django_db

RICH_TEXT = (
    "[[reply_to_current]] Build finished.\n"
    '[embed ref="cv_status" title="Status" height="400" /]\n'
    "[[audio_as_voice]]\n"
    "MEDIA:https://example.com/summary.ogg"
)
STATUS_BLOCK = {
    "type": "canvas",
    "preview": {
        "kind": "canvas",
        "surface": "assistant_message",
        "render": "url",
        "viewId": "cv_status",
        "url": "/__openclaw__/canvas/documents/cv_status/index.html",
        "title": "Status",
        "preferredHeight": 400,
    },
}
STATUS_IFRAME = {
    "src": "/__openclaw__/canvas/documents/cv_status/index.html",
    "sandbox": "allow-scripts",
    "height": 400,
    "title": "Status",
    "refused": None,
}
RECORD_KEYS = {
    "id", "url", "createdAt", "sessionKey", "currentMessageId", "rawText", "text",
    "replyToId", "replyToCurrent", "audioAsVoice", "mediaUrls", "blocks",
}  # fmt: skip


def post(client: Client, path: str, payload: object, **extra: str):
    return client.post(path, payload, content_type="application/json", **extra)


# --- authentication ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/render"),
        ("post", "/api/render/neutralize"),
        ("get", "/api/messages"),
        ("post", "/api/messages"),
        ("get", "/api/messages/1"),
        ("post", "/api/canvas/documents"),
    ],
    ids=["render", "neutralize", "messages-list", "messages-create", "message-detail", "documents"],
)
def test_every_endpoint_requires_authentication(client: Client, method: str, path: str) -> None:
    response = getattr(client, method)(path, {"text": "hi"}, content_type="application/json")
    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]
    assert AssistantMessage.objects.count() == 0


def test_bearer_token_is_accepted(client: Client, user) -> None:
    _, secret = ApiToken.issue(user=user)
    response = post(client, "/api/render", {"text": "hi"}, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    assert response.json()["text"] == "hi"


def test_session_writes_need_the_csrf_token(user) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    refused = post(browser, "/api/render", {"text": "hi"})
    assert refused.status_code == 403
    browser.get("/render/")
    token = browser.cookies["csrftoken"].value
    accepted = post(browser, "/api/render", {"text": "hi"}, HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200


# --- POST /api/render ----------------------------------------------------------------------


def test_render_returns_the_exact_shape_and_stores_nothing(user_client: Client) -> None:
    response = post(user_client, "/api/render", {"text": RICH_TEXT, "currentMessageId": "m-42"})
    assert response.status_code == 200
    assert response.json() == {
        "text": "Build finished.",
        "replyToId": "m-42",
        "replyToCurrent": True,
        "audioAsVoice": True,
        "mediaUrls": ["https://example.com/summary.ogg"],
        "blocks": [STATUS_BLOCK],
        "messageId": None,
        "iframes": [STATUS_IFRAME],
        "embedNotices": [],
    }
    assert AssistantMessage.objects.count() == 0


def test_render_plain_text_has_empty_metadata(user_client: Client) -> None:
    body = post(user_client, "/api/render", {"text": "  just text  "}).json()
    assert body == {
        "text": "  just text",
        "replyToId": None,
        "replyToCurrent": False,
        "audioAsVoice": False,
        "mediaUrls": [],
        "blocks": [],
        "messageId": None,
        "iframes": [],
        "embedNotices": [],
    }


def test_render_with_store_keeps_the_message_and_its_blocks(user_client: Client) -> None:
    payload = {
        "text": RICH_TEXT,
        "store": True,
        "sessionKey": "agent:main:web",
        "currentMessageId": "m-1",
    }
    body = post(user_client, "/api/render", payload).json()
    message = AssistantMessage.objects.get(pk=body["messageId"])
    assert message.raw_text == RICH_TEXT
    assert message.session_key == "agent:main:web"
    assert (message.text, message.reply_to_id, message.audio_as_voice) == (
        "Build finished.",
        "m-1",
        True,
    )
    assert [row.block for row in message.blocks.all()] == [STATUS_BLOCK]
    assert body["blocks"] == [STATUS_BLOCK] and body["iframes"] == [STATUS_IFRAME]
    stored = user_client.get(f"/api/messages/{message.pk}").json()
    assert {key: stored[key] for key in ("text", "replyToId", "mediaUrls", "blocks")} == {
        key: body[key] for key in ("text", "replyToId", "mediaUrls", "blocks")
    }


def test_structured_media_urls_go_through_the_validator(user_client: Client) -> None:
    payload = {
        "text": "see attachments",
        "mediaUrls": [
            "https://example.com/a.png",
            "http://example.com/b.png",
            "https://127.0.0.1/c",
        ],
    }
    assert post(user_client, "/api/render", payload).json()["mediaUrls"] == [
        "https://example.com/a.png"
    ]


@pytest.mark.parametrize(
    ("setting", "value", "url", "expected"),
    [
        ("CANVAS_SANDBOX_MODE", "strict", "/__openclaw__/canvas/x.html", ("/__openclaw__/canvas/x.html", "")),
        ("CANVAS_SANDBOX_MODE", "trusted", "/__openclaw__/canvas/x.html", ("/__openclaw__/canvas/x.html", "allow-scripts allow-same-origin")),
        ("CANVAS_ALLOW_EXTERNAL_EMBED_URLS", False, "https://example.com/w", (None, "allow-scripts")),
        ("CANVAS_ALLOW_EXTERNAL_EMBED_URLS", True, "https://example.com/w", ("https://example.com/w", "allow-scripts")),
        ("CANVAS_SANDBOX_MODE", "default", "/admin/", (None, "allow-scripts")),
        ("CANVAS_SANDBOX_MODE", "default", "/__openclaw__/canvas/../../admin/", (None, "allow-scripts")),
    ],
    ids=["strict", "trusted", "external-refused", "external-allowed", "other-path", "dot-dot-escape"],
)  # fmt: skip
def test_iframes_follow_the_embed_settings(
    user_client: Client, settings, setting: str, value: object, url: str, expected: tuple
) -> None:
    setattr(settings, setting, value)
    text = f'[embed url="{url}" title="T" height="90" /]'
    frame = post(user_client, "/api/render", {"text": text}).json()["iframes"][0]
    assert (frame["src"], frame["sandbox"]) == expected
    assert frame["height"] == 320  # 90 is below the 160 floor, so the block has no height


def test_hostile_embed_title_is_returned_as_plain_data(user_client: Client) -> None:
    text = '[embed ref="cv_1" title="<img src=x onerror=alert(1)>" /]'
    body = post(user_client, "/api/render", {"text": text}).json()
    assert body["blocks"][0]["preview"]["title"] == "<img src=x onerror=alert(1)>"
    assert body["iframes"][0]["title"] == "<img src=x onerror=alert(1)>"


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "payload", "needle"),
    [
        ("/api/render", {}, "Field required"),
        ("/api/render", {"text": 5}, "valid string"),
        ("/api/render", {"text": "x" * (canvas_services.MAX_TEXT_CHARS + 1)}, "1048576"),
        ("/api/render", {"text": "x", "mediaUrls": ["https://e.com/a"] * 65}, "64"),
        ("/api/render", {"text": "x", "mediaUrls": "https://e.com/a"}, "valid list"),
        ("/api/render", {"text": "x", "currentMessageId": "i" * 257}, "256"),
        ("/api/render", {"text": "x", "store": "maybe"}, "valid boolean"),
        ("/api/render/neutralize", {"text": "x" * (canvas_services.MAX_TEXT_CHARS + 1)}, "1048576"),
        ("/api/messages", {"sessionKey": "s"}, "Field required"),
        ("/api/messages", {"text": "x" * (canvas_services.MAX_TEXT_CHARS + 1)}, "1048576"),
        ("/api/canvas/documents", {"viewId": "cv_1"}, "Field required"),
    ],
    ids=[
        "render-missing-text", "render-text-not-string", "render-text-too-long",
        "render-too-many-media", "render-media-not-list", "render-current-id-too-long",
        "render-store-not-bool", "neutralize-too-long", "messages-missing-text",
        "messages-text-too-long", "documents-missing-html",
    ],
)  # fmt: skip
def test_invalid_input_is_a_422_that_says_why(
    user_client: Client, settings, path: str, payload: dict, needle: str
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
    response = post(user_client, path, payload)
    assert response.status_code == 422
    assert needle in str(response.json()["detail"])
    assert AssistantMessage.objects.count() == 0


def test_malformed_json_is_a_client_error(user_client: Client) -> None:
    response = user_client.post("/api/render", "{not json", content_type="application/json")
    assert 400 <= response.status_code < 500


# --- POST /api/render/neutralize -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MEDIA:/etc/passwd", "[neutralized] MEDIA:/etc/passwd"),
        ("ok\n  media: https://e.com/x.png", "ok\n  [neutralized] media: https://e.com/x.png"),
        ("see MEDIA:/x mid-line", "see MEDIA:/x mid-line"),
        ("", ""),
    ],
    ids=["line-start", "indented-lowercase", "mid-line", "empty"],
)
def test_neutralize(user_client: Client, text: str, expected: str) -> None:
    response = post(user_client, "/api/render/neutralize", {"text": text})
    assert response.status_code == 200
    assert response.json() == {"text": expected}


# --- /api/messages -------------------------------------------------------------------------


def test_create_message_returns_the_stored_record(user_client: Client) -> None:
    payload = {"text": RICH_TEXT, "sessionKey": "s-1", "currentMessageId": "m-7"}
    response = post(user_client, "/api/messages", payload)
    assert response.status_code == 201
    record = response.json()
    assert set(record) == RECORD_KEYS
    message = AssistantMessage.objects.get()
    assert record["id"] == message.pk
    assert record["url"] == f"/messages/{message.pk}/"
    assert record["sessionKey"] == "s-1" and record["currentMessageId"] == "m-7"
    assert record["rawText"] == RICH_TEXT and record["text"] == "Build finished."
    assert record["replyToId"] == "m-7" and record["replyToCurrent"] is True
    assert record["audioAsVoice"] is True
    assert record["mediaUrls"] == ["https://example.com/summary.ogg"]
    assert record["blocks"] == [STATUS_BLOCK]
    assert user_client.get(f"/api/messages/{message.pk}").json() == record


def test_blocks_keep_shortcode_order(user_client: Client) -> None:
    text = '[embed ref="b" /] middle [embed ref="a" /] [embed ref="c" /]'
    record = post(user_client, "/api/messages", {"text": text}).json()
    assert [block["preview"]["viewId"] for block in record["blocks"]] == ["b", "a", "c"]
    rows = CanvasBlock.objects.order_by("position").values_list("position", flat=True)
    assert list(rows) == [0, 1, 2]


def test_message_detail_unknown_id_is_404(user_client: Client) -> None:
    response = user_client.get("/api/messages/999999")
    assert response.status_code == 404
    assert response.json() == {"detail": "No stored message with id 999999."}


def test_message_list_is_newest_first_and_filters_by_session(staff_client: Client) -> None:
    assert staff_client.get("/api/messages").json() == {"items": [], "nextCursor": None}
    for index in range(3):
        canvas_services.message_store(
            text=f"message {index}", session_key="a" if index != 1 else "b"
        )
    items = staff_client.get("/api/messages").json()["items"]
    assert [item["text"] for item in items] == ["message 2", "message 1", "message 0"]
    assert set(items[0]) == RECORD_KEYS
    filtered = staff_client.get("/api/messages", {"sessionKey": "a"}).json()["items"]
    assert [item["text"] for item in filtered] == ["message 2", "message 0"]


def test_message_list_pages_with_a_cursor(staff_client: Client) -> None:
    for index in range(5):
        canvas_services.message_store(text=f"m{index}")
    first = staff_client.get("/api/messages", {"limit": 2}).json()
    second = staff_client.get("/api/messages", {"limit": 2, "cursor": first["nextCursor"]}).json()
    third = staff_client.get("/api/messages", {"limit": 2, "cursor": second["nextCursor"]}).json()
    texts = [item["text"] for page in (first, second, third) for item in page["items"]]
    assert texts == ["m4", "m3", "m2", "m1", "m0"]
    assert third["nextCursor"] is None


@pytest.mark.parametrize(
    ("params", "needle"),
    [({"limit": 201}, "200"), ({"limit": 0}, "200"), ({"cursor": "garbage"}, "cursor")],
    ids=["limit-too-big", "limit-zero", "bad-cursor"],
)
def test_message_list_rejects_bad_paging(user_client: Client, params: dict, needle: str) -> None:
    response = user_client.get("/api/messages", params)
    assert response.status_code == 422
    assert needle in response.json()["detail"]


def test_message_list_query_count_is_constant(
    staff_client: Client, django_assert_num_queries
) -> None:
    for index in range(12):
        canvas_services.message_store(text=f'm{index} [embed ref="v{index}" /] [embed ref="w" /]')
    # session, user, messages, blocks: the same for 1 or 12 messages with 24 blocks.
    with django_assert_num_queries(4):
        assert len(staff_client.get("/api/messages").json()["items"]) == 12


def test_store_is_atomic(monkeypatch) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(CanvasBlock.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        canvas_services.message_store(text='hello [embed ref="a" /]')
    assert AssistantMessage.objects.count() == 0


# --- POST /api/canvas/documents ------------------------------------------------------------


def test_document_gets_a_generated_view_id(user_client: Client) -> None:
    response = post(user_client, "/api/canvas/documents", {"html": "<p>hi</p>", "title": "Hi"})
    assert response.status_code == 201
    body = response.json()
    assert re.fullmatch(r"cv_[0-9a-f]{16}", body["viewId"])
    assert body == {
        "viewId": body["viewId"],
        "url": f"/__openclaw__/canvas/documents/{body['viewId']}/index.html",
    }
    document = CanvasDocument.objects.get(view_id=body["viewId"])
    assert (document.title, document.html) == ("Hi", "<p>hi</p>")


def test_document_with_the_same_view_id_is_replaced(user_client: Client) -> None:
    first = post(user_client, "/api/canvas/documents", {"viewId": "cv.board-1", "html": "v1"})
    second = post(user_client, "/api/canvas/documents", {"viewId": "cv.board-1", "html": "v2"})
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json() == {
        "viewId": "cv.board-1",
        "url": "/__openclaw__/canvas/documents/cv.board-1/index.html",
    }
    assert CanvasDocument.objects.get().html == "v2"


@pytest.mark.parametrize(
    "view_id",
    ["", "a/b", "..", ".", "...", "a b", "x" * 129, "café", "../x", "a%2Fb", "a\nb"],
    ids=["empty", "slash", "dotdot", "dot", "dots", "space", "too-long", "non-ascii", "traversal", "percent", "newline"],
)  # fmt: skip
def test_document_view_id_is_validated(user_client: Client, view_id: str) -> None:
    response = post(user_client, "/api/canvas/documents", {"viewId": view_id, "html": "<p>x</p>"})
    assert response.status_code == 422
    assert "1-128 characters of A-Z, a-z, 0-9" in response.json()["detail"]
    assert CanvasDocument.objects.count() == 0


@pytest.mark.parametrize("view_id", ["a", "x" * 128, "cv_1.2-3", ".hidden"], ids=str)
def test_document_view_id_accepts_the_allowed_alphabet(user_client: Client, view_id: str) -> None:
    response = post(user_client, "/api/canvas/documents", {"viewId": view_id, "html": "ok"})
    assert response.status_code == 201
    assert response.json()["viewId"] == view_id


def test_document_html_over_2_mib_is_refused_with_the_limit(user_client: Client, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
    # 1 MiB characters of a 3-byte letter: well under the character cap, over 2 MiB of UTF-8.
    response = post(user_client, "/api/canvas/documents", {"html": "€" * (1024 * 1024)})
    assert response.status_code == 413
    assert "2097152 bytes (2 MiB)" in response.json()["detail"]
    assert CanvasDocument.objects.count() == 0


def test_document_html_of_exactly_2_mib_is_accepted(user_client: Client, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
    html = "a" * canvas_services.MAX_HTML_BYTES
    response = post(user_client, "/api/canvas/documents", {"viewId": "big", "html": html})
    assert response.status_code == 201
