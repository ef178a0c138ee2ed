from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from channels.layers import channel_layers
from django.db import connections
from hypothesis import settings

# Each xdist worker gets channels and a job queue of its own in a shared Redis (REDIS_URL):
# otherwise one worker's test stream worker would take the other's jobs. Set before the
# settings are read (pytest-django reads them after the initial conftests are imported).
os.environ["CHANNEL_LAYER_PREFIX"] = "test-" + os.environ.get("PYTEST_XDIST_WORKER", "main")

# The history's counts answer by a time budget on PostgreSQL (HISTORY_COUNTS_BUDGET_MS);
# the suite asserts the counts, which a busy CI machine must not turn into "took too long".
# The budget itself is tested on its own (tests/common/test_bounded.py, test_history_page.py).
os.environ.setdefault("HISTORY_COUNTS_BUDGET_MS", "10000")
# No background sweeper thread in tests (they call the sweep themselves).
os.environ.setdefault("ENRICHMENT_SWEEP_SECONDS", "0")

# Property tests assert answers, not speed (speed lives in bench/): no per-example deadline,
# so a busy 2-core machine cannot turn a slow example into a failure.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


# What gives a test pytest-django's test database (the fixtures' closure or the marker).
TEST_DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
    }
)


def reaches_test_database(item: pytest.Item) -> bool:
    """Whether ``item`` can read or write pytest-django's test database."""
    fixtures = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("django_db") is not None or bool(
        fixtures & TEST_DATABASE_FIXTURES
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``CONTROLUI_TEST_STORAGE=partitioned`` (.ci/run's last pass) only the tests that
    reach the test database run. The partitioned layout is switched on in that database
    alone (``django_db_setup``); every other test (pure core, browser and live-server tests,
    which migrate SQLite files or databases of their own) cannot see it and has already run
    in the passes before."""
    if os.environ.get("CONTROLUI_TEST_STORAGE") != "partitioned":
        return
    kept, deselected = [], []
    for item in items:
        (kept if reaches_test_database(item) else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Before a test's database teardown (a transactional test's flush, the last test's drop
    of the test databases), let the work queued in asgiref's worker thread finish and close
    the connections it opened there. A run still being closed in that thread (a cancelled
    socket's ``run_fail``) would otherwise write while PostgreSQL truncates the tables (a
    deadlock, and rows left for the next test), and PostgreSQL refuses to drop a database
    that still has sessions."""
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=30)


def _close_connection_pools() -> None:
    for connection in connections.all(initialized_only=True):
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """Close psycopg pools opened before the test databases exist (a test that ran earlier
    in this process without the database fixture may have opened one). Django's
    ``create_test_db`` switches the database name but keeps an open pool, whose connections
    still lead to the real database: every xdist worker would then share it, and one worker's
    flush would truncate the other's rows."""
    _close_connection_pools()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """Refuse to run against anything but the test databases."""
    with django_db_blocker.unblock():
        for connection in connections.all():
            if connection.vendor != "postgresql":
                continue
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_database()")
                (actual,) = cursor.fetchone()
            expected = connection.settings_dict["NAME"]
            assert actual == expected, f"tests would run against {actual!r}, not {expected!r}"
        if os.environ.get("CONTROLUI_TEST_STORAGE") == "partitioned":
            # The whole suite on the decision log stored in monthly partitions (.ci/run)
            # with the current month a partition of its own, so that new runs are stored in
            # month partitions and older ones (tests that date runs back) in the legacy one.
            from django.utils import timezone

            from enrichment.pipeline.retention.partitions import month_start
            from enrichment.services.partitions import partitioned_storage_switch

            partitioned_storage_switch(first=month_start(timezone.now()))


@pytest.fixture
def user(db, django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-pass-123")


@pytest.fixture
def staff_user(db, django_user_model):
    return django_user_model.objects.create_user(
        username="operator", password="operator-pass-123", is_staff=True, is_superuser=True
    )


@pytest.fixture
def user_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def in_memory_layer(settings) -> Iterator[None]:
    """Consumers under test talk through a fresh in-memory channel layer, in process.

    Without Redis nothing goes to worker processes (``services.workers_enabled``), also when
    the suite itself runs with ``REDIS_URL`` set.
    """
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "common.memory_layer.InMemoryChannelLayer"}}
    settings.REDIS_URL = None
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def _redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The real Redis of this machine (REDIS_URL or the local default); skip when absent."""
    import os

    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    if not _redis_answers(url):
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {url} does not answer; CI needs it")
        pytest.skip(f"Redis at {url} does not answer")
    return url


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    """One real daphne server for the whole session (see tests/live.py)."""
    from tests.live import live_server

    with live_server(tmp_path_factory.mktemp("live")) as server:
        yield server
