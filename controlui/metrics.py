"""``GET /metrics``: Prometheus' text format, for a scraper with a token or on an allowed network.

The metrics themselves are declared in ``common/metrics.py``; this is the door: who may read
them (an active API token as ``Authorization: Bearer <token>``, or a client address inside
``METRICS_ALLOWED_NETWORKS``), the gauges read at scrape time from the database and the job
queue, and the URL patterns the ASGI edge labels requests with.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from ipaddress import ip_address

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client.core import Metric

from accounts.auth import BearerToken
from common import metrics
from controlui.health import workers_status
from controlui.routing import websocket_urlpatterns
from enrichment.models import Run

logger = logging.getLogger(__name__)

ACCESS_HINT = (
    "send an API token as 'Authorization: Bearer <token>' (admin: API tokens), or scrape "
    "from a network listed in METRICS_ALLOWED_NETWORKS"
)


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


def _client_allowed(request: HttpRequest) -> bool:
    try:
        client = ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:  # no address (a Unix socket) or a name: never "inside" a network
        return False
    return any(client in network for network in settings.METRICS_ALLOWED_NETWORKS)


def access_refusal(request: HttpRequest) -> Refusal | None:
    """None when the caller may read the metrics, else why not (401 or 403)."""
    if "authorization" in request.headers:
        if BearerToken()(request) is not None:
            return None
        return Refusal(401, f"metrics: the API token is invalid or revoked; {ACCESS_HINT}")
    if _client_allowed(request):
        return None
    if request.user.is_authenticated:
        return Refusal(403, f"metrics: a login session is not enough; {ACCESS_HINT}")
    return Refusal(401, f"metrics: authentication required; {ACCESS_HINT}")


def queue_readings() -> metrics.QueueReadings:
    """Runs running and overdue (the database), jobs queued, dead letters and live workers
    (the job queue, through the health check's reading; all 0 when runs execute in the web
    process, which has no queue)."""
    cutoff = timezone.now() - timedelta(seconds=settings.RUN_OVERDUE_SECONDS)
    counts = Run.objects.filter(outcome=Run.Outcome.RUNNING).aggregate(
        running=Count("id"), overdue=Count("id", filter=Q(created_at__lt=cutoff))
    )
    queue = workers_status()
    return metrics.QueueReadings(
        queued=queue.queued if queue is not None else 0,
        running=counts["running"],
        overdue=counts["overdue"],
        live_workers=len(queue.live) if queue is not None else 0,
        dead_letters=queue.deadLetters if queue is not None else 0,
        retrying=queue.retrying if queue is not None else 0,
    )


class ScrapeTime:
    """The gauges read when Prometheus scrapes; a database or queue that does not answer
    leaves them out instead of failing the whole scrape."""

    def collect(self) -> list[Metric]:
        try:
            return metrics.queue_metrics(queue_readings())
        except Exception as exc:
            logger.warning("metrics: the queue gauges could not be read: %s", exc)
            return []


@login_not_required
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not settings.METRICS_ENABLED:
        raise Http404("metrics are off (METRICS_ENABLED=0)")
    refusal = access_refusal(request)
    if refusal is not None:
        response = HttpResponse(
            refusal.message + "\n", status=refusal.status, content_type="text/plain"
        )
        if refusal.status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics.exposition(ScrapeTime()), content_type=metrics.CONTENT_TYPE)


_WEBSOCKET_ROUTES = frozenset("/" + str(pattern.pattern) for pattern in websocket_urlpatterns)


@lru_cache(maxsize=4096)
def route_of(kind: str, path: str) -> str:
    """The URL pattern a request went to, as a metrics label: ``/decisions/<int:run_id>/``,
    ``/static`` for static files, ``unmatched`` for anything no pattern serves."""
    if kind == "websocket":
        return path if path in _WEBSOCKET_ROUTES else "unmatched"
    if path.startswith("/" + settings.STATIC_URL.lstrip("/")):
        return "/static"
    try:
        return "/" + str(resolve(path).route)
    except Resolver404:
        return "unmatched"
