"""``manage.py runworker enrichment``: the enrichment worker, a Dramatiq worker when Redis is set.

Any other channel (and ``enrichment`` without a Redis channel layer) is served by Channels'
own ``runworker``, which this command extends; ``enrichment`` is listed before ``channels``
in ``INSTALLED_APPS`` so that this one answers to the name.
"""

from __future__ import annotations

from typing import Any

from channels.management.commands.runworker import Command as ChannelsRunworker

from common.heap import startup_heap_freeze
from enrichment.jobs import queue as jobqueue
from enrichment.services.interrupted import recover_interrupted_runs, sweeper_start


class Command(ChannelsRunworker):
    help = "Run enrichment jobs (Dramatiq on Redis) or serve other worker channels."

    def handle(self, *args: Any, **options: Any) -> None:
        if options["channels"] == ["enrichment"] and jobqueue.queue_mode():
            from enrichment.jobs.worker import serve_forever
            from enrichment.services.links import start_extraction_pool

            recover_interrupted_runs()
            sweeper_start()
            # Pre-warmed before the first job, as in daphne (controlui/asgi.py): the built-in
            # link-understand extracts pages there.
            start_extraction_pool()
            startup_heap_freeze()  # as in daphne: start-up's heap out of the GC's sweeps
            serve_forever()
            return
        super().handle(*args, **options)
