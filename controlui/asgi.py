"""ASGI entry point: ``daphne controlui.asgi:application`` (and ``manage.py runworker enrichment``)."""

import atexit
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")

from controlui.tracing import tracing_configure  # noqa: E402

# Before Django builds its middleware: the Django instrumentation adds its own.
tracing_configure()
# Django must be set up before anything imports models (consumers, auth middleware).
django.setup(set_prefix=False)

from server.body_limits import RequestBodyLimit, SpooledBodyASGIHandler  # noqa: E402

# Django's handler, taking daphne's spooled body as the request stream (no copy on the loop).
django_asgi_app = SpooledBodyASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from accounts.credentials import credentials_valid  # noqa: E402
from common import metrics  # noqa: E402
from common.heap import startup_heap_freeze  # noqa: E402
from controlui.metrics import route_of  # noqa: E402
from controlui.request_limits import body_limit_for, credential_need_for  # noqa: E402
from controlui.routing import websocket_urlpatterns  # noqa: E402
from enrichment.jobs.channel_worker import EnrichmentWorker  # noqa: E402
from enrichment.services.interrupted import (  # noqa: E402
    recover_interrupted_runs,
    sweeper_start,
)
from enrichment.services.links import start_extraction_pool  # noqa: E402
from server import connections, daphne_body  # noqa: E402
from server.request_metrics import RequestMetrics  # noqa: E402
from server.ws_origin import SameOriginValidator  # noqa: E402

recover_interrupted_runs()
sweeper_start()  # and periodically: runs past the job deadline are closed
# Body limits are enforced while daphne receives the body, before Django buffers anything.
# Upload routes check credentials first: 401 without storing an anonymous body.
daphne_body.install(
    body_limit_for, daphne_body.CredentialRule(credential_need_for, credentials_valid)
)
# Header deadline, idle timeouts and a per-address connection cap for every connection.
connections.install(
    connections.ConnectionLimits(
        header_timeout=settings.HTTP_HEADER_TIMEOUT_SECONDS,
        idle_timeout=settings.HTTP_IDLE_TIMEOUT_SECONDS,
        websocket_idle_timeout=settings.WEBSOCKET_IDLE_TIMEOUT_SECONDS,
        max_per_client=settings.MAX_CONNECTIONS_PER_CLIENT,
    )
)
# Pre-warmed before the first request: the built-in link-understand extracts pages there.
start_extraction_pool()

# A process that stops takes its open-socket gauges out of the shared multiprocess files.
atexit.register(metrics.process_exit)
metrics.recording_set(settings.METRICS_ENABLED)

protocols = ProtocolTypeRouter(
    {
        "http": RequestBodyLimit(django_asgi_app, body_limit_for),  # type: ignore[arg-type]  # ASGI signatures
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        "channel": ChannelNameRouter({"enrichment": EnrichmentWorker.as_asgi()}),
    }
)
# HTTP and WebSocket traffic is counted around everything, by URL pattern (``/metrics``).
application = RequestMetrics(protocols, route_of) if settings.METRICS_ENABLED else protocols

# Ready: what start-up built lives as long as the process, out of the GC's full sweeps.
startup_heap_freeze()
