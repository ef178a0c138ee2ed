"""Typed readers for environment settings.

Each reader returns a value of one type or raises ``ImproperlyConfigured`` naming the
variable and the value it could not read, so a typo in a deployment fails at start-up
instead of silently falling back to a default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def read_bool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}: expected a boolean (1/0, true/false, yes/no, on/off), got {raw!r}"
    )


def read_int(
    name: str,
    default: int,
    environ: Mapping[str, str] = os.environ,
    *,
    minimum: int | None = None,
) -> int:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}: expected an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}: must be at least {minimum}, got {value}")
    return value


# Django's own bar for a production key (check security.W009): long and varied.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5


def secret_key_problem(key: str) -> str | None:
    """Why ``key`` is too weak to sign sessions in production, or None.

    >>> secret_key_problem("x")
    'SECRET_KEY: too short (1 characters; at least 50)'
    """
    if key.startswith(("dev-insecure-", "django-insecure")):
        return "SECRET_KEY: refusing the generated development key while DEBUG is off"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"SECRET_KEY: too short ({len(key)} characters; at least {SECRET_KEY_MIN_LENGTH})"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return (
            f"SECRET_KEY: only {len(set(key))} distinct characters "
            f"(at least {SECRET_KEY_MIN_UNIQUE_CHARACTERS})"
        )
    return None


def read_list(name: str, default: list[str], environ: Mapping[str, str] = os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name}: empty item in comma-separated list {raw!r}")
    return items


@dataclass(frozen=True)
class DatabaseSetting:
    engine: str
    name: str
    user: str = ""
    password: str = ""
    host: str = ""
    port: str = ""
    options: tuple[tuple[str, str], ...] = ()

    def as_django(
        self, *, pool_max_size: int = 10, pool_timeout: float = 10.0, jit: bool = False
    ) -> dict[str, object]:
        """Django's ``DATABASES`` entry. PostgreSQL gets a bounded psycopg pool per process
        (``pool_max_size`` 0: no pool, a fresh connection per request, for PgBouncer).

        PostgreSQL's JIT compiler is off for the sessions (``-c jit=off`` at connection
        start) unless ``jit`` or the URL's own ``options`` set it: it compiles any statement
        the planner costs above ``jit_above_cost``, which on a large log includes history
        counts: one over 200k runs' URLs took 4.3 s with it (0.66 s compiling, the rest
        slower running) and 1.6 s without. The app's reads are short or time-budgeted; a
        compiler that pays off on long analytic queries only adds to them.

        Never persistent connections (``CONN_MAX_AGE`` > 0): under ASGI every request runs in a
        thread of its own, and each such thread kept its own idle connection for the whole
        age (54 idle after 16 clients × 100 requests, 503 "too many clients" at 150
        concurrent requests). A pool caps them; a request waits up to ``pool_timeout`` s.
        """
        config: dict[str, object] = {"ENGINE": self.engine, "NAME": self.name}
        if self.engine.endswith("sqlite3"):
            # WAL + a busy timeout let daphne, workers and the CLI share one file.
            # Kept open per thread: opening a SQLite file (and registering Django's SQL
            # functions) on every ``database_sync_to_async`` call cost ~10% of daphne's CPU
            # under bench/ws_load.py. Checked before reuse, so a broken one is replaced.
            config["CONN_MAX_AGE"] = 600
            config["CONN_HEALTH_CHECKS"] = True
            config["OPTIONS"] = {
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
            }
            return config
        options: dict[str, object] = dict(self.options)
        startup = str(options.get("options", ""))
        if not jit and "jit=" not in startup:
            options["options"] = f"-c jit=off {startup}".strip()
        config.update(
            USER=self.user,
            PASSWORD=self.password,
            HOST=self.host,
            PORT=self.port,
            CONN_MAX_AGE=0,
            # With the pool: each connection is checked when taken, so one broken by a server
            # restart is replaced instead of handed out.
            CONN_HEALTH_CHECKS=True,
            OPTIONS=options,
        )
        if pool_max_size > 0:
            options["pool"] = {
                "min_size": min(2, pool_max_size),
                "max_size": pool_max_size,
                "timeout": pool_timeout,
                "max_idle": 60,  # idle connections above min_size close after a minute
            }
        return config


def parse_database_url(url: str, *, base_dir: Path) -> DatabaseSetting:
    """Read ``sqlite:///path`` or ``postgres://user:pass@host:port/name?opt=…``.

    >>> parse_database_url("postgres://postgres@127.0.0.1:5432/test", base_dir=Path("/x")).name
    'test'
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        raw_path = unquote(parts.path)
        if raw_path in ("", "/"):
            raise ImproperlyConfigured(f"DATABASE_URL: sqlite URL has no file path: {url!r}")
        # sqlite:///name.db is relative to the project, sqlite:////abs/name.db is absolute.
        path = Path(raw_path[1:]) if raw_path.startswith("//") else base_dir / raw_path.lstrip("/")
        return DatabaseSetting(engine="django.db.backends.sqlite3", name=str(path))
    if scheme in ("postgres", "postgresql", "pgsql"):
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL: postgres URL has no database name: {url!r}")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured(f"DATABASE_URL: invalid port in {url!r}") from None
        options = tuple((key, values[-1]) for key, values in parse_qs(parts.query).items())
        return DatabaseSetting(
            engine="django.db.backends.postgresql",
            name=name,
            user=unquote(parts.username or ""),
            password=unquote(parts.password or ""),
            host=parts.hostname or "",
            port=str(port or ""),
            options=options,
        )
    raise ImproperlyConfigured(
        f"DATABASE_URL: unsupported scheme {parts.scheme!r} (use sqlite:///path or postgres://…)"
    )


def read_redis_url(name: str, environ: Mapping[str, str] = os.environ) -> str | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("redis", "rediss", "unix") or not (parts.hostname or parts.path):
        raise ImproperlyConfigured(f"{name}: expected redis://host:port/db, got {raw!r}")
    return raw


def read_networks(
    name: str, environ: Mapping[str, str] = os.environ
) -> tuple[IPv4Network | IPv6Network, ...]:
    """A comma-separated list of networks in CIDR notation (a bare address is one host).

    >>> read_networks("NETS", {"NETS": "10.0.0.0/8, ::1"})
    (IPv4Network('10.0.0.0/8'), IPv6Network('::1/128'))
    """
    raw = environ.get(name, "").strip()
    if not raw:
        return ()
    networks = []
    for item in read_list(name, [], environ):
        try:
            networks.append(ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not a network in CIDR notation (e.g. 10.0.0.0/8)"
            ) from None
    return tuple(networks)
