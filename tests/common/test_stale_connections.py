"""``close_stale_connections``: Channels' per-event database check, run inside a hop that
queries anyway (``services.runs_start``), never dropping a caller's transaction."""

from __future__ import annotations

import time

import pytest
from django.db import connection, transaction

from common.connections import close_stale_connections
from enrichment.models import Run


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every close of the default connection (SQLite's in-memory test database
    ignores a real close, PostgreSQL's would reconnect: the call is what is checked)."""
    calls: list[str] = []
    close = connection.close
    monkeypatch.setattr(connection, "close", lambda: (calls.append("close"), close())[1])
    return calls


@pytest.mark.django_db(transaction=True)
def test_an_obsolete_connection_is_closed_and_the_next_query_reconnects(closes: list[str]) -> None:
    Run.objects.count()
    connection.close_at = time.monotonic() - 1  # past CONN_MAX_AGE
    close_stale_connections()
    assert closes == ["close"]
    Run.objects.create(original_body="after the reconnect")
    assert Run.objects.filter(original_body="after the reconnect").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_connection_inside_an_atomic_block_keeps_its_transaction(closes: list[str]) -> None:
    with transaction.atomic():
        Run.objects.create(original_body="inside the caller's transaction")
        connection.close_at = time.monotonic() - 1
        close_stale_connections()  # Django's own check would close it here, losing the row
        assert closes == []
        Run.objects.create(original_body="still the same transaction")
    assert Run.objects.filter(original_body__contains="transaction").count() == 2
