"""The settings module, imported fresh in a subprocess with a given environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRINT_SETTINGS = """
import json
from controlui import settings as s
print(json.dumps({
    "engine": s.DATABASES["default"]["ENGINE"],
    "layer": s.CHANNEL_LAYERS["default"]["BACKEND"],
    "cache": s.CACHES["default"]["BACKEND"],
    "debug": s.DEBUG,
    "hosts": s.ALLOWED_HOSTS,
}))
"""


def import_settings(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"}
    }
    clean.update(env)
    clean["CONTROLUI_VAR_DIR"] = str(tmp_path)
    return subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_embedded_defaults(tmp_path: Path) -> None:
    result = import_settings(tmp_path)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["layer"] == "common.memory_layer.InMemoryChannelLayer"
    assert values["cache"].endswith("LocMemCache")
    # The generated development key is kept so sessions survive restarts.
    assert (tmp_path / "dev-secret-key").read_text().startswith("dev-insecure-")


def test_database_and_redis_urls_switch_backends(tmp_path: Path) -> None:
    result = import_settings(
        tmp_path,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/test",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.postgresql"
    assert values["layer"] == "common.channel_layer.RedisChannelLayer"
    assert values["cache"] == "django.core.cache.backends.redis.RedisCache"


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "DATABASE_POOL_MAX_SIZE: must be at least 0"), ("many", "expected an integer")],
    ids=["negative", "not-a-number"],
)
def test_bad_pool_size_is_refused(tmp_path: Path, value: str, message: str) -> None:
    result = import_settings(
        tmp_path,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/test",
        DATABASE_POOL_MAX_SIZE=value,
    )
    assert result.returncode != 0 and message in result.stderr


def test_refuses_dev_secret_key_when_debug_is_off(tmp_path: Path) -> None:
    result = import_settings(tmp_path, DEBUG="0")
    assert result.returncode != 0
    assert "refusing the generated development key while DEBUG is off" in result.stderr


def test_starts_with_real_secret_key_when_debug_is_off(tmp_path: Path) -> None:
    result = import_settings(
        tmp_path,
        DEBUG="0",
        SECRET_KEY="k3-Qv9_pLx2mZ7rWb8nT4yHc6sJd1fGa5eUo0iRtYw-Np2Xq-h17",
        ALLOWED_HOSTS="control.example",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["debug"] is False and values["hosts"] == ["control.example"]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("x", "SECRET_KEY: too short (1 characters; at least 50)"),
        ("short-but-varied-0123456789", "SECRET_KEY: too short (27 characters"),
        ("x" * 60, "SECRET_KEY: only 1 distinct characters"),
        ("abab" * 20, "SECRET_KEY: only 2 distinct characters"),
        ("django-insecure-" + "q8w7e6r5t4y3u2i1o0p9" * 3, "refusing the generated development key"),
    ],
    ids=["x", "short", "one-character", "two-characters", "django-insecure"],
)
def test_refuses_weak_secret_key_when_debug_is_off(tmp_path: Path, key: str, message: str) -> None:
    result = import_settings(tmp_path, DEBUG="0", SECRET_KEY=key, ALLOWED_HOSTS="control.example")
    assert result.returncode != 0
    assert message in result.stderr


def test_weak_secret_key_is_fine_for_development(tmp_path: Path) -> None:
    assert import_settings(tmp_path, DEBUG="1", SECRET_KEY="x").returncode == 0


def test_bad_values_fail_loudly(tmp_path: Path) -> None:
    for env, message in [
        ({"DEBUG": "perhaps"}, "DEBUG: expected a boolean"),
        ({"DATABASE_URL": "mysql://x/y"}, "DATABASE_URL: unsupported scheme"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL: expected redis://"),
    ]:
        result = import_settings(tmp_path, **env)
        assert result.returncode != 0
        assert message in result.stderr


PRINT_POOL = """
import json, os
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # this process sees one core
from controlui import settings as s
print(json.dumps([s.EXTRACTION_WORKERS, s.EXTRACTION_SLOTS_PER_HOST]))
"""


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, [2, 1]),  # one core still gets two processes: one host holds at most one
        ({"EXTRACTION_WORKERS": "1"}, [1, 1]),  # the operator's choice (check W002 warns)
        ({"EXTRACTION_WORKERS": "4"}, [4, 2]),
    ],
    ids=["default", "one-set", "four-set"],
)
def test_the_extraction_pool_on_a_one_core_machine_stays_fair_by_default(
    tmp_path: Path, env: dict[str, str], expected: list[int]
) -> None:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"EXTRACTION_WORKERS", "EXTRACTION_SLOTS_PER_HOST"}
    }
    result = subprocess.run(
        [sys.executable, "-c", PRINT_POOL],
        cwd=ROOT,
        env={**clean, **env, "CONTROLUI_VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
