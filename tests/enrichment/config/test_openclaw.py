"""OpenClaw config import/export: ``openclaw_io`` and the two management commands."""

from __future__ import annotations

import doctest
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from enrichment.config import openclaw as openclaw_io
from enrichment.config.openclaw import OpenClawFileError, openclaw_load, openclaw_to_config
from enrichment.config.openclaw_current import (
    AGENTS_NOT_MODELLED,
    FETCH_NOT_MODELLED,
    not_modelled,
)
from enrichment.config.store import config_document

OPENCLAW_FILE = """
// A realistic OpenClaw config: most of it is not the Control UI's business.
{
  gateway: { port: 18789, auth: { token: "secret" } },
  channels: { telegram: { botToken: "123:abc" } },
  models: { providers: {} },
  tools: {
    profile: "messaging",
    alsoAllow: ["web_fetch"],
    exec: { host: "sandbox" },          // not ours
    links: {
      enabled: true,
      maxLinks: 2,
      scope: {
        default: "deny",
        rules: [
          { action: "allow", match: { channel: "telegram", chatType: "direct" } },
          { action: "allow", match: { keyPrefix: "agent:main:" } },
        ],
      },
      models: [
        { type: "cli", command: "summarize", args: ["--url", "{{LinkUrl}}"], timeoutSeconds: 20 },
        { type: "cli", command: "link-understand", args: ["--url", "{{LinkUrl}}"] },
      ],
    },
    media: { concurrency: 2 },
    web: {
      search: { provider: "brave" },    // not ours
      fetch: {
        enabled: true,                  // not modelled
        maxChars: 20000,
        firecrawl: { enabled: false },  // not modelled
        ssrfPolicy: { allowedHostnames: ["wiki.internal"] },
      },
    },
  },
  agents: {
    defaults: { model: "x" },
    list: [
      {
        id: "quiet",
        name: "Quiet agent",
        workspace: "~/quiet",
        tools: { links: { enabled: false }, deny: ["exec"], elevated: { enabled: true } },
      },
      { id: "main" },
    ],
  },
}
"""

EXPECTED_NOTES = [
    "gateway: not a Control UI setting, ignored",
    "channels: not a Control UI setting, ignored",
    "models: not a Control UI setting, ignored",
    "tools.exec: not a Control UI setting, ignored",
    "tools.web.search: not a Control UI setting, ignored",
    not_modelled("tools.web.fetch.enabled", FETCH_NOT_MODELLED["enabled"]),
    not_modelled("tools.web.fetch.firecrawl", FETCH_NOT_MODELLED["firecrawl"]),
    not_modelled("agents.defaults", AGENTS_NOT_MODELLED["defaults"]),
    "agents.list[0].name: not a Control UI setting, ignored",
    "agents.list[0].workspace: not a Control UI setting, ignored",
    "agents.list[0].tools.elevated: not a Control UI setting, ignored",
]


def test_module_docstring_example() -> None:
    assert doctest.testmod(openclaw_io).failed == 0


def test_openclaw_to_config_keeps_only_the_enrichment_blocks() -> None:
    document, notes = openclaw_to_config(openclaw_load(OPENCLAW_FILE))
    assert sorted(notes) == sorted(EXPECTED_NOTES)
    assert set(document) == {"tools", "agents"}
    assert set(document["tools"]) == {"profile", "alsoAllow", "links", "media", "web"}
    assert document["tools"]["web"] == {
        "fetch": {"maxChars": 20000, "ssrfPolicy": {"allowedHostnames": ["wiki.internal"]}}
    }
    assert document["agents"] == {
        "list": [
            {"id": "quiet", "tools": {"links": {"enabled": False}, "deny": ["exec"]}},
            {"id": "main"},
        ]
    }


@pytest.mark.parametrize(
    ("doc", "expected", "notes"),
    [
        ({}, {}, []),
        ({"gateway": {}}, {}, ["gateway"]),
        ({"tools": {}}, {"tools": {}}, []),
        ({"tools": {"exec": {}, "elevated": {}}}, {"tools": {}}, ["tools.exec", "tools.elevated"]),
        ({"tools": {"web": {"search": {}}}}, {"tools": {}}, ["tools.web.search"]),
        ({"agents": {"defaults": {}}}, {}, [("agents.defaults", AGENTS_NOT_MODELLED["defaults"])]),
        ({"agents": {"list": [{"id": "a", "tools": {}}]}}, {"agents": {"list": [{"id": "a"}]}}, []),
        (
            {"agents": {"list": [{"id": "a", "tools": {"web": {}}}]}},
            {"agents": {"list": [{"id": "a"}]}},
            ["agents.list[0].tools.web"],
        ),
        # Wrong shapes are passed on untouched, for validation to name them.
        ({"tools": []}, {"tools": []}, []),
        ({"agents": {"list": "nope"}}, {"agents": {"list": "nope"}}, []),
        ({"agents": {"list": [5]}}, {"agents": {"list": [5]}}, []),
        # A typo inside a block we take is not ignored: validation reports it.
        (
            {"tools": {"web": {"fetch": {"maxChar": 5}}}},
            {"tools": {"web": {"fetch": {"maxChar": 5}}}},
            [],
        ),
    ],
    ids=[
        "empty",
        "other-section",
        "empty-tools",
        "other-tools",
        "web-search",
        "agent-defaults",
        "agent-empty-tools",
        "agent-web",
        "tools-not-object",
        "agents-list-not-list",
        "agent-not-object",
        "fetch-typo-kept",
    ],
)
def test_openclaw_to_config_rules(doc: Any, expected: Any, notes: list[Any]) -> None:
    document, got_notes = openclaw_to_config(doc)
    assert document == expected
    assert got_notes == [
        not_modelled(*path) if isinstance(path, tuple) else not_modelled(path) for path in notes
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [("{oops", "not valid JSON5"), ("[1, 2]", "must be an object, got list"), ("", "JSON5")],
    ids=["syntax", "array", "empty"],
)
def test_openclaw_load_refuses_non_objects(text: str, message: str) -> None:
    with pytest.raises(OpenClawFileError, match=message):
        openclaw_load(text)


# --- commands --------------------------------------------------------------------------


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def openclaw_file(tmp_path: Path) -> Path:
    path = tmp_path / "openclaw.json5"
    path.write_text(OPENCLAW_FILE, encoding="utf-8")
    return path


@pytest.mark.django_db
def test_import_stores_the_config_and_prints_a_note_per_ignored_section(openclaw_file) -> None:
    output = run("import_openclaw_config", str(openclaw_file))
    for note in EXPECTED_NOTES:
        assert f"note: {note}" in output
    assert "imported: 2 link model(s), 2 scope rule(s), 2 agent(s)" in output
    stored = config_document()
    assert stored["tools"]["links"]["maxLinks"] == 2
    assert [m["command"] for m in stored["tools"]["links"]["models"]] == [
        "summarize",
        "link-understand",
    ]
    assert stored["tools"]["links"]["scope"]["rules"][0]["match"] == {
        "channel": "telegram",
        "chatType": "direct",
    }
    assert stored["tools"]["web"]["fetch"]["ssrfPolicy"] == {"allowedHostnames": ["wiki.internal"]}
    assert stored["tools"]["profile"] == "messaging"
    assert stored["tools"]["media"] == {"concurrency": 2}
    assert [agent["id"] for agent in stored["agents"]["list"]] == ["quiet", "main"]
    assert "exec" not in stored["tools"] and "gateway" not in stored


@pytest.mark.django_db
def test_import_export_import_round_trip(openclaw_file, tmp_path) -> None:
    run("import_openclaw_config", str(openclaw_file))
    first = config_document()
    exported = tmp_path / "exported.json"
    # The legacy target is the stored shape itself (the default target, OpenClaw 2026.9's, is
    # tested in tests/enrichment/config/openclaw/).
    run("export_openclaw_config", "--target", "legacy", "--output", str(exported))
    assert json.loads(exported.read_text()) == first
    # The export is clean: importing it again has nothing to ignore and changes nothing.
    output = run("import_openclaw_config", str(exported))
    assert "note:" not in output
    assert config_document() == first
    assert json.loads(run("export_openclaw_config", "--target", "legacy")) == first


@pytest.mark.django_db
def test_export_of_a_fresh_install_is_the_default_document() -> None:
    exported = json.loads(run("export_openclaw_config"))
    assert exported["tools"]["links"]["models"][0]["command"] == "link-understand"


INVALID = """{
  gateway: {},
  tools: { links: { maxLinks: "many", scope: { rules: [ { action: "allow",
    match: { chatType: "room" } } ] }, models: [ { command: "x", args: ["{{LinkUrl"] } ] } },
}"""


@pytest.mark.django_db
@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry-run"])
def test_invalid_file_changes_nothing_and_names_each_path(tmp_path, dry_run) -> None:
    before = config_document()
    path = tmp_path / "bad.json5"
    path.write_text(INVALID)
    args = ["import_openclaw_config", str(path)] + (["--dry-run"] if dry_run else [])
    with pytest.raises(CommandError) as error:
        run(*args)
    message = str(error.value)
    assert message.startswith("invalid configuration, nothing changed:")
    assert "tools.links.maxLinks" in message
    assert 'tools.links.scope.rules[0].match.chatType: unknown chat type "room"' in message
    assert "tools.links.models[0].args[0]" in message
    assert config_document() == before


@pytest.mark.django_db
def test_dry_run_validates_without_storing(openclaw_file) -> None:
    before = config_document()
    output = run("import_openclaw_config", str(openclaw_file), "--dry-run")
    assert "valid; nothing stored (--dry-run)" in output
    assert "note: gateway: not a Control UI setting, ignored" in output
    assert config_document() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"\xff\xfe\x00bad", "cannot read"),
        (b"{ tools: ", "not valid JSON5"),
        (b"[]", "must be an object"),
    ],
    ids=["missing", "not-utf8", "syntax", "array"],
)
def test_unreadable_files_are_command_errors(tmp_path, content, message) -> None:
    path = tmp_path / "config.json5"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        run("import_openclaw_config", str(path))


@pytest.mark.django_db
def test_import_reads_stdin(monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("{tools: {links: {maxLinks: 4}}}"))
    run("import_openclaw_config", "-")
    assert config_document()["tools"]["links"] == {"maxLinks": 4, "models": []}


@pytest.mark.django_db
def test_export_to_unwritable_path_is_a_command_error(tmp_path) -> None:
    with pytest.raises(CommandError, match="cannot write"):
        run("export_openclaw_config", "--output", str(tmp_path / "missing" / "x.json"))
