"""The admin shows times as the dashboard does: ``YYYY-MM-DD HH:MM:SS UTC``, 24-hour, never
English's "Jan. 2, 2026, 3:04 p.m."."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.utils import formats

from enrichment.models import Run

pytestmark = pytest.mark.django_db

AFTERNOON = datetime(2026, 1, 2, 15, 4, 5, tzinfo=UTC)


def test_decision_log_list_and_record_use_24_hour_utc(staff_client) -> None:
    run = Run.objects.create(
        created_at=AFTERNOON, finished_at=AFTERNOON.replace(second=9), outcome="success"
    )
    listing = staff_client.get("/admin/enrichment/run/").content.decode()
    assert "2026-01-02 15:04:05 UTC" in listing
    record = staff_client.get(f"/admin/enrichment/run/{run.pk}/change/").content.decode()
    assert "2026-01-02 15:04:05 UTC" in record
    assert "2026-01-02 15:04:09 UTC" in record
    for html in (listing, record):
        assert not re.search(r"\b[ap]\.m\.", html)
        assert "Jan. 2, 2026" not in html


def test_config_and_token_times_too(staff_client, staff_user) -> None:
    from accounts.models import ApiToken
    from enrichment.config.store import active_config

    active_config()  # the config row (a transactional test before may have flushed it)

    token = ApiToken(user=staff_user, name="ci", created_at=AFTERNOON)
    token.assign_secret()
    token.save()
    token_admin = staff_client.get("/admin/accounts/apitoken/").content.decode()
    assert "2026-01-02 15:04:05 UTC" in token_admin
    assert not re.search(r"\b[ap]\.m\.", token_admin)
    config_list = staff_client.get("/admin/enrichment/enrichmentconfig/").content.decode()
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", config_list)
    assert not re.search(r"\b[ap]\.m\.", config_list)


def test_the_format_itself() -> None:
    assert formats.date_format(AFTERNOON, "DATETIME_FORMAT") == "2026-01-02 15:04:05 UTC"
    assert formats.date_format(AFTERNOON, "DATE_FORMAT") == "2026-01-02"
    assert formats.time_format(AFTERNOON.time(), "TIME_FORMAT") == "15:04:05"
