from __future__ import annotations

from pathlib import Path
from unittest.mock import ANY

import pytest
from django.core.exceptions import ImproperlyConfigured

from controlui.env import (
    parse_database_url,
    read_bool,
    read_int,
    read_list,
    read_networks,
    read_redis_url,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("", False),
        (" No ", False),
    ],
)
def test_read_bool_accepts_usual_spellings(raw: str, expected: bool) -> None:
    assert read_bool("DEBUG", True, {"DEBUG": raw}) is expected


@pytest.mark.parametrize("raw", ["maybe", "2", "tru", "yes please"])
def test_read_bool_rejects_other_values_naming_the_variable(raw: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=f"DEBUG: expected a boolean.*{raw!r}"):
        read_bool("DEBUG", True, {"DEBUG": raw})


def test_read_bool_default_when_unset() -> None:
    assert read_bool("DEBUG", True, {}) is True


@pytest.mark.parametrize("raw", ["ten", "1.5", "0x10"])
def test_read_int_rejects_non_integers(raw: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="LIMIT: expected an integer"):
        read_int("LIMIT", 5, {"LIMIT": raw})


def test_read_int_enforces_minimum() -> None:
    with pytest.raises(ImproperlyConfigured, match="at least 1024"):
        read_int("LIMIT", 5000, {"LIMIT": "10"}, minimum=1024)
    assert read_int("LIMIT", 5000, {"LIMIT": " 2048 "}, minimum=1024) == 2048


def test_read_list_splits_and_rejects_empty_items() -> None:
    assert read_list("ALLOWED_HOSTS", ["x"], {"ALLOWED_HOSTS": "a.example, b.example"}) == [
        "a.example",
        "b.example",
    ]
    with pytest.raises(ImproperlyConfigured, match="empty item"):
        read_list("ALLOWED_HOSTS", [], {"ALLOWED_HOSTS": "a.example,,b"})


def test_database_url_sqlite_relative_and_absolute() -> None:
    base = Path("/srv/app")
    assert parse_database_url("sqlite:///db.sqlite3", base_dir=base).name == "/srv/app/db.sqlite3"
    assert parse_database_url("sqlite:////tmp/x.db", base_dir=base).name == "/tmp/x.db"


def test_database_url_postgres_parts() -> None:
    setting = parse_database_url(
        "postgres://bob:s%40cret@db.internal:6543/control?sslmode=require", base_dir=Path("/")
    )
    django = setting.as_django()
    assert django["ENGINE"] == "django.db.backends.postgresql"
    assert (django["NAME"], django["USER"], django["PASSWORD"], django["HOST"], django["PORT"]) == (
        "control",
        "bob",
        "s@cret",
        "db.internal",
        "6543",
    )
    options = django["OPTIONS"]
    assert isinstance(options, dict) and options["sslmode"] == "require"


def test_postgres_gets_a_bounded_pool_and_never_persistent_connections() -> None:
    setting = parse_database_url("postgres://db.internal/control", base_dir=Path("/"))
    pooled = setting.as_django(pool_max_size=7, pool_timeout=3)
    assert pooled["CONN_MAX_AGE"] == 0 and pooled["CONN_HEALTH_CHECKS"] is True
    assert pooled["OPTIONS"] == {
        "options": "-c jit=off",
        "pool": {"min_size": 2, "max_size": 7, "timeout": 3, "max_idle": 60},
    }
    tiny = setting.as_django(pool_max_size=1)["OPTIONS"]
    assert isinstance(tiny, dict) and tiny["pool"]["min_size"] == 1
    unpooled = setting.as_django(pool_max_size=0)
    assert unpooled["CONN_MAX_AGE"] == 0 and unpooled["OPTIONS"] == {"options": "-c jit=off"}


def test_postgres_sessions_start_with_jit_off_unless_asked_for() -> None:
    # JIT made a history count 2.7x slower (0.66 s of compiling); the app runs short reads.
    plain = parse_database_url("postgres://db.internal/control", base_dir=Path("/"))
    assert plain.as_django(jit=True)["OPTIONS"] == {"pool": ANY}
    # The URL's own startup options are kept, after ours.
    mine = parse_database_url(
        "postgres://db.internal/control?options=-c%20search_path%3Dlog", base_dir=Path("/")
    ).as_django()["OPTIONS"]
    assert isinstance(mine, dict) and mine["options"] == "-c jit=off -c search_path=log"
    # A URL that says what JIT should be is obeyed.
    chosen = parse_database_url(
        "postgres://db.internal/control?options=-c%20jit%3Don", base_dir=Path("/")
    ).as_django()["OPTIONS"]
    assert isinstance(chosen, dict) and chosen["options"] == "-c jit=on"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://root@localhost/db", "unsupported scheme 'mysql'"),
        ("postgres://localhost:5432/", "no database name"),
        ("postgres://localhost:99999999/db", "invalid port"),
        ("sqlite://", "no file path"),
    ],
)
def test_database_url_rejects_bad_values(url: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_database_url(url, base_dir=Path("/"))


def test_redis_url_reader() -> None:
    assert read_redis_url("REDIS_URL", {}) is None
    assert (
        read_redis_url("REDIS_URL", {"REDIS_URL": "redis://127.0.0.1:6379/0"})
        == "redis://127.0.0.1:6379/0"
    )
    with pytest.raises(ImproperlyConfigured, match="REDIS_URL: expected redis://"):
        read_redis_url("REDIS_URL", {"REDIS_URL": "http://127.0.0.1:6379"})


def test_sqlite_connections_are_kept_and_checked() -> None:
    # A SQLite connection is a file handle: reopening it for every database_sync_to_async
    # call was a tenth of daphne's CPU under load; kept, and checked before reuse.
    sqlite = parse_database_url("sqlite:///db.sqlite3", base_dir=Path("/srv")).as_django()
    assert sqlite["CONN_MAX_AGE"] == 600 and sqlite["CONN_HEALTH_CHECKS"] is True


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ()),
        ("10.0.0.0/8", ("10.0.0.0/8",)),
        ("10.1.2.3, ::1", ("10.1.2.3/32", "::1/128")),
        ("192.168.1.7/24", ("192.168.1.0/24",)),  # host bits are forgiven
    ],
    ids=["unset", "one", "addresses-are-hosts", "host-bits"],
)
def test_read_networks(raw, expected) -> None:
    assert tuple(str(n) for n in read_networks("NETS", {"NETS": raw})) == expected


@pytest.mark.parametrize("raw", ["10.0.0.0/33", "localhost", "10.0.0.0/8,,::1", "*"])
def test_read_networks_refuses_what_is_not_a_network(raw) -> None:
    with pytest.raises(ImproperlyConfigured, match="^NETS: "):
        read_networks("NETS", {"NETS": raw})
