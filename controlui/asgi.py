"""ASGI entry point: ``daphne controlui.asgi:application`` (and ``manage.py runworker enrichment``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlui.settings")
# Django must be set up before anything imports models (consumers, auth middleware).
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from controlui.routing import websocket_urlpatterns  # noqa: E402
from enrichment.link_builtin import start_extraction_pool  # noqa: E402
from enrichment.startup import recover_interrupted_runs  # noqa: E402
from enrichment.workers import EnrichmentWorker  # noqa: E402

recover_interrupted_runs()
# Pre-warmed before the first request: the built-in link-understand extracts pages there.
start_extraction_pool()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
        "channel": ChannelNameRouter({"enrichment": EnrichmentWorker.as_asgi()}),
    }
)
