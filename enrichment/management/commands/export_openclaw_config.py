"""``manage.py export_openclaw_config [--output FILE]``: the stored config as OpenClaw JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from enrichment.config.openclaw import config_to_openclaw
from enrichment.config.store import config_document


class Command(BaseCommand):
    help = "Write the stored enrichment config in OpenClaw's shape (JSON) to stdout or FILE."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", type=Path, help="Write to FILE instead of stdout.")

    def handle(self, *args: Any, **options: Any) -> None:
        text = config_to_openclaw(config_document())
        output: Path | None = options["output"]
        if output is None:
            self.stdout.write(text, ending="")
            return
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc}") from None
        self.stderr.write(f"wrote {output}")
