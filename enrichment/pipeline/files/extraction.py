"""Turn an attached file into a ``<file name="…" mime="…">…</file>`` block of text.

Follows the reference notes (media-understanding §12, generation B1) with the SPEC's choices:
text that is not UTF-8 but reads as Windows-1252 is *decoded* as CP1252, and every file that
produces no block says why in ``FileExtraction.skipped``.

Worked example::

    >>> extract_file_block(b"a,b\\n1,2\\n", name="report.dat", mime=None).to_dict()
    {'block': '<file name="report.dat" mime="text/csv">\\na,b\\n1,2\\n</file>',
     'mime': 'text/csv', 'encoding': 'utf-8', 'skipped': None}

The first line holds a comma, so the delimiter guess wins over the generic text/plain.
"""

from __future__ import annotations

import io
import posixpath
import re
from dataclasses import dataclass

from enrichment.pipeline.files.encodings import (
    cut_to_utf16_units,
    decode_cp1252,
    decode_text,
    detect_text_encoding,
    detect_utf16,
)

# The encoding helpers are re-exported: callers and tests import them from here.
__all__ = [
    "MIB",
    "SKIP_TOO_LARGE",
    "SKIP_EMPTY",
    "SKIP_BINARY",
    "SKIP_UNSUPPORTED",
    "SKIP_PDF_NO_TEXT",
    "SKIP_PDF_UNREADABLE",
    "DEFAULT_ALLOWED_MIMES",
    "UNCONFIGURED_EXTRA_MIMES",
    "FORCED_TEXT_MIME_BY_EXTENSION",
    "VIDEO_EXTENSIONS",
    "AUDIO_EXTENSIONS",
    "IMAGE_EXTENSIONS",
    "BINARY_MIMES",
    "FileLimits",
    "FileExtraction",
    "extract_file_block",
    "normalize_mime",
    "sanitize_mime",
    "is_binary_mime",
    "mime_allowed",
    "forced_text_mime",
    "media_kind",
    "sniff_binary_magic",
    "extract_pdf_text",
    "escape_attribute",
    "escape_file_content",
    "render_file_block",
    "cut_to_utf16_units",
    "decode_cp1252",
    "decode_text",
    "detect_text_encoding",
    "detect_utf16",
]

MIB = 1024 * 1024

# Skip reasons, stable strings stored in decision records and shown in the API.
SKIP_TOO_LARGE = "too-large"
SKIP_EMPTY = "empty"
SKIP_BINARY = "binary"
SKIP_UNSUPPORTED = "unsupported-type"
SKIP_PDF_NO_TEXT = "pdf-no-text"
SKIP_PDF_UNREADABLE = "pdf-unreadable"
NO_EXTRACTABLE_TEXT = "[No extractable text]"
SKIP_PDF_TOO_LARGE = "pdf-stream-too-large"

DEFAULT_ALLOWED_MIMES: tuple[str, ...] = (
    "text/plain",
    "text/markdown",
    "text/html",
    "text/csv",
    "application/json",
    "application/pdf",
)
# Added only when the operator did not configure an explicit list.
UNCONFIGURED_EXTRA_MIMES: tuple[str, ...] = (
    "application/xml",
    "text/xml",
    "application/x-yaml",
    "text/yaml",
    "application/yaml",
    "application/javascript",
    "text/javascript",
    "text/tab-separated-values",
)

FORCED_TEXT_MIME_BY_EXTENSION: dict[str, str] = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".conf": "text/plain",
    ".env": "text/plain",
    ".md": "text/markdown",
    ".json": "application/json",
    ".yaml": "text/yaml",
    ".yml": "text/yaml",
    ".xml": "application/xml",
}

VIDEO_EXTENSIONS = frozenset({".mp4", ".mov", ".mkv", ".webm", ".avi", ".m4v"})
AUDIO_EXTENSIONS = frozenset(
    {".aac", ".caf", ".flac", ".m4a", ".mp3", ".oga", ".ogg", ".opus", ".wav"}
)
IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tiff", ".tif"})

BINARY_MIMES = frozenset(
    {
        "application/octet-stream",
        "application/zip",
        "application/x-zip-compressed",
        "application/gzip",
        "application/x-gzip",
        "application/x-rar-compressed",
        "application/x-7z-compressed",
    }
)

# Magic numbers of containers that are never text. They win over a declared text mime and over
# extension forcing: an Ogg page header is >20 % zero bytes and would otherwise pass the UTF-16
# heuristic (a reference weakness we chose not to copy).
_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"ID3", "audio/mpeg"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/x-rar-compressed"),
    (b"\x7fELF", "application/octet-stream"),
)

_MIME_TOKEN = re.compile(r"^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+")
_NAME_WHITESPACE = re.compile(r"[\r\n\t]+")
_CLOSING_FILE_TAG = re.compile(r"<\s*/\s*file\s*>", re.IGNORECASE)
_OPENING_FILE_TAG = re.compile(r"<\s*file\b", re.IGNORECASE)
_FIRST_LINE = re.compile(r"\r?\n")


@dataclass(frozen=True)
class FileLimits:
    """Limits of ``gateway.http.endpoints.responses.files`` (notes §12.1)."""

    max_bytes: int = 5 * MIB
    max_chars: int = 200_000
    # None = not configured: the default list plus the extras and any text/* candidate.
    allowed_mimes: tuple[str, ...] | None = None
    pdf_max_pages: int = 4
    fetch_timeout_seconds: float = 10.0  # timeoutMs 10 000 for a file fetched by URL
    # Decompressed bytes one PDF stream may expand to (pypdf's own default is 75 MB): a few
    # pages of 70 MB deflated streams in an 800 KB file are refused, not inflated.
    pdf_max_stream_bytes: int = 16 * MIB


@dataclass(frozen=True)
class FileExtraction:
    block: str | None
    mime: str | None
    encoding: str | None
    skipped: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "block": self.block,
            "mime": self.mime,
            "encoding": self.encoding,
            "skipped": self.skipped,
        }


def extract_file_block(
    data: bytes,
    *,
    name: str | None,
    mime: str | None,
    limits: FileLimits = FileLimits(),  # noqa: B008 - frozen, so a shared default is safe
    fallback_name: str = "file-1",
) -> FileExtraction:
    """Classify ``data`` and render it as a ``<file>`` block, or say why it was skipped."""
    declared = normalize_mime(mime)
    if len(data) > limits.max_bytes:
        return _skip(SKIP_TOO_LARGE, declared)
    if not data:
        return _skip(SKIP_EMPTY, declared)
    magic = sniff_binary_magic(data)
    if magic is not None:
        return _skip(SKIP_BINARY, declared or magic)
    forced = forced_text_mime(name)
    if forced is None and media_kind(declared, name) is not None:
        return _skip(SKIP_BINARY, declared)
    raw = declared or ("application/pdf" if data.startswith(b"%PDF-") else None)
    if forced is None and raw is not None and is_binary_mime(raw):
        return _skip(SKIP_BINARY, raw)
    encoding = None if raw == "application/pdf" else detect_text_encoding(data)
    hint = forced or _delimiter_guess(data, encoding)
    if hint is None and encoding is not None:
        hint = "text/plain"
    candidate = sanitize_mime(hint or raw)
    if candidate is None:
        return _skip(SKIP_BINARY, raw)
    if not mime_allowed(candidate, limits.allowed_mimes):
        return _skip(SKIP_UNSUPPORTED, candidate)
    if candidate == "application/pdf":
        return _extract_pdf(data, name, fallback_name, limits)
    text = decode_text(data, encoding or "utf-8")
    # A file that is only whitespace still reaches the model, as a notice (notes §12.2
    # step 14); only a zero-byte file is skipped as "empty".
    text = cut_to_utf16_units(text, limits.max_chars).strip() or NO_EXTRACTABLE_TEXT
    block = render_file_block(text, name=name, mime=candidate, fallback_name=fallback_name)
    return FileExtraction(block=block, mime=candidate, encoding=encoding or "utf-8", skipped=None)


def _skip(reason: str, mime: str | None, encoding: str | None = None) -> FileExtraction:
    return FileExtraction(block=None, mime=mime, encoding=encoding, skipped=reason)


# --- mime helpers -------------------------------------------------------------------------


def normalize_mime(mime: str | None) -> str | None:
    """Text before ``;``, trimmed and lower-cased; blank is None."""
    if mime is None:
        return None
    value = mime.split(";", 1)[0].strip().lower()
    return value or None


def sanitize_mime(mime: str | None) -> str | None:
    """Keep only a leading ``type/subtype`` (``'text/plain"x'`` -> ``text/plain``)."""
    if mime is None:
        return None
    match = _MIME_TOKEN.match(mime.strip().lower())
    return match.group(0) if match else None


def is_binary_mime(mime: str) -> bool:
    if mime.startswith(("image/", "audio/", "video/")) or mime in BINARY_MIMES:
        return True
    return mime.startswith("application/vnd.") and not mime.endswith(("+json", "+xml"))


def mime_allowed(candidate: str, configured: tuple[str, ...] | None) -> bool:
    if configured:
        return candidate in {normalize_mime(m) for m in configured}
    allowed = set(DEFAULT_ALLOWED_MIMES) | set(UNCONFIGURED_EXTRA_MIMES)
    return candidate in allowed or candidate.startswith("text/")


def forced_text_mime(name: str | None) -> str | None:
    """Text mime implied by the extension (POSIX ``extname``: a bare ``.env`` has none)."""
    if not name:
        return None
    extension = posixpath.splitext(name)[1].lower()
    return FORCED_TEXT_MIME_BY_EXTENSION.get(extension)


def media_kind(mime: str | None, name: str | None) -> str | None:
    """``image``/``audio``/``video`` from the mime, else from the extension (notes §5.2)."""
    normalized = normalize_mime(mime)
    if normalized:
        for kind in ("image", "audio", "video"):
            if normalized.startswith(kind + "/"):
                return kind
    if not name:
        return None
    extension = posixpath.splitext(name.split("?", 1)[0].split("#", 1)[0])[1].lower()
    if extension in VIDEO_EXTENSIONS:
        return "video"
    if extension in AUDIO_EXTENSIONS:
        return "audio"
    if extension in IMAGE_EXTENSIONS:
        return "image"
    return None


def sniff_binary_magic(data: bytes) -> str | None:
    for magic, mime in _BINARY_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] in (b"WAVE", b"AVI "):
        return "audio/wav" if data[8:12] == b"WAVE" else "video/x-msvideo"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return None


# --- text detection (the encodings themselves live in file_encodings) ----------------------


def _delimiter_guess(data: bytes, encoding: str | None) -> str | None:
    """text/csv when the first line has a comma, else TSV when it has a tab (text only)."""
    if encoding is None:
        return None
    first_line = _FIRST_LINE.split(decode_text(data[:8192], encoding), maxsplit=1)[0]
    if "," in first_line:
        return "text/csv"
    if "\t" in first_line:
        return "text/tab-separated-values"
    return None


# --- PDF ----------------------------------------------------------------------------------


def _extract_pdf(
    data: bytes, name: str | None, fallback_name: str, limits: FileLimits
) -> FileExtraction:
    mime = "application/pdf"
    from pypdf.errors import LimitReachedError

    try:
        text = extract_pdf_text(
            data,
            max_pages=limits.pdf_max_pages,
            max_chars=limits.max_chars,
            max_stream_bytes=limits.pdf_max_stream_bytes,
        )
    except LimitReachedError:
        return _skip(SKIP_PDF_TOO_LARGE, mime)
    except Exception:  # pypdf raises many types on malformed input; all mean "unreadable"
        return _skip(SKIP_PDF_UNREADABLE, mime)
    text = cut_to_utf16_units(text, limits.max_chars).strip()
    if not text:
        return _skip(SKIP_PDF_NO_TEXT, mime)
    block = render_file_block(text, name=name, mime=mime, fallback_name=fallback_name)
    return FileExtraction(block=block, mime=mime, encoding=None, skipped=None)


def extract_pdf_text(
    data: bytes,
    *,
    max_pages: int,
    max_chars: int | None = None,
    max_stream_bytes: int | None = None,
) -> str:
    """Text of the first ``max_pages`` pages: words joined by single spaces, pages by a blank
    line (pdf.js joins text items with spaces; pypdf's line breaks are folded the same way).

    Stops after the page that reaches ``max_chars``; a stream inflating past
    ``max_stream_bytes`` raises pypdf's ``LimitReachedError``.
    """
    from pypdf import PdfReader, apply_configuration  # imported lazily: only PDFs pay

    caps: dict[str, int] = {}
    if max_stream_bytes is not None:
        caps = {
            name: max_stream_bytes
            for name in (
                "maximum_declared_stream_length",
                "array_based_stream_maximum_output_length",
                "zlib_maximum_output_length",
                "lzw_maximum_output_length",
                "run_length_maximum_output_length",
                "brotli_maximum_output_length",
                "jbig2_maximum_output_length",
            )
        }
    pages = []
    total = 0
    with apply_configuration(None, **caps):  # context-local: other readers keep their own caps
        reader = PdfReader(io.BytesIO(data))
        for page in reader.pages[: max(0, max_pages)]:
            text = " ".join(page.extract_text().split())
            pages.append(text)
            total += len(text)
            if max_chars is not None and total >= max_chars:
                break
    return "\n\n".join(page for page in pages if page)


# --- block rendering ----------------------------------------------------------------------


def escape_attribute(value: str) -> str:
    replacements = {"<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;"}
    return "".join(replacements.get(char, char) for char in value)


def escape_file_content(text: str) -> str:
    """Neutralise only the file tag itself: ``</file>`` and ``<file`` (any case/spacing)."""
    text = _CLOSING_FILE_TAG.sub("&lt;/file&gt;", text)
    return _OPENING_FILE_TAG.sub("&lt;file", text)


def render_file_block(
    text: str, *, name: str | None, mime: str | None, fallback_name: str = "file-1"
) -> str:
    cleaned = _NAME_WHITESPACE.sub(" ", name or "").strip()
    display = cleaned or fallback_name.strip() or "attachment"
    attributes = f'name="{escape_attribute(display)}"'
    if mime and mime.strip():
        attributes += f' mime="{escape_attribute(mime.strip())}"'
    return f"<file {attributes}>\n{escape_file_content(text)}\n</file>"
