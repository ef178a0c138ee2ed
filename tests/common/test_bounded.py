"""Reads with a time budget (common.bounded): on PostgreSQL a slow read answers
None and leaves the connection usable, with its own timeout as before."""

from __future__ import annotations

import pytest
from django.db import connection

from common.bounded import within

pytestmark = pytest.mark.django_db


def _timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        return str(cursor.fetchone()[0])


def _sleep(seconds: float) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 7 FROM (SELECT pg_sleep(%s)) s", [seconds])
        return int(cursor.fetchone()[0])


def test_a_quick_read_answers() -> None:
    assert within(5000, lambda: 41 + 1) == 42


def test_a_spent_budget_skips_the_read_only_where_budgets_apply() -> None:
    # SQLite runs every read as it is; PostgreSQL does not start one with no time left.
    expected = None if connection.vendor == "postgresql" else 42
    assert within(0, lambda: 41 + 1) == expected


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
def test_a_read_past_its_budget_answers_none_and_the_connection_goes_on() -> None:
    before = _timeout()
    assert within(50, lambda: _sleep(1.0)) is None
    # The transaction the test runs in is not aborted, and the budget did not leak into it.
    assert _timeout() == before
    assert within(2000, lambda: _sleep(0.01)) == 7
    assert _timeout() == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
def test_other_database_errors_are_not_swallowed() -> None:
    from django.db import ProgrammingError

    def broken() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table_here")

    with pytest.raises(ProgrammingError):
        within(1000, broken)


def _setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return str(cursor.fetchone()[0])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
def test_settings_hold_for_the_read_alone_inside_an_outer_transaction() -> None:
    # The test runs in a transaction: the read is a savepoint, its settings are put back.
    seen = within(2000, lambda: (_setting("enable_seqscan"), _timeout()), settings=OFF)
    assert seen == ("off", "2s")
    assert _setting("enable_seqscan") == "on"
    assert _timeout() != "2s"


OFF = {"enable_seqscan": "off"}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_read_has_one_of_its_own_and_leaves_nothing_set() -> None:
    assert not connection.in_atomic_block
    before = _timeout()
    seen = within(2000, lambda: (_setting("enable_seqscan"), _timeout()), settings=OFF)
    assert seen == ("off", "2s")
    assert (_setting("enable_seqscan"), _timeout()) == ("on", before)
    # Past its budget: None, nothing left set, and the connection goes on.
    assert within(50, lambda: _sleep(1.0), settings=OFF) is None
    assert not connection.in_atomic_block
    assert (_setting("enable_seqscan"), _timeout()) == ("on", before)
    assert within(2000, lambda: _sleep(0.01)) == 7


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_read_costs_three_statements_more() -> None:
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert within(2000, lambda: _sleep(0)) == 7
    statements = [query["sql"].split(" ")[0] for query in queries.captured_queries]
    # Not a savepoint, nor a read of the timeout before and its setting back after.
    assert statements == ["BEGIN", "SELECT", "SELECT", "COMMIT"], queries.captured_queries
    assert "set_config('statement_timeout', '2000ms', true)" in queries.captured_queries[1]["sql"]
