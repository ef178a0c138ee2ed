from django.urls import path

from common.consumers import PingConsumer
from enrichment.routing import websocket_urlpatterns as enrichment_websockets

websocket_urlpatterns = [
    path("ws/ping/", PingConsumer.as_asgi()),
    *enrichment_websockets,
]
