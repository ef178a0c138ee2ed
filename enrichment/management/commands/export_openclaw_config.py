"""``manage.py export_openclaw_config [--target current|legacy] [--output FILE]``: the stored
config as an OpenClaw config file (JSON), for OpenClaw 2026.9 (``current``, the default) or in
the legacy shape of our spec. Each setting the target has no home for is named on stderr
(``note: …``), so stdout stays the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from enrichment.config.openclaw import config_to_openclaw
from enrichment.config.openclaw_export import (
    DEFAULT_TARGET,
    OPENCLAW_VERSION,
    TARGETS,
    export_openclaw,
)
from enrichment.config.store import config_document


class Command(BaseCommand):
    help = (
        "Write the stored enrichment config as an OpenClaw config file (JSON) to stdout or "
        f"FILE: --target current for OpenClaw {OPENCLAW_VERSION} (default), legacy for the "
        "shape of our spec. Settings the target has no home for are listed on stderr."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", type=Path, help="Write to FILE instead of stdout.")
        parser.add_argument(
            "--target",
            choices=TARGETS,
            default=DEFAULT_TARGET,
            help=f"current: OpenClaw {OPENCLAW_VERSION} (agents.entries, one media model list); "
            "legacy: agents.list, per-capability and per-agent blocks. Default: current.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        exported = export_openclaw(config_document(), options["target"])
        for note in exported.notes:
            self.stderr.write(f"note: {note}")
        text = config_to_openclaw(exported.document)
        output: Path | None = options["output"]
        if output is None:
            self.stdout.write(text, ending="")
            return
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc}") from None
        self.stderr.write(f"wrote {output} ({exported.target} shape)")
