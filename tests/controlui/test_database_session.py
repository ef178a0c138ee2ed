"""The app's PostgreSQL sessions as settings make them (``controlui.env``)."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…"),
]


def test_statements_are_not_jit_compiled_however_costly_they_look() -> None:
    # JIT made a history count over a large log 2.7x slower (0.66 s of it compiling); the
    # threshold at 0 makes every statement costly enough for it.
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"
        cursor.execute("SET LOCAL jit_above_cost = 0")
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT sum(n) FROM generate_series(1, 1000) AS n"
        )
        (plan,) = cursor.fetchone()[0]  # psycopg parses the JSON
    assert "JIT" not in plan
