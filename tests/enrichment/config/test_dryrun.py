"""Dry run over recorded history: it agrees with real runs under the new config, it never
starts a process or opens a socket, and bad input is a 4xx."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from enrichment import resolver
from enrichment.config import dryrun as config_dryrun
from enrichment.config.changes import config_replace
from enrichment.models import Run
from enrichment.pipeline.dryrun.evaluate import recorded_decision
from enrichment.pipeline.runner import CommandResult
from enrichment.services import links
from enrichment.services import runs as services

DNS = {
    "news.example": ["93.184.216.34"],
    "docs.example": ["93.184.216.35"],
    "intranet.example": ["10.0.0.7"],
    "wiki.example": ["93.184.216.36", "192.168.1.9"],
}

MESSAGES = [
    {"body": "read https://news.example/a and https://docs.example/b", "channel": "slack"},
    {"body": "see https://intranet.example/wiki", "channel": "slack", "chat_type": "group"},
    {"body": "see https://wiki.example/x", "channel": "discord", "chat_type": "direct"},
    {"body": "https://news.example/ok please", "channel": "discord", "chat_type": "group"},
    {"body": "no links here", "channel": "slack"},
    {"body": "http://localhost:8000/admin", "channel": "slack", "chat_type": "direct"},
    {"body": "https://docs.example/ok", "channel": "telegram", "session_key": "Ops:room1"},
    {"body": "https://nowhere.invalid/z", "channel": "slack"},
    {"body": "https://docs.example/c", "channel": "slack", "agent_id": "research"},
    {"body": "https://news.example/ok", "channel": "whatsapp", "agent_id": "quiet"},
]


def config_a() -> dict[str, Any]:
    return {
        "tools": {
            "links": {
                "scope": {
                    "default": "allow",
                    "rules": [{"action": "deny", "match": {"channel": "whatsapp"}}],
                },
                "models": [
                    {"type": "cli", "command": "sum-a", "args": ["--url", "{{LinkUrl}}"]},
                    {"type": "cli", "command": "sum-b", "args": ["{{LinkUrl}}"]},
                ],
            }
        }
    }


def config_b() -> dict[str, Any]:
    return {
        "tools": {
            "links": {
                "maxLinks": 1,
                "scope": {
                    "default": "allow",
                    "rules": [
                        {"action": "deny", "match": {"channel": "discord", "chatType": "group"}},
                        {"action": "deny", "match": {"keyPrefix": "ops:"}},
                    ],
                },
                "models": [
                    {
                        "type": "cli",
                        "command": "sum-a",
                        "args": ["--url", "{{LinkUrl}}", "--channel", "{{ChatType}}"],
                    }
                ],
            },
            "web": {"fetch": {"ssrfPolicy": {"allowPrivateNetwork": True}}},
        },
        "agents": {
            "list": [
                {"id": "research", "tools": {"links": {"enabled": False}}},
                {"id": "quiet", "tools": {"links": {"scope": {"default": "allow", "rules": []}}}},
            ]
        },
    }


async def fake_cli(argv: tuple[str, ...], *, timeout_seconds: float, **_: Any) -> CommandResult:
    """sum-a summarises URLs containing "ok" and fails on others; sum-b prints nothing."""
    if argv[0] == "sum-a" and any("ok" in arg for arg in argv[1:]):
        return CommandResult("success", None, 0, 5, f"summary of {argv[2]}", 20, "")
    if argv[0] == "sum-a":
        return CommandResult("failed", "exited with code 1", 1, 5, "", 0, "boom")
    return CommandResult("skipped", "empty output", 0, 5, "", 0, "")


@pytest.fixture
def fake_world(monkeypatch):
    def resolve(host: str) -> list[str]:
        if host not in DNS:
            raise socket.gaierror("no such host")
        return DNS[host]

    monkeypatch.setattr(resolver, "resolve_host", resolve)
    monkeypatch.setattr(links, "run_command", fake_cli)


def enrich_all() -> list[int]:
    ids = []
    for message in MESSAGES:
        result = async_to_sync(services.enrichment_run)(request=services.EnrichRequest(**message))
        ids.append(result["runId"])
    return ids


@pytest.mark.django_db(transaction=True)
def test_dry_run_agrees_with_real_runs_under_the_new_config(fake_world):
    config_replace(document=config_a())
    enrich_all()
    report = config_dryrun.config_dry_run(document=config_b(), window={"lastRuns": 100})
    assert report["evaluated"] == len(MESSAGES)
    predicted = {item["runId"]: item["after"] for item in report["affected"]}

    old_ids = list(Run.objects.order_by("id").values_list("id", flat=True))
    config_replace(document=config_b())
    new_ids = enrich_all()
    new_runs = {run.run_id: run for run in config_dryrun.recorded_runs(new_ids)}
    old_runs = {run.run_id: run for run in config_dryrun.recorded_runs(old_ids)}
    compared = unknown = 0
    for old_id, new_id in zip(old_ids, new_ids, strict=True):
        real = recorded_decision(new_runs[new_id])
        after = predicted.get(old_id) or recorded_decision(old_runs[old_id]).to_dict()
        assert after["matchedRule"] == real.matched_rule
        assert [u["url"] for u in after["urls"]] == [u.url for u in real.urls]
        if after["outcome"] == "unknown":
            # localhost was blocked by name under A, so no DNS answer was ever recorded:
            # the dry run says so instead of guessing.
            assert [u["blocked"] for u in after["urls"]] == [None]
            unknown += 1
            continue
        assert after["outcome"] == real.gate, (old_id, after, real)
        assert [(u["url"], u["blocked"], u["reason"]) for u in after["urls"]] == [
            (u.url, u.blocked, u.reason) for u in real.urls
        ]
        for planned, real_url in zip(after["urls"], real.urls, strict=True):
            assert planned["argv"][: len(real_url.argvs)] == [list(a) for a in real_url.argvs]
        compared += 1
    assert (compared, unknown) == (len(MESSAGES) - 1, 1)
    kinds = {item["change"]: item["count"] for item in report["counts"]}
    # discord group, ops: key → scope-deny; research agent → disabled; whatsapp via the
    # quiet agent's own scope → runs now; intranet/wiki private answers → now allowed.
    assert kinds["outcome:scope-deny"] == 2
    assert kinds["outcome:disabled"] == 1
    assert kinds["url:now-allowed"] == 2
    assert kinds["url:argv-changed"] >= 1


@pytest.mark.django_db(transaction=True)
def test_dry_run_starts_no_process_and_opens_no_socket(fake_world, monkeypatch, staff_client):
    config_replace(document=config_a())
    enrich_all()
    touched: list[str] = []

    def refuse(name: str):
        def forbidden(*args: Any, **kwargs: Any) -> Any:
            touched.append(name)
            raise AssertionError(f"dry run called {name}")

        return forbidden

    for target, name in [
        (subprocess.Popen, "__init__"),
        (socket.socket, "connect"),
        (socket.socket, "connect_ex"),
        (socket, "getaddrinfo"),
        (socket, "create_connection"),
        (asyncio, "create_subprocess_exec"),
        (os, "posix_spawn"),
        (os, "fork"),
    ]:
        monkeypatch.setattr(target, name, refuse(f"{getattr(target, '__name__', target)}.{name}"))
    monkeypatch.setattr(resolver, "resolve_host", refuse("resolve_host"))
    monkeypatch.setattr(links, "run_command", refuse("run_command"))

    response = staff_client.post(
        "/api/config/dry-run",
        {"config": config_b(), "window": {"lastRuns": 50, "days": 1}},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["affectedRuns"] > 0
    assert touched == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"config": {"tools": {"links": {"maxLinks": "many"}}}}, "tools.links.maxLinks"),
        ({"config": {"tools": {"bogus": 1}}}, "tools.bogus"),
        ({"config": {}, "window": {"lastRuns": 0}}, "window.lastRuns"),
        ({"config": {}, "window": {"lastRuns": 10_001}}, "window.lastRuns"),
        ({"config": {}, "window": {"days": -1}}, "window.days"),
        ({"config": {}, "window": {"days": "week"}}, "window.days"),
        ({"config": {}, "window": {"hours": 3}}, "window.hours"),
        ({"config": {}, "window": {"lastRuns": True}}, "window.lastRuns"),
    ],
    ids=[
        "bad-type",
        "unknown-key",
        "zero-runs",
        "too-many",
        "negative-days",
        "text-days",
        "unknown-window-key",
        "bool-runs",
    ],
)
def test_dry_run_rejects_bad_input_naming_it(user_client, body, fragment):
    response = user_client.post("/api/config/dry-run", body, content_type="application/json")
    assert response.status_code == 422
    assert fragment in response.content.decode()


def test_dry_run_needs_a_login(client, db):
    response = client.post("/api/config/dry-run", {"config": {}}, content_type="application/json")
    assert response.status_code == 401


def test_dry_run_with_no_history_evaluates_nothing(user_client):
    response = user_client.post(
        "/api/config/dry-run", {"config": config_b()}, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["evaluated"] == 0
    assert response.json()["affected"] == []
