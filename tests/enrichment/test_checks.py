"""System checks ``enrichment.E001`` (stored config invalid), ``enrichment.W001`` (no link
command) and ``enrichment.W002`` (an extraction pool one host can fill)."""

from __future__ import annotations

import sys

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from enrichment.config.changes import config_replace
from enrichment.config.store import active_config
from enrichment.models import LinkModel, ScopeRule


def enrichment_checks() -> list[tuple[str, str]]:
    return [(message.id, message.msg) for message in run_checks(tags=["enrichment"])]


def models_config(*commands: str) -> dict:
    return {
        "tools": {"links": {"models": [{"command": c, "args": ["{{LinkUrl}}"]} for c in commands]}}
    }


@pytest.mark.django_db
def test_valid_stored_config_passes() -> None:
    active_config()  # the default: built-in link-understand, installed in this venv
    assert enrichment_checks() == []


@pytest.mark.django_db
def test_e001_lists_every_path_at_fault() -> None:
    config = active_config()
    # Rows edited around the validators (e.g. straight in the database).
    ScopeRule.objects.create(config=config, position=0, chat_type="room")
    LinkModel.objects.filter(config=config).update(args=["--url", "{{LinkUrl"])
    messages = enrichment_checks()
    assert [message_id for message_id, _ in messages] == ["enrichment.E001"]
    text = messages[0][1]
    assert text.startswith("The stored enrichment config is invalid: ")
    assert 'tools.links.scope.rules[0].match.chatType: unknown chat type "room"' in text
    assert "tools.links.models[0].args[1]" in text


@pytest.mark.django_db
def test_e001_fails_manage_py_check() -> None:
    ScopeRule.objects.create(config=active_config(), position=0, chat_type="room")
    with pytest.raises(SystemCheckError, match="enrichment.E001"):
        call_command("check")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("commands", "warned"),
    [
        (("no-such-link-cli-3141",), True),
        (("no-such-link-cli-3141", "/nonexistent/bin/summarize"), True),
        (("no-such-link-cli-3141", sys.executable), False),
        (("link-understand",), False),  # found through this venv's scripts directory
        ((), False),  # no models: links are off, nothing to run
    ],
    ids=["missing", "all-missing", "one-found", "built-in", "no-models"],
)
def test_w001_when_no_link_command_is_on_path(commands, warned) -> None:
    config_replace(document=models_config(*commands))
    messages = enrichment_checks()
    if warned:
        assert [message_id for message_id, _ in messages] == ["enrichment.W001"]
        assert messages[0][1] == "No link model command is on PATH: " + ", ".join(commands)
    else:
        assert messages == []


@pytest.mark.django_db
def test_w001_is_only_a_warning() -> None:
    config_replace(document=models_config("no-such-link-cli-3141"))
    call_command("check")  # warnings do not fail the command


@pytest.mark.django_db
def test_invalid_config_reports_e001_only() -> None:
    config_replace(document=models_config("no-such-link-cli-3141"))
    ScopeRule.objects.create(config=active_config(), position=0, chat_type="room")
    assert [message_id for message_id, _ in enrichment_checks()] == ["enrichment.E001"]


@pytest.mark.django_db
def test_no_active_config_is_nothing_to_check() -> None:
    from enrichment.models import EnrichmentConfig

    EnrichmentConfig.objects.all().delete()
    assert enrichment_checks() == []
    assert not EnrichmentConfig.objects.exists()  # a check never writes


def test_no_database_is_nothing_to_check() -> None:
    # Checks also run before migrate; without database access they stay quiet.
    assert enrichment_checks() == []


@pytest.mark.parametrize(
    ("workers", "per_host", "warned"),
    [(2, 1, False), (8, 4, False), (4, 3, False), (1, 1, True), (2, 2, True), (2, 5, True)],
)
def test_w002_when_one_hosts_pages_may_hold_every_extraction_process(
    settings, workers: int, per_host: int, warned: bool
) -> None:
    settings.EXTRACTION_WORKERS, settings.EXTRACTION_SLOTS_PER_HOST = workers, per_host
    messages = [m for m in run_checks(tags=["enrichment"]) if m.id == "enrichment.W002"]
    if not warned:
        assert messages == []
        return
    assert len(messages) == 1
    held = "the one extraction process" if workers == 1 else f"all {workers} extraction processes"
    assert messages[0].msg == (
        f"The extraction pool is not fair: pages of one host may hold {held} at once "
        f"(EXTRACTION_WORKERS={workers}, EXTRACTION_SLOTS_PER_HOST={per_host})."
    )
    assert "EXTRACTION_WORKERS to 2 or more" in messages[0].hint
    call_command("check")  # a warning: the command still passes
