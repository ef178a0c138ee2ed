from __future__ import annotations

import pytest
from channels.layers import channel_layers

pytestmark = pytest.mark.django_db


def test_health_reports_both_backends_to_a_logged_in_user(user_client, settings) -> None:
    # Jobs in this process: no worker to require (tests/enrichment/jobs/test_queue.py has
    # the health of the worker pool).
    settings.ENRICHMENT_USE_WORKERS = False
    response = user_client.get("/api/health")
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
        if "redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"].lower()
        else "InMemoryChannelLayer"
    )
    assert body["channelLayer"]["backend"] == expected_layer


def test_health_with_in_memory_layer(user_client, in_memory_layer) -> None:
    body = user_client.get("/api/health").json()
    assert body["channelLayer"] == {
        "ok": True,
        "backend": "InMemoryChannelLayer",
        "detail": None,
        "latencyMs": body["channelLayer"]["latencyMs"],
    }


@pytest.mark.postgres_redis
def test_health_with_real_redis_layer(user_client, settings, redis_url) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url]},
        }
    }
    channel_layers.backends.clear()
    try:
        body = user_client.get("/api/health").json()
    finally:
        channel_layers.backends.clear()
    assert body["channelLayer"]["ok"] is True
    assert body["channelLayer"]["backend"] == "RedisChannelLayer"


def test_health_reports_degraded_when_redis_is_down(user_client, settings) -> None:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        response = user_client.get("/api/health")
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["channelLayer"]["ok"] is False and body["channelLayer"]["detail"]
    assert body["database"]["ok"] is True


def test_anonymous_health_shows_the_status_only(client, settings) -> None:
    settings.ENRICHMENT_USE_WORKERS = False  # jobs in this process: no worker to require
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_anonymous_health_hides_the_database_error_text(client, monkeypatch) -> None:
    from controlui import health

    def down():
        return health.BackendStatus(
            ok=False, backend="postgresql", detail='connection to "db.internal" port 5432 failed'
        )

    monkeypatch.setattr(health, "database_status", down)
    response = client.get("/api/health")
    assert response.status_code == 503
    assert response.json() == {"status": "degraded"}
    assert b"db.internal" not in response.content


def test_health_details_for_a_bearer_token(client, user) -> None:
    from accounts.models import ApiToken
    from accounts.tokens import token_digest, token_generate

    secret = token_generate()
    ApiToken.objects.create(user=user, name="probe", digest=token_digest(secret), hint=secret[:8])
    response = client.get("/api/health", headers={"Authorization": f"Bearer {secret}"})
    assert response.json()["database"]["ok"] is True
