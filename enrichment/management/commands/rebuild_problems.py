"""``manage.py rebuild_problems``: recount problems from the runs still stored."""

from __future__ import annotations

import shutil
import time
from typing import Any

from django.core.management.base import BaseCommand

from enrichment.management.commands.enrich import progress_bar
from enrichment.models import Problem
from enrichment.services.problems import problems_rebuild


class Command(BaseCommand):
    help = (
        "Recount problems (failures grouped by fingerprint) from the stored runs. States "
        "(resolved, ignored) are kept; runs already pruned are no longer counted."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        counted = problems_rebuild(progress=lambda done, total: self.progress(done, total, started))
        self.stdout.write(
            f"{Problem.objects.count()} problems from {counted} failures "
            f"({time.monotonic() - started:.1f} s)"
        )

    def progress(self, done: int, total: int, started: float) -> None:
        status = progress_bar(done, total, started).replace("msg/s", "runs/s")
        if self.stderr.isatty():
            width = shutil.get_terminal_size().columns - 1
            self.stderr.write("\r" + status[:width], style_func=str, ending="")
            if done == total:
                self.stderr.write("", style_func=str)
        elif done == total or done % max(1, total // 10) < 500:
            self.stderr.write(status, style_func=str)
