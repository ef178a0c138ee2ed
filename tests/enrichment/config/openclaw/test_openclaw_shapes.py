"""Import of both OpenClaw shapes and export to both targets, checked against the schema the
real OpenClaw 2026.9.6 prints and against configs it wrote (``fixtures/``, see its README)."""

from __future__ import annotations

import copy
import doctest
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from enrichment.config import openclaw_current, openclaw_export
from enrichment.config.changes import config_replace
from enrichment.config.openclaw import openclaw_load, openclaw_to_config
from enrichment.config.openclaw_export import export_openclaw
from enrichment.config.store import config_document
from enrichment.management.commands.seed_demo import PAGES_DIR, demo_document
from enrichment.pipeline.config.parser import parse_config
from tests.enrichment.config.openclaw.real_openclaw import FIXTURES, load_schema
from tests.enrichment.config.test_openclaw import OPENCLAW_FILE

SCHEMA = jsonschema.Draft7Validator(load_schema())
SECTIONS = ("links", "media", "web", "profile", "allow", "alsoAllow", "deny", "byProvider")


def schema_errors(document: Any) -> list[str]:
    return sorted(
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in SCHEMA.iter_errors(document)
    )


def fixture(name: str) -> dict[str, Any]:
    return openclaw_load((FIXTURES / name).read_text(encoding="utf-8"))


def imported(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    document, notes = openclaw_to_config(doc)
    parse_config(document)  # valid: raises ConfigError otherwise
    return document, notes


def test_docstring_examples() -> None:
    assert doctest.testmod(openclaw_export).failed == 0
    assert doctest.testmod(openclaw_current).failed == 0


def test_the_schema_fixture_is_openclaws_and_refuses_the_legacy_keys() -> None:
    assert schema_errors({"tools": {"links": {"models": []}}}) == []
    assert schema_errors({"agents": {"list": []}}) == [
        "agents: Additional properties are not allowed ('list' was unexpected)"
    ]
    assert schema_errors({"tools": {"media": {"image": {"models": []}}}}) == [
        "tools.media.image: Additional properties are not allowed ('models' was unexpected)"
    ]


# --- import ---------------------------------------------------------------------------------


def test_a_config_written_by_openclaw_config_set_imports_whole() -> None:
    document, notes = imported(fixture("written-by-set.json"))
    assert notes == [
        "plugins: not a Control UI setting, ignored",
        "meta: not a Control UI setting, ignored",
    ]
    assert document["agents"] == {"list": [{"id": "main", "tools": {"profile": "messaging"}}]}
    assert document["tools"]["media"]["models"][0]["capabilities"] == ["image"]
    assert document["tools"]["links"]["models"][0]["args"] == [
        "--format", "markdown", "--max-chars", "6000"
    ]  # fmt: skip


def test_a_config_written_by_openclaw_config_patch_names_every_key_it_leaves() -> None:
    document, notes = imported(fixture("written-by-patch.json"))
    assert [agent["id"] for agent in document["agents"]["list"]] == ["main", "research", "quiet"]
    assert document["tools"]["web"]["fetch"]["ssrfPolicy"] == {
        "allowPrivateNetwork": False,
        "allowedHostnames": ["wiki.internal", "*.corp.example"],
        "allowRfc2544BenchmarkRange": True,
    }
    paths = [note.split(":", 1)[0] for note in notes]
    assert paths == [
        "gateway", "talk", "plugins", "meta",
        "tools.links.scope.rules[1].match.rawKeyPrefix",
        "tools.media.models[0].providerOptions",
        "tools.media.image.preferredModel",
        "tools.web.search",
        "tools.web.fetch.enabled", "tools.web.fetch.readability",
        "tools.web.fetch.ssrfPolicy.blockedHostnames",
        "tools.exec",
        "agents.ownership", "agents.defaults",
        "agents.entries.main.name", "agents.entries.main.workspace",
        "agents.entries.research.name",
    ]  # fmt: skip
    # Each key OpenClaw has and the Control UI does not says why.
    reasons = {**openclaw_current.FETCH_NOT_MODELLED, **openclaw_current.MEDIA_ENTRY_NOT_MODELLED}
    assert f"({reasons['readability']})" in notes[paths.index("tools.web.fetch.readability")]
    assert f"({reasons['providerOptions']})" in notes[paths.index("tools.media.models[0].providerOptions")]  # fmt: skip # noqa: E501


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            {"agents": {"ownership": "explicit", "entries": {"a": {}, "b": {"default": True}}}},
            {"agents": {"list": [{"id": "a"}, {"id": "b"}]}},
        ),
        (  # both shapes in one file: listed agents first, then the entries
            {"agents": {"list": [{"id": "x"}], "entries": {"y": {"tools": {"deny": ["exec"]}}}}},
            {"agents": {"list": [{"id": "x"}, {"id": "y", "tools": {"deny": ["exec"]}}]}},
        ),
        (
            {"tools": {"web": {"fetch": {"ssrfPolicy": {"dangerouslyAllowPrivateNetwork": True}}}}},
            {"tools": {"web": {"fetch": {"ssrfPolicy": {"allowPrivateNetwork": True}}}}},
        ),
        (  # the legacy capability list keeps its models; OpenClaw-only keys leave
            {"tools": {"media": {"audio": {"models": [{"provider": "groq", "profile": "p"}]}}}},
            {"tools": {"media": {"audio": {"models": [{"provider": "groq"}]}}}},
        ),
        # wrong shapes pass through, for validation to name them
        ({"agents": {"entries": []}}, {"agents": {"list": []}}),
        ({"agents": {"entries": {"a": 5}}}, {"agents": {"list": [5]}}),
    ],
    ids=[
        "entries",
        "list-and-entries",
        "private-network-name",
        "entry-profile",
        "entries-list",
        "entry-number",
    ],  # fmt: skip
)
def test_current_shape_import_rules(doc: dict[str, Any], expected: dict[str, Any]) -> None:
    assert openclaw_to_config(doc)[0] == expected


def test_a_typo_in_the_current_shape_is_reported_not_ignored() -> None:
    document, _notes = openclaw_to_config({"agents": {"entries": {"a": {"tools": {"dney": []}}}}})
    assert document == {"agents": {"list": [{"id": "a"}]}}  # tools.dney: not ours, noted
    document, notes = openclaw_to_config({"tools": {"media": {"image": {"maxChar": 5}}}})
    with pytest.raises(ValueError, match=r"tools\.media\.image\.maxChar: unknown key"):
        parse_config(document)


# --- export ---------------------------------------------------------------------------------


def test_current_export_of_the_demo_config_fits_openclaws_schema_and_names_what_it_leaves() -> None:
    document = demo_document(PAGES_DIR)
    result = export_openclaw(document)
    assert schema_errors(result.document) == []
    agents = result.document["agents"]
    assert agents["ownership"] == "explicit"
    assert list(agents["entries"]) == ["main", "research", "support", "archive-bot"]
    assert result.document["tools"]["media"] == {
        "models": [{**document["tools"]["media"]["image"]["models"][0], "capabilities": ["image"]}]
    }
    left = [note.split(":", 1)[0] for note in result.notes]
    assert left == [
        "tools.media.image.models",
        "agents.list[1].tools.links",
        "agents.list[2].tools.links",
        "agents.list[3].tools.links",
    ]


def test_legacy_export_is_the_stored_document_and_names_what_openclaw_2026_9_refuses() -> None:
    document = demo_document(PAGES_DIR)
    result = export_openclaw(document, "legacy")
    assert result.document == document
    assert schema_errors(result.document) == [
        "agents: Additional properties are not allowed ('list' was unexpected)",
        "tools.media.image: Additional properties are not allowed ('models' was unexpected)",
    ]
    assert [note.split(":", 1)[0] for note in result.notes] == [
        "agents.list[1].tools.links",
        "agents.list[2].tools.links",
        "agents.list[3].tools.links",
        "tools.media.image.models",
        "agents.list",
    ]


def links_doc(**links: Any) -> dict[str, Any]:
    return {"tools": {"links": {"models": [], **links}}}


@pytest.mark.parametrize(
    ("document", "expected", "note"),
    [
        (links_doc(concurrency=2), links_doc(), "tools.links.concurrency: OpenClaw 2026.9 has no"),
        (
            links_doc(scope={"rules": [{"action": "deny", "match": {"chatType": "DM"}}]}),
            links_doc(scope={"rules": [{"action": "deny", "match": {"chatType": "direct"}}]}),
            '"DM" written as "direct"',
        ),
        (
            {
                "tools": {
                    "media": {
                        "audio": {
                            "scope": {"rules": [{"action": "allow", "match": {"chatType": "dm"}}]}
                        }
                    }
                }
            },
            {
                "tools": {
                    "media": {
                        "audio": {
                            "scope": {
                                "rules": [{"action": "allow", "match": {"chatType": "direct"}}]
                            }
                        }
                    }
                }
            },
            'tools.media.audio.scope.rules[0].match.chatType: "dm" written as "direct"',
        ),
        (links_doc(timeoutSeconds=1.5), links_doc(timeoutSeconds=2), "1.5 written as 2"),
        (
            links_doc(models=[{"command": "link-understand", "args": ["--url", "{{LinkUrl}}"]}]),
            links_doc(models=[{"command": "link-understand", "args": ["--url={{LinkUrl}}"]}]),
            'written as "--url={{LinkUrl}}"',
        ),
        (
            links_doc(models=[{"command": "sum", "args": ["-u", "{{ LinkUrl }}", "-q"]}]),
            links_doc(models=[{"command": "sum", "args": ["-u", "{{ LinkUrl }}", "-q"]}]),
            'so "-u" reaches sum without its value',
        ),
        (
            {"tools": {"media": {"image": {"maxChars": 0, "timeoutSeconds": 2.5}}}},
            {"tools": {"media": {"image": {"timeoutSeconds": 3}}}},
            "tools.media.image.maxChars: 0 (no trimming) has no equivalent",
        ),
        (
            {
                "tools": {
                    "media": {
                        "audio": {
                            "models": [
                                {
                                    "command": "x",
                                    "args": ["{{MediaPath}}"],
                                    "capabilities": ["video"],
                                }
                            ]
                        }
                    }
                }
            },  # fmt: skip
            {"tools": {"media": {}}},
            'without "audio", so it never runs',
        ),
        (
            {
                "tools": {
                    "media": {
                        "models": [{"type": "cli", "command": "x", "capabilities": ["image"]}]
                    }
                }
            },  # noqa: E501
            {
                "tools": {
                    "media": {
                        "models": [{"type": "cli", "command": "x", "capabilities": ["image"]}]
                    }
                }
            },  # noqa: E501
            "refuses to run a media CLI without args",
        ),
        (
            {"tools": {"web": {"fetch": {"ssrfPolicy": {"allowPrivateNetwork": True}}}}},
            {"tools": {"web": {"fetch": {"ssrfPolicy": {"dangerouslyAllowPrivateNetwork": True}}}}},
            None,
        ),
        (
            {"agents": {"list": [{"id": "Main Agent"}, {"id": "ok", "tools": {"media": {}}}]}},
            {"agents": {"entries": {"ok": {}}}},
            'the id "Main Agent" is not an OpenClaw 2026.9 agent id',
        ),
        (
            {"agents": {"list": [{"id": "a", "tools": {"deny": ["exec"]}}, {"id": "b"}]}},
            {
                "agents": {
                    "ownership": "explicit",
                    "entries": {"a": {"tools": {"deny": ["exec"]}}, "b": {}},
                }
            },  # noqa: E501
            None,
        ),
    ],
    ids=[
        "concurrency",
        "dm-chat-type",
        "media-dm-chat-type",
        "fractional-timeout",
        "builtin-url-pair",
        "dangling-flag",
        "max-chars-zero",
        "never-runs",
        "media-cli-no-args",
        "private-network",
        "agent-id",
        "ownership",
    ],  # fmt: skip
)
def test_current_export_rules(
    document: dict[str, Any], expected: dict[str, Any], note: str | None
) -> None:
    result = export_openclaw(document)
    assert result.document == expected
    assert schema_errors(result.document) == []
    if note is None:
        assert result.notes == []
    else:
        assert any(note in line for line in result.notes), result.notes


def test_the_default_link_model_is_written_so_openclaw_leaves_it_reading_stdin() -> None:
    """What OpenClaw 2026.9 runs from the exported default: no argument names LinkUrl any more,
    and no --url is left without its value."""
    models = export_openclaw({"tools": {"links": {"models": [{"command": "link-understand",
              "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}]}}}).document  # fmt: skip
    args = models["tools"]["links"]["models"][0]["args"]
    after_openclaw = [arg for arg in args if not openclaw_export.names_link_url(arg)]
    assert after_openclaw == ["--format", "markdown"]


# --- round trips through the database -----------------------------------------------------


def store(doc: dict[str, Any]) -> dict[str, Any]:
    document, _notes = openclaw_to_config(doc)
    config_replace(document=document)
    return config_document()


SOURCES = {
    "demo": lambda: demo_document(PAGES_DIR),
    "legacy-file": lambda: openclaw_load(OPENCLAW_FILE),
    "written-by-patch": lambda: fixture("written-by-patch.json"),
    "written-by-set": lambda: fixture("written-by-set.json"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("target", ["current", "legacy"])
@pytest.mark.parametrize("source", list(SOURCES))
def test_export_import_export_is_a_fixed_point(source: str, target: str) -> None:
    first = export_openclaw(store(SOURCES[source]()), target).document
    second = export_openclaw(store(copy.deepcopy(first)), target).document
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)
    if target == "current":
        assert schema_errors(first) == []


def without(doc: Any, path: str) -> None:
    """Remove the key a note names (``a.b[2].c``) from ``doc``."""
    parts = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", path)]
    for part in parts[:-1]:
        doc = doc[part]
    del doc[parts[-1]]


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["written-by-patch.json", "written-by-set.json"])
def test_a_config_written_by_openclaw_comes_back_the_same_less_only_the_noted_keys(
    name: str,
) -> None:
    """links, media, agents and web fetch: import, store, export (current) gives OpenClaw's own
    sections back, except exactly the keys the import named in a note."""
    original = fixture(name)
    _document, notes = openclaw_to_config(original)
    expected = copy.deepcopy(original)
    for note in notes:
        path = note.split(":", 1)[0]
        if path.startswith(("tools.", "agents.")):
            without(expected, path)
    if "agents" in expected:  # written again from the roster, as OpenClaw wants it
        expected["agents"].pop("ownership", None)
    exported = export_openclaw(store(original)).document
    assert schema_errors(exported) == []
    for section in SECTIONS:
        assert exported["tools"].get(section) == expected["tools"].get(section), section
    assert exported["agents"]["entries"] == expected["agents"]["entries"]
    assert ("ownership" in exported["agents"]) == ("ownership" in original["agents"])


@pytest.mark.django_db
def test_export_command_writes_the_target_and_notes_on_stderr(tmp_path: Path) -> None:
    import io

    from django.core.management import CommandError, call_command

    config_replace(document=demo_document(PAGES_DIR))
    for target in ("current", "legacy"):
        out, err = io.StringIO(), io.StringIO()
        call_command("export_openclaw_config", "--target", target, stdout=out, stderr=err)
        result = export_openclaw(config_document(), target)
        assert json.loads(out.getvalue()) == result.document
        assert err.getvalue().splitlines() == [f"note: {note}" for note in result.notes]
    out = io.StringIO()
    call_command("export_openclaw_config", stdout=out, stderr=io.StringIO())
    assert "entries" in json.loads(out.getvalue())["agents"]  # current is the default
    with pytest.raises(CommandError, match="invalid choice: 'newest'"):
        call_command("export_openclaw_config", "--target", "newest")


@pytest.mark.django_db
def test_api_exports_either_target_and_get_config_is_unchanged(user_client) -> None:
    config_replace(document=demo_document(PAGES_DIR))
    stored = user_client.get("/api/config").json()
    assert "list" in stored["agents"]
    answer = user_client.get("/api/config/openclaw").json()
    assert answer["target"] == "current" and answer["openclawVersion"] == "2026.9.6"
    assert schema_errors(answer["config"]) == []
    assert answer["notes"] == export_openclaw(stored).notes
    legacy = user_client.get("/api/config/openclaw?target=legacy").json()
    assert legacy["config"] == stored
    bad = user_client.get("/api/config/openclaw?target=newest")
    assert bad.status_code == 422
    assert "target" in bad.content.decode()


@pytest.mark.django_db
def test_admin_offers_a_download_per_target_with_its_notes(staff_client) -> None:
    from django.urls import reverse

    from enrichment.config.store import active_config

    config_replace(document=demo_document(PAGES_DIR))
    pk = active_config().pk
    page = staff_client.get(reverse("admin:enrichment_enrichmentconfig_change", args=[pk]))
    html = page.content.decode()
    assert 'id="openclaw-export"' in html
    note = export_openclaw(config_document())
    assert note.notes[1].split(":")[0] in html  # agents.list[1].tools.links
    for target in ("current", "legacy"):
        url = reverse("admin:enrichment_openclaw_export", args=[pk, target])
        assert f'href="{url}"' in html
        download = staff_client.get(url)
        assert download["Content-Disposition"].startswith("attachment;")
        assert json.loads(download.content) == export_openclaw(config_document(), target).document
    missing = staff_client.get(reverse("admin:enrichment_openclaw_export", args=[pk, "newest"]))
    assert missing.status_code == 404
