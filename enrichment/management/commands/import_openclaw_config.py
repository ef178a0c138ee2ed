"""``manage.py import_openclaw_config FILE [--dry-run]``: store the enrichment part of an
OpenClaw config file (JSON5), replacing the stored config atomically."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.errors import InvalidInput
from enrichment.config.changes import config_replace
from enrichment.config.openclaw import OpenClawFileError, openclaw_load, openclaw_to_config
from enrichment.pipeline.config.model import ConfigError
from enrichment.pipeline.config.parser import parse_config


class Command(BaseCommand):
    help = (
        "Import tools.links, tools.media, tools.web.fetch, the tool policy keys and the "
        "agents (agents.list, or OpenClaw 2026.9's agents.entries) from an OpenClaw config "
        "file (JSON5; '-' reads stdin), in either shape. Other sections and keys are ignored "
        "with a note saying why. Nothing changes when any part is invalid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="OpenClaw config file (JSON5), or - for stdin.")
        parser.add_argument(
            "--dry-run", action="store_true", help="Validate and report; store nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        text = self.read(options["file"])
        try:
            document, notes = openclaw_to_config(openclaw_load(text))
        except OpenClawFileError as exc:
            raise CommandError(f"{options['file']}: {exc}") from None
        for note in notes:
            self.stdout.write(f"note: {note}")
        if options["dry_run"]:
            try:
                parse_config(document)
            except ConfigError as exc:
                raise CommandError(invalid_message([str(issue) for issue in exc.errors])) from None
            self.stdout.write(self.style.SUCCESS("valid; nothing stored (--dry-run)"))
            return
        try:
            stored = config_replace(
                document=document,
                source="import",
                author="import_openclaw_config",
                note=f"imported from {options['file']}"[:500],
            )
        except InvalidInput as exc:
            raise CommandError(invalid_message(exc.errors or [exc.detail])) from None
        links = stored.get("tools", {}).get("links", {})
        agents = stored.get("agents", {}).get("list", [])
        self.stdout.write(
            self.style.SUCCESS(
                f"imported: {len(links.get('models', []))} link model(s), "
                f"{len((links.get('scope') or {}).get('rules', []))} scope rule(s), "
                f"{len(agents)} agent(s)"
            )
        )

    def read(self, name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            return Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {name}: {exc}") from None


def invalid_message(errors: list[Any]) -> str:
    return "invalid configuration, nothing changed:\n" + "\n".join(f"  {e}" for e in errors)
