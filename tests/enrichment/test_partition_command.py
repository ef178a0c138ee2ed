"""``manage.py partition_runs``: bad input and a database that cannot be partitioned get a
clear refusal, and nothing changes."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from enrichment.services.partitions import is_partitioned

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("ahead", ["0", "25", "-3"])
def test_months_ahead_out_of_range_is_refused_with_the_limits(ahead: str) -> None:
    with pytest.raises(CommandError, match="--ahead: between 1 and 24 months"):
        call_command("partition_runs", "--ahead", ahead)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's refusal")
def test_sqlite_is_refused_and_stays_one_table() -> None:
    with pytest.raises(CommandError, match="needs PostgreSQL; this database is sqlite"):
        call_command("partition_runs")
    out = io.StringIO()
    call_command("partition_runs", "--status", stdout=out)
    assert out.getvalue().strip() == "The decision log is not partitioned."
    assert not is_partitioned()


@pytest.mark.parametrize("month", ["2027", "2027-13", "next month", "2027-01-05"])
def test_a_first_month_that_is_not_one_is_refused(month: str) -> None:
    with pytest.raises(CommandError, match="--first-month: expected YYYY-MM"):
        call_command("partition_runs", "--first-month", month)
