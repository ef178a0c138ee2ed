"""End to end: a real OpenClaw gateway (npm ``openclaw@2026.9.6`` on Node 24) with the plugin
of ``integrations/openclaw``, a real daphne serving Control UI, a fake model and a local page.

One scenario runs once per module, in the order a user would live it, and each test checks
one promise of issue 31 against what the scenario recorded:

1. a message holding a URL to a local page goes through the gateway's own entry (the
   ``openclaw agent`` CLI, which talks to the running gateway over its WebSocket);
2. Control UI is stopped, and another message goes through;
3. a listener that accepts and never answers takes Control UI's port (Control UI hung), and
   a third message goes through.

Needs npm only when the cache is cold (``~/.cache/controlui-openclaw/``, or
``$XDG_CACHE_HOME``, or ``$CONTROLUI_OPENCLAW_CACHE``); skipped, saying why, when npm cannot
be reached then.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from tests.integrations.openclaw_harness import (
    Gateway,
    NpmUnreachable,
    black_hole,
    ensure_openclaw,
    fake_model,
    free_port,
    marked_pids,
    serve,
)
from tests.live import ROOT, LiveServer, live_server

pytestmark = [pytest.mark.slow, pytest.mark.openclaw]

PLUGIN_DIR = ROOT / "integrations" / "openclaw"
PLUGIN_ID = "controlui-bridge"
PAGES = ROOT / "bench" / "data" / "extraction"
PAGE = "news-harbour-bridge.html"
FIRST_SENTENCE = "The harbour bridge reopened to traffic on Monday morning"
VIEW_ID = "e2e-view"
REPLY_DIRECTIVE = f'[embed ref="{VIEW_ID}" title="E2E canvas" /]'
TIMEOUT_MS = 5000
# Control UI's stored config: the built-in fetcher, allowed to fetch pages on 127.0.0.1
# (the test page); the SSRF guard refuses private addresses otherwise.
STORE_LOCAL_FETCH_CONFIG = """
from enrichment.config.changes import config_replace
config_replace(document={
    "tools": {
        "links": {"models": [{"type": "cli", "command": "link-understand",
                              "args": ["--url", "{{LinkUrl}}", "--format", "markdown"]}]},
        "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
    }
})
"""


class PageHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        body = (PAGES / PAGE).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Turn:
    message: str
    seconds: float
    result: dict[str, Any]
    prompts: list[str]  # what the model was sent during this turn (its user messages)
    arrivals: list[float]  # when each of those requests reached the model

    def prompt(self) -> tuple[str, float]:
        """The model request that carried this turn's message, and when it arrived."""
        [found] = [
            (text, at)
            for text, at in zip(self.prompts, self.arrivals, strict=True)
            if self.message in text
        ]
        return found

    @property
    def reply(self) -> str:
        payloads = self.result.get("result", {}).get("payloads") or [{}]
        return str(payloads[0].get("text") or "")


@dataclass
class Scenario:
    session_key: str
    page_url: str
    mark: str
    token: str = ""
    validation_ok: dict[str, Any] = field(default_factory=dict)
    validation_bad: dict[str, Any] = field(default_factory=dict)
    turns: dict[str, Turn] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    run_detail: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    run_page: str = ""
    gateway_log: str = ""
    left_running: list[int] = field(default_factory=list)
    hung_accepts: list[float] = field(default_factory=list)  # when the hung port took a call
    timings: dict[str, float] = field(default_factory=dict)

    def waits(self, reason: str) -> list[int]:
        """The waits (ms) the plugin logged for turns not enriched for ``reason``."""
        pattern = re.compile(
            r"controlui-bridge: turn not enriched after (\d+) ms \(" + re.escape(reason) + r"\)"
        )
        return [int(match.group(1)) for match in pattern.finditer(self.gateway_log)]


def _agent_turn(gateway: Gateway, model: Any, session_key: str, message: str) -> Turn:
    before = len(model.requests)
    started = time.monotonic()
    done = gateway.cli(
        "agent", "--session-key", session_key, "--message", message, "--json", "--timeout", "90"
    )
    seconds = time.monotonic() - started
    return Turn(
        message,
        seconds,
        json.loads(done.stdout),
        model.user_texts()[before:],
        model.arrivals[before:],
    )


def _wait_for(probe: Any, what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _stop_daphne(server: LiveServer) -> None:
    os.kill(server.daphne_pid, signal.SIGTERM)
    port = int(server.base_url.rsplit(":", 1)[1])

    def closed() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return True
        return False

    _wait_for(closed, "Control UI to stop", timeout=20)


def _plugin_entry(base_url: str, token: str, timeout_ms: int) -> dict[str, Any]:
    return {
        "enabled": True,
        # Prompt hooks of a plugin that is not bundled need this grant.
        "hooks": {"allowConversationAccess": True},
        "config": {"baseUrl": base_url, "apiToken": token, "timeoutMs": timeout_ms},
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    started = time.monotonic()
    try:
        install = ensure_openclaw()
    except NpmUnreachable as exc:
        pytest.skip(f"npm cannot be reached to install Node 24 and OpenClaw: {exc}")
    timings = {"install (cached or fresh)": time.monotonic() - started}
    work = tmp_path_factory.mktemp("openclaw-e2e")
    home = work / "home"
    home.mkdir()
    gateway = Gateway(install=install, home=home, mark=uuid.uuid4().hex, port=free_port())
    session_key = f"agent:main:webchat:direct:e2e-{uuid.uuid4().hex[:8]}"
    mark = time.monotonic()
    with (
        serve(PageHandler) as pages,
        fake_model(REPLY_DIRECTIVE) as model,
        live_server(work / "controlui") as server,
    ):
        timings["Control UI start (migrate, daphne)"] = time.monotonic() - mark
        found = Scenario(
            session_key=session_key,
            page_url=f"{pages}/{PAGE}",
            mark=gateway.mark,
            timings=timings,
        )
        try:
            _run(found, gateway, model, server)
        finally:
            mark = time.monotonic()
            found.left_running = gateway.stop()
            timings["gateway stop"] = time.monotonic() - mark
            found.gateway_log = gateway.output()
            timings["whole scenario"] = time.monotonic() - started
            print("\nOpenClaw e2e timings (s):", {k: round(v, 1) for k, v in timings.items()})
        yield found


def _run(found: Scenario, gateway: Gateway, model: Any, server: LiveServer) -> None:
    timings = found.timings
    mark = time.monotonic()
    server.manage("shell", "-c", STORE_LOCAL_FETCH_CONFIG)
    token = found.token = server.manage("create_api_token", "live-user").stdout.strip()
    api = httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    # One enrichment before the gateway's: the first fetch of a fresh server starts its
    # extraction pool, which a turn with a 5 s budget should not have to wait for.
    api.post("/api/enrich", json={"body": f"warm up {found.page_url}"}).raise_for_status()
    timings["Control UI ready"] = time.monotonic() - mark

    mark = time.monotonic()
    gateway.write_config(
        {
            "models": {
                "providers": {
                    "fake": {
                        "baseUrl": f"{model.base_url}/v1",
                        "apiKey": "not-a-key",
                        "api": "openai-completions",
                        "models": [{"id": "echo", "name": "echo"}],
                    }
                }
            },
            "agents": {"defaults": {"model": "fake/echo"}},
            "gateway": {
                "mode": "local",
                "port": gateway.port,
                "bind": "loopback",
                "auth": {"mode": "none"},
            },
            "logging": {"file": str(gateway.home / "openclaw.log")},
            # As the plugin's README says: Control UI fetches the links, OpenClaw does not.
            "tools": {"links": {"enabled": False}},
        }
    )
    gateway.cli("plugins", "install", "--link", "--force", "--accept-capabilities", str(PLUGIN_DIR))
    config = gateway.read_config()
    config.setdefault("plugins", {}).setdefault("entries", {})[PLUGIN_ID] = _plugin_entry(
        server.base_url, token, timeout_ms=50
    )
    gateway.write_config(config)
    found.validation_bad = json.loads(
        gateway.cli("config", "validate", "--json", check=False).stdout
    )
    config["plugins"]["entries"][PLUGIN_ID] = _plugin_entry(server.base_url, token, TIMEOUT_MS)
    gateway.write_config(config)
    found.validation_ok = json.loads(
        gateway.cli("config", "validate", "--json", check=False).stdout
    )
    timings["plugin installed and config validated"] = time.monotonic() - mark

    mark = time.monotonic()
    gateway.start()
    timings["gateway start"] = time.monotonic() - mark

    found.turns["up"] = _agent_turn(
        gateway, model, found.session_key, f"Please read {found.page_url} for me"
    )
    timings["turn, Control UI up"] = found.turns["up"].seconds

    def runs() -> list[dict[str, Any]]:
        page = api.get("/api/decisions", params={"sessionKey": found.session_key})
        items: list[dict[str, Any]] = page.json()["items"]
        return items

    found.runs = _wait_for(runs, "the gateway's run in Control UI")
    found.run_detail = api.get(f"/api/decisions/{found.runs[0]['runId']}").json()

    def messages() -> list[dict[str, Any]]:
        page = api.get("/api/messages", params={"sessionKey": found.session_key})
        items: list[dict[str, Any]] = page.json()["items"]
        return items

    found.messages = _wait_for(messages, "the reply stored in Control UI")
    found.run_page = httpx.get(
        f"{server.base_url}/decisions/{found.runs[0]['runId']}/",
        cookies=server.login_cookies(),
    ).text
    api.close()

    _stop_daphne(server)
    found.turns["down"] = _agent_turn(
        gateway, model, found.session_key, f"Control UI is down, read {found.page_url}"
    )
    timings["turn, Control UI stopped"] = found.turns["down"].seconds

    with black_hole(int(server.base_url.rsplit(":", 1)[1])) as accepts:
        found.hung_accepts = accepts
        found.turns["hung"] = _agent_turn(
            gateway, model, found.session_key, f"Control UI hangs, read {found.page_url}"
        )
    timings["turn, Control UI hung"] = found.turns["hung"].seconds


# --- the promises -----------------------------------------------------------------------


def test_openclaw_validates_the_plugin_config_with_its_schema(scenario: Scenario) -> None:
    assert scenario.validation_ok.get("valid") is True, scenario.validation_ok
    assert scenario.validation_bad.get("valid") is False
    assert {
        "path": f"plugins.entries.{PLUGIN_ID}.config.timeoutMs",
        "message": "invalid config: must be >= 100",
    } in scenario.validation_bad["issues"], scenario.validation_bad


def test_control_ui_recorded_the_gateways_turn_and_the_links_decision(scenario: Scenario) -> None:
    [run] = scenario.runs
    assert run["sessionKey"] == scenario.session_key
    assert (run["channel"], run["chatType"], run["agentId"]) == ("webchat", "direct", "main")
    assert run["outcome"] == "success" and run["urlCount"] == 1
    links = scenario.run_detail["links"]
    assert links["outcome"] == "success"
    [decision] = links["urls"]
    assert decision["url"] == scenario.page_url
    assert decision["blocked"] is False
    assert decision["chosen"]["outcome"] == "success"
    assert decision["chosen"]["argv"][:2] == ["link-understand", "--url"]


def test_the_model_received_the_link_envelope_once(scenario: Scenario) -> None:
    turn = scenario.turns["up"]
    assert turn.result["status"] == "ok", turn.result
    prompt, _ = turn.prompt()
    envelope = f"[Link]\nURL: {scenario.page_url}\nSource: link-understand\nSummary:\n"
    assert envelope in prompt
    assert prompt.index(turn.message) < prompt.index(envelope)
    assert FIRST_SENTENCE in prompt
    # Control UI fetched the page; OpenClaw's own link understanding stayed off.
    assert prompt.count("[Link") == 1


def test_the_reply_is_stored_with_its_canvas_block_and_linked_from_the_run(
    scenario: Scenario,
) -> None:
    assert REPLY_DIRECTIVE in scenario.turns["up"].reply  # what the model answered
    [message] = scenario.messages
    assert message["sessionKey"] == scenario.session_key
    assert message["rawText"] == scenario.turns["up"].reply
    assert message["blocks"] == [
        {
            "type": "canvas",
            "preview": {
                "kind": "canvas",
                "surface": "assistant_message",
                "render": "url",
                "viewId": VIEW_ID,
                "url": f"/__openclaw__/canvas/documents/{VIEW_ID}/index.html",
                "title": "E2E canvas",
            },
        }
    ]
    assert REPLY_DIRECTIVE not in message["text"]
    assert f'<a href="/messages/{message["id"]}/">Message #{message["id"]}</a>' in scenario.run_page


def test_with_control_ui_stopped_the_gateway_still_answers_at_once(scenario: Scenario) -> None:
    turn = scenario.turns["down"]
    assert turn.result["status"] == "ok", turn.result
    assert turn.reply.startswith("Echo: ")
    prompt, _ = turn.prompt()
    assert "[Link" not in prompt  # unenriched, and OpenClaw did not fetch it either
    # Measured inside the gateway (wall time of a CLI turn swings with the machine's load):
    # a refused connection costs the turn no waiting.
    [waited] = scenario.waits("cannot connect (connection refused)")
    assert waited < 1000, f"the turn waited {waited} ms"


def test_with_control_ui_hung_the_turn_waits_the_timeout_and_no_longer(scenario: Scenario) -> None:
    turn = scenario.turns["hung"]
    assert turn.result["status"] == "ok", turn.result
    assert turn.reply.startswith("Echo: ")
    prompt, reached_model = turn.prompt()
    assert "[Link" not in prompt
    [waited] = scenario.waits(f"timed out after {TIMEOUT_MS} ms")
    # (Timers and the clock may disagree by a millisecond or two.)
    assert TIMEOUT_MS - 20 <= waited < TIMEOUT_MS + 1500, f"the turn waited {waited} ms"
    # And seen from outside: from the plugin's call reaching the hung port to the turn's
    # prompt reaching the model, the timeout and the rest of the prompt's preparation.
    called = scenario.hung_accepts[0]
    assert TIMEOUT_MS / 1000 <= reached_model - called < TIMEOUT_MS / 1000 + 5


def test_the_plugins_log_lines_never_hold_the_token(scenario: Scenario) -> None:
    lines = [line for line in scenario.gateway_log.splitlines() if "controlui-bridge:" in line]
    assert lines
    assert not [line for line in lines if scenario.token in line]


def test_every_process_the_scenario_started_is_gone(scenario: Scenario) -> None:
    assert scenario.left_running == [], "processes needed SIGKILL"
    assert marked_pids(scenario.mark) == []
