"""The benches' databases: a PostgreSQL database created on a fresh server when missing, and
the project's migrations applied to any ``DATABASE_URL`` (as the deploy would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


def ensure_postgres_database(url: str) -> None:
    """Create the database ``url`` names on its server unless it exists (a new machine has
    none); the server's ``postgres`` database is where it is created from."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if found.fetchone() is None:
            connection.execute(f'CREATE DATABASE "{name}"')


def migrate(database_url: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url},
        check=True,
    )
