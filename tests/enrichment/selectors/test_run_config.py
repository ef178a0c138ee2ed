"""The run page shows the config the run ran under and how today's differs."""

from __future__ import annotations

import pytest

from enrichment.config.changes import config_replace
from enrichment.config.store import config_document
from enrichment.models import Run
from tests.enrichment.conftest import summarizer_config

pytestmark = pytest.mark.django_db


def test_run_page_says_same_as_today_when_nothing_changed(user_client) -> None:
    run = Run.objects.create(outcome="no-links", config_snapshot=config_document())
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "Configuration this run used" in html
    assert "same as today" in html
    assert 'id="config-snapshot"' in html and "link-understand" in html


def test_run_page_lists_what_changed_since(user_client) -> None:
    run = Run.objects.create(outcome="no-links", config_snapshot=config_document())
    config_replace(document=summarizer_config(maxLinks=2))
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "same as today" not in html
    assert "changed since" in html
    assert "<code>tools.links.maxLinks</code>" in html
    assert '<td data-label="Change">added</td>' in html


def test_a_run_without_snapshot_says_so(user_client) -> None:
    run = Run.objects.create(outcome="no-links", config_snapshot={})
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "No snapshot was recorded for this run." in html


def test_snapshot_text_is_escaped(user_client) -> None:
    snapshot = {"tools": {"links": {"models": [{"command": "<script>alert(1)</script>"}]}}}
    run = Run.objects.create(outcome="no-links", config_snapshot=snapshot)
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)" in html
