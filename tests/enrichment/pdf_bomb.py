"""A small PDF whose pages are huge deflated content streams, built in memory for tests."""

from __future__ import annotations

import zlib


def build_pdf_bomb(
    *, pages: int, stream_bytes: int, text: str = "bomb page", slow: bool = False
) -> bytes:
    """``pages`` pages, each a FlateDecode content stream inflating to ``stream_bytes``: a
    line of real text, then spaces (which compress about 1000:1).

    ``slow`` writes the spaces as one hex string shown on the page (``<2020...> Tj``): the
    same text, but a PDF reader decodes it byte by byte, some eight times slower than
    skipping blank space, so a few pages under the per-stream cap cost seconds each.
    """
    content = f"BT /F1 12 Tf 72 712 Td ({text}) Tj ET\n".encode()
    if slow:
        pairs = max(0, stream_bytes - len(content) - len(b"BT <> Tj ET\n")) // 2
        content += b"BT <" + b"20" * pairs + b"> Tj ET\n"
    else:
        content += b" " * max(0, stream_bytes - len(content))
    compressed = zlib.compress(content, 9)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, filled in below
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for _ in range(pages):
        page_number = len(objects) + 1
        kids.append(f"{page_number} 0 R")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_number + 1} 0 R >>".encode()
        )
        objects.append(
            f"<< /Length {len(compressed)} /Filter /FlateDecode >>\nstream\n".encode()
            + compressed
            + b"\nendstream"
        )
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>".encode()
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)
