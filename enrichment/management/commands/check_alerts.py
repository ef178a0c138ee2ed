"""``manage.py check_alerts``: evaluate the alert rules once and post what fires (for cron).

Exit status 0 when every message went out (or none was due), 1 when a delivery failed, so
cron's mail or a systemd timer's status shows it.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand

from enrichment.models import AlertDelivery
from enrichment.services.alerts import alerts_check


class Command(BaseCommand):
    help = "Check every enabled alert rule now; post to the webhooks of the rules that fire."

    def handle(self, *args: Any, **options: Any) -> None:
        checks = alerts_check()
        failed = False
        for check in checks:
            line = f"{check.rule.name}: {'FIRING' if check.evaluation.firing else 'ok'} - {check.evaluation.summary}"
            if check.delivery is not None:
                delivery = check.delivery
                line += f"; posted: {delivery.status} after {delivery.attempts} tr{'y' if delivery.attempts == 1 else 'ies'}"
                if delivery.status == AlertDelivery.Status.FAILED:
                    failed = True
                    line += f" ({delivery.error})"
            self.stdout.write(line)
        if not checks:
            self.stdout.write("no enabled alert rules")
        if failed:
            sys.exit(1)
