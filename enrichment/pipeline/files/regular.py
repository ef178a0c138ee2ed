"""Opening local files without surprises: regular files only, never a wait.

A path named by a message (an attachment ``path``) may be a FIFO, whose ``open`` for reading
waits for a writer, or a device that never ends. ``read_regular_file`` opens with
``O_NONBLOCK`` and checks the descriptor it reads from::

    read_regular_file("/media/pipe.txt", 100)
    -> NotARegularFile("/media/pipe.txt is not a regular file (a FIFO)")
"""

from __future__ import annotations

import os
import stat


class NotARegularFile(OSError):
    """A path that names a FIFO, device, socket or directory instead of a file."""


def describe_file_type(mode: int) -> str:
    """``S_IFIFO`` -> ``"a FIFO"``; what a non-regular path is, for a refusal message."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def read_regular_file(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``path``, only if it is a regular file when opened.

    ``O_NONBLOCK`` so that a FIFO swapped in after an earlier check cannot hang the open, and
    ``fstat`` on the descriptor actually read (not the path) so the check and the read are
    about the same file.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"{path} is not a regular file ({describe_file_type(mode)})")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(descriptor)
