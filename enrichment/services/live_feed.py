"""The live feed of decisions: every recorded run, pushed to the dashboards' ``/ws/decisions/``
sockets (group ``decisions``) as its summary (the ``GET /api/decisions`` item shape)."""

from __future__ import annotations

import logging

from channels.layers import get_channel_layer

from enrichment.models import Run
from enrichment.selectors.summary import run_summary

logger = logging.getLogger(__name__)

DECISIONS_GROUP = "decisions"


async def decision_broadcast(run: Run) -> None:
    layer = get_channel_layer()
    if layer is not None:
        try:
            await layer.group_send(
                DECISIONS_GROUP, {"type": "decision.recorded", "run": run_summary(run)}
            )
        except Exception as exc:  # the live feed is best effort: a stored run stays a success
            logger.warning("run %s not pushed to the live feed: %s", run.pk, exc)
