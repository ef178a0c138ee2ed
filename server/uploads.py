"""A hard cap on every uploaded file, enforced while Django's multipart parser streams it.

First of ``FILE_UPLOAD_HANDLERS``: it counts each file's bytes as they pass and stops the
parse the moment one file passes ``FILE_UPLOAD_MAX_BYTES``, before the rest of the body is
read. The handlers after it keep small files in memory and spool the others to temporary
files, so an upload never sits in memory whole::

    POST /api/enrich/upload  (one 200 MiB file)
    -> 413 {"detail": "File 'big.bin' too large: the limit is 25 MiB (26214400 bytes) per file."}
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler

from server.body_limits import describe_limit


class UploadTooLarge(RequestDataTooBig):
    """One uploaded file passed the cap; the message names the file and the limit."""


class CappedUploadHandler(FileUploadHandler):
    def __init__(self, request: Any = None) -> None:
        super().__init__(request)
        self.cap = int(settings.FILE_UPLOAD_MAX_BYTES)
        self.received = 0

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.cap:
            raise UploadTooLarge(
                f"File {self.file_name!r} too large: the limit is "
                f"{describe_limit(self.cap)} per file."
            )
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
