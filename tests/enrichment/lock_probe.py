"""A concurrent writer for lock tests: inserts runs one by one (autocommit) with a short
``lock_timeout`` and records every insert that had to give up waiting for a lock, and the
slowest insert seen. PostgreSQL only (psycopg, no Django: it runs beside a migration or a
prune that has the database)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

INSERT_RUN = (
    "INSERT INTO enrichment_run (created_at, message_id, channel, chat_type, session_key,"
    " agent_id, original_body, enriched_body, outcome, error, url_count, config_snapshot,"
    " media, owner, stage_records, job)"
    " VALUES (COALESCE(%s::timestamptz, now()), 'probe', 'probe', 'direct', 'probe', '', 'probe body', '', 'success', '',"
    " 0, '{}', '[]', '', '{}', '')"
)


@dataclass
class LockProbe:
    """Run with ``with LockProbe(url) as probe: ...``; then read ``blocked``/``inserted``."""

    database_url: str
    lock_timeout_ms: int = 200
    created_at: datetime | None = None  # the inserted runs' time (None: the server's now)
    inserted: int = 0
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    slowest_ms: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> LockProbe:
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=30)

    def _write(self) -> None:
        with psycopg.connect(self.database_url, autocommit=True) as connection:
            connection.execute(f"SET lock_timeout = '{int(self.lock_timeout_ms)}ms'")
            self._ready.set()
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    connection.execute(INSERT_RUN, [self.created_at])
                except psycopg.errors.LockNotAvailable as exc:
                    self.blocked.append(str(exc).strip())
                except psycopg.Error as exc:  # a table being created/dropped: not a lock wait
                    self.errors.append(str(exc).strip())
                else:
                    self.inserted += 1
                self.slowest_ms = max(self.slowest_ms, (time.perf_counter() - started) * 1000)
                time.sleep(0.005)
