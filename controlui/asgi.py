"""ASGI entry point: ``daphne controlui.asgi:application`` (and ``manage.py runworker enrichment``)."""

import atexit
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")

from controlui.tracing import tracing_configure  # noqa: E402

# Before Django builds its middleware: the Django instrumentation adds its own.
tracing_configure()
# Django must be set up before anything imports models (consumers, auth middleware).
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from common import metrics  # noqa: E402
from controlui.metrics import route_of  # noqa: E402
from controlui.request_limits import body_limit_for  # noqa: E402
from controlui.routing import websocket_urlpatterns  # noqa: E402
from enrichment.jobs.channel_worker import EnrichmentWorker  # noqa: E402
from enrichment.services.interrupted import recover_interrupted_runs  # noqa: E402
from enrichment.services.links import start_extraction_pool  # noqa: E402
from server import daphne_body  # noqa: E402
from server.body_limits import RequestBodyLimit  # noqa: E402
from server.request_metrics import RequestMetrics  # noqa: E402
from server.ws_origin import SameOriginValidator  # noqa: E402

recover_interrupted_runs()
# Body limits are enforced while daphne receives the body, before Django buffers anything.
daphne_body.install(body_limit_for)
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
