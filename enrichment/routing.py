from django.urls import path

from enrichment.consumers import DecisionsConsumer, EnrichConsumer

websocket_urlpatterns = [
    path("ws/enrich/", EnrichConsumer.as_asgi()),
    path("ws/decisions/", DecisionsConsumer.as_asgi()),
]
