from __future__ import annotations

import pytest
from channels.layers import channel_layers

pytestmark = pytest.mark.django_db


def test_health_is_public_and_reports_both_backends(client, settings) -> None:
    # Jobs in this process: no worker to require (tests/enrichment/test_job_stream.py has
    # the health of the worker pool).
    settings.ENRICHMENT_USE_WORKERS = False
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["database"]["backend"] == (
        "postgresql" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"
    )
    assert body["channelLayer"]["ok"] is True
    expected_layer = (
        "RedisChannelLayer"
        if "redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"]
        else "InMemoryChannelLayer"
    )
    assert body["channelLayer"]["backend"] == expected_layer


def test_health_with_in_memory_layer(client, in_memory_layer) -> None:
    body = client.get("/api/health").json()
    assert body["channelLayer"] == {
        "ok": True,
        "backend": "InMemoryChannelLayer",
        "detail": None,
        "latencyMs": body["channelLayer"]["latencyMs"],
    }


@pytest.mark.postgres_redis
def test_health_with_real_redis_layer(client, settings, redis_url) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url]},
        }
    }
    channel_layers.backends.clear()
    try:
        body = client.get("/api/health").json()
    finally:
        channel_layers.backends.clear()
    assert body["channelLayer"]["ok"] is True
    assert body["channelLayer"]["backend"] == "RedisChannelLayer"


def test_health_reports_degraded_when_redis_is_down(client, settings) -> None:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        response = client.get("/api/health")
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["channelLayer"]["ok"] is False and body["channelLayer"]["detail"]
    assert body["database"]["ok"] is True
