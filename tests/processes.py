"""What the tests ask of processes they started: whether one is gone."""

from __future__ import annotations

import time
from pathlib import Path


def process_gone(pid: int, wait_seconds: float = 5.0) -> bool:
    """True once ``pid`` no longer exists or is a zombie waiting for its parent to reap it.

    A process reaped between opening its ``stat`` file and reading it makes the read fail
    with ``ProcessLookupError`` rather than ``FileNotFoundError``: both mean gone."""
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
