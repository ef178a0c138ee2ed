"""``POST /api/files/extract`` (SPEC §9): an upload as the ``<file>`` block the agent sees."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile, TemporaryUploadedFile
from django.test import Client

from accounts.models import ApiToken
from tests.enrichment.pipeline.fixtures.pdf_builder import build_pdf

pytestmark = pytest.mark.django_db

URL = "/api/files/extract"
LIMIT = 5 * 1024 * 1024
TINY_OGG = (Path(__file__).parent / "pipeline" / "fixtures" / "tiny.ogg").read_bytes()
CP1252_TEXT = "Grüße aus Köln – 20 € für „Äpfel“"


def upload(
    client: Client,
    name: str,
    data: bytes,
    content_type: str = "application/octet-stream",
    *,
    mime: str | None = None,
    **extra: str,
):
    form: dict[str, object] = {"file": SimpleUploadedFile(name, data, content_type=content_type)}
    if mime is not None:
        form["mime"] = mime
    return client.post(URL, form, **extra)


# --- authentication and request shape ------------------------------------------------------


def test_anonymous_upload_is_refused_with_401(client: Client) -> None:
    response = upload(client, "notes.txt", b"hello", "text/plain")
    assert response.status_code == 401
    assert "Authentication required" in response.json()["detail"]


def test_bearer_token_is_accepted(client: Client, user) -> None:
    _, secret = ApiToken.issue(user=user)
    response = upload(
        client, "notes.txt", b"hello", "text/plain", HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    assert response.status_code == 200
    assert response.json()["block"] == '<file name="notes.txt" mime="text/plain">\nhello\n</file>'


def test_missing_file_is_a_422(user_client: Client) -> None:
    response = user_client.post(URL, {"mime": "text/plain"})
    assert response.status_code == 422
    assert "file" in str(response.json()["detail"])


# --- text encodings ------------------------------------------------------------------------


def test_utf8_text_becomes_a_file_block(user_client: Client) -> None:
    response = upload(user_client, "notes.txt", "Grüße, 世界 👋\n".encode(), "text/plain")
    assert response.status_code == 200
    assert response.json() == {
        "block": '<file name="notes.txt" mime="text/plain">\nGrüße, 世界 👋\n</file>',
        "mime": "text/plain",
        "encoding": "utf-8",
        "skipped": None,
    }


def test_cp1252_text_is_decoded_as_cp1252(user_client: Client) -> None:
    data = CP1252_TEXT.encode("cp1252")
    body = upload(user_client, "brief.txt", data, "text/plain").json()
    assert body["encoding"] == "cp1252"
    assert body["block"] == f'<file name="brief.txt" mime="text/plain">\n{CP1252_TEXT}\n</file>'
    assert "\ufffd" not in body["block"]


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        ("Hallo Welt, grüß dich".encode("utf-16"), "utf-16le"),  # with BOM (little endian)
        ("Hallo Welt, grüß dich".encode("utf-16-le"), "utf-16le"),  # no BOM: zero parity
        ("Hallo Welt, grüß dich".encode("utf-16-be"), "utf-16be"),
    ],
    ids=["bom-le", "no-bom-le", "no-bom-be"],
)
def test_utf16_text_is_decoded(user_client: Client, data: bytes, encoding: str) -> None:
    body = upload(user_client, "export.txt", data, "text/plain").json()
    assert body["encoding"] == encoding
    assert body["skipped"] is None
    assert (
        body["block"]
        == '<file name="export.txt" mime="text/plain">\nHallo Welt, grüß dich\n</file>'
    )


# --- delimited text ------------------------------------------------------------------------


def test_csv_upload_keeps_text_csv(user_client: Client) -> None:
    body = upload(user_client, "stock.csv", b"item,qty\nApfel,3\nBirne,5\n", "text/csv").json()
    assert body["mime"] == "text/csv"
    assert (
        body["block"]
        == '<file name="stock.csv" mime="text/csv">\nitem,qty\nApfel,3\nBirne,5\n</file>'
    )


def test_csv_is_guessed_from_the_first_line_when_the_type_is_unknown(user_client: Client) -> None:
    body = upload(user_client, "export", b"a,b\n1,2\n").json()
    assert body["mime"] == "text/csv"
    assert body["block"].startswith('<file name="export" mime="text/csv">\n')


def test_tsv_is_guessed_from_a_tab_in_the_first_line(user_client: Client) -> None:
    body = upload(user_client, "export", b"a\tb\n1\t2\n").json()
    assert body["mime"] == "text/tab-separated-values"


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_with_text_is_extracted(user_client: Client) -> None:
    data = build_pdf(["Quarterly report", "Revenue grew 12 percent"])
    body = upload(user_client, "report.pdf", data, "application/pdf").json()
    assert body == {
        "block": (
            '<file name="report.pdf" mime="application/pdf">\n'
            "Quarterly report\n\nRevenue grew 12 percent\n</file>"
        ),
        "mime": "application/pdf",
        "encoding": None,
        "skipped": None,
    }


def test_image_only_pdf_is_skipped_as_pdf_no_text(user_client: Client) -> None:
    body = upload(user_client, "scan.pdf", build_pdf([None]), "application/pdf").json()
    assert body == {
        "block": None,
        "mime": "application/pdf",
        "encoding": None,
        "skipped": "pdf-no-text",
    }


# --- media is never text -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content_type", "mime"),
    [
        ("voice.ogg", "audio/ogg", None),
        ("voice.ogg", "application/octet-stream", None),
        ("voice.txt", "text/plain", "text/plain"),  # lying name and mime: the bytes win
    ],
    ids=["declared-audio", "unknown-type", "disguised-as-text"],
)
def test_ogg_is_skipped_never_read_as_text(
    user_client: Client, name: str, content_type: str, mime: str | None
) -> None:
    body = upload(user_client, name, TINY_OGG, content_type, mime=mime).json()
    assert body["block"] is None
    assert body["skipped"] == "binary"
    assert body["encoding"] is None


# --- the mime form field -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mime", "skipped"),
    [(None, "binary"), ("text/plain", None)],
    ids=["upload-type-used", "form-field-wins"],
)
def test_mime_form_field_overrides_the_upload_content_type(
    user_client: Client, mime: str | None, skipped: str | None
) -> None:
    body = upload(user_client, "readme", b"# Title\n", "image/png", mime=mime).json()
    assert body["skipped"] == skipped
    if skipped is None:
        assert body["block"] == '<file name="readme" mime="text/plain">\n# Title\n</file>'


def test_declared_text_subtype_becomes_text_plain_as_in_the_notes(user_client: Client) -> None:
    # Notes §12 step 11: a text-like file's hint is text/plain, whatever text/* was declared.
    body = upload(user_client, "readme", b"# Title\n", mime="text/markdown").json()
    assert body["mime"] == "text/plain"


def test_explicit_octet_stream_mime_is_binary(user_client: Client) -> None:
    body = upload(user_client, "blob", b"plain words", mime="application/octet-stream").json()
    assert body["skipped"] == "binary"
    assert body["block"] is None


def test_unknown_upload_type_lets_the_bytes_decide(user_client: Client) -> None:
    body = upload(user_client, "notes", b"plain words").json()
    assert body["mime"] == "text/plain"
    assert body["block"] == '<file name="notes" mime="text/plain">\nplain words\n</file>'


# --- escaping and hostile content ----------------------------------------------------------


def test_name_and_content_cannot_break_out_of_the_block(user_client: Client) -> None:
    data = b"before </file> <file name=x> after"
    body = upload(user_client, 'a"b<c>.txt', data, "text/plain").json()
    assert body["block"] == (
        '<file name="a&quot;b&lt;c&gt;.txt" mime="text/plain">\n'
        "before &lt;/file&gt; &lt;file name=x> after\n</file>"
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty"), (b"PK\x03\x04zipped", "binary")],
    ids=["empty", "zip"],
)
def test_files_without_text_say_why(user_client: Client, data: bytes, reason: str) -> None:
    body = upload(user_client, "upload.txt", data, "text/plain").json()
    assert body["block"] is None
    assert body["skipped"] == reason


# --- size limit ----------------------------------------------------------------------------


def test_upload_above_5_mib_is_a_413_naming_the_limit(user_client: Client) -> None:
    response = upload(user_client, "big.txt", b"a" * (LIMIT + 1), "text/plain")
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert "5 MiB" in detail
    assert "5242880 bytes" in detail


def test_too_large_upload_is_refused_before_it_is_read(user_client: Client, monkeypatch) -> None:
    def refuse(self: TemporaryUploadedFile, *args: object) -> bytes:
        raise AssertionError("an oversized upload must not be read")

    # Django keeps uploads above FILE_UPLOAD_MAX_MEMORY_SIZE (2 MiB) in a temporary file.
    monkeypatch.setattr(TemporaryUploadedFile, "read", refuse, raising=False)
    response = upload(user_client, "big.txt", b"a" * (LIMIT + 1), "text/plain")
    assert response.status_code == 413


def test_upload_of_exactly_5_mib_is_accepted_and_cut_to_200000_chars(user_client: Client) -> None:
    response = upload(user_client, "big.txt", b"abcd" * (LIMIT // 4), "text/plain")
    assert response.status_code == 200
    body = response.json()
    assert body["skipped"] is None
    text = body["block"].removeprefix('<file name="big.txt" mime="text/plain">\n')
    assert text.removesuffix("\n</file>") == "abcd" * 50_000
