from __future__ import annotations

import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.errors import DomainError
from enrichment.api.limits import MAX_BODY_CHARS
from enrichment.services.runs import EnrichRequest, enrichment_run


def progress_bar(done: int, total: int, started: float, width: int = 30) -> str:
    filled = int(width * done / total) if total else width
    elapsed = time.monotonic() - started
    rate = done / elapsed if elapsed > 0 else 0.0
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {rate:.1f} msg/s"


class Command(BaseCommand):
    help = "Enrich a message with the stored config (recorded in the decision log like any run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("message", nargs="?", help="The message text.")
        parser.add_argument(
            "--file", type=Path, help="Enrich every non-empty line of FILE as its own message."
        )
        parser.add_argument("--channel")
        parser.add_argument("--chat-type", dest="chat_type")
        parser.add_argument("--session-key", dest="session_key")
        parser.add_argument("--agent", dest="agent_id")
        parser.add_argument("--json", action="store_true", help="Print the full decision as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        message, file = options["message"], options["file"]
        if (message is None) == (file is None):
            raise CommandError("give either a message or --file FILE (not both)")
        context = {key: options[key] for key in ("channel", "chat_type", "session_key", "agent_id")}
        if file is not None:
            self.enrich_file(file, context, as_json=options["json"])
            return
        result = self.enrich_one(message, context)
        self.stdout.write(
            json.dumps(result, indent=2, ensure_ascii=False) if options["json"] else result["body"]
        )

    def enrich_one(self, body: str, context: dict[str, Any]) -> dict[str, Any]:
        if len(body) > MAX_BODY_CHARS:
            raise CommandError(f"message too long: {len(body)} characters (limit {MAX_BODY_CHARS})")
        try:
            return async_to_sync(enrichment_run)(request=EnrichRequest(body=body, **context))
        except DomainError as exc:
            raise CommandError(exc.detail) from None

    def enrich_file(self, path: Path, context: dict[str, Any], *, as_json: bool) -> None:
        try:
            lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None
        outcomes: Counter[str] = Counter()
        started = time.monotonic()
        bar: TextIO = sys.stderr
        interactive = bar.isatty()
        for index, line in enumerate(lines, start=1):
            result = self.enrich_one(line, context)
            outcomes[result["links"]["outcome"]] += 1
            if as_json:
                self.stdout.write(json.dumps(result, ensure_ascii=False))
            status = progress_bar(index, len(lines), started)
            if interactive:
                bar.write("\r" + status[: shutil.get_terminal_size().columns - 1])
                bar.flush()
            elif index == len(lines) or index % 10 == 0:
                bar.write(status + "\n")
        if interactive:
            bar.write("\n")
        self.write_summary(outcomes, len(lines), time.monotonic() - started)

    def write_summary(self, outcomes: Counter[str], total: int, seconds: float) -> None:
        self.stdout.write(f"\n{'outcome':<12} {'runs':>6}")
        self.stdout.write(f"{'-' * 12} {'-' * 6}")
        for outcome, count in outcomes.most_common():
            self.stdout.write(f"{outcome:<12} {count:>6}")
        self.stdout.write(f"{'total':<12} {total:>6}   ({seconds:.1f} s)")
