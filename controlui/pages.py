"""Dashboard page routes contributed by the feature areas (kept apart from the project URLs)."""

from django.urls import path

from controlui.rich import views as canvas_views
from enrichment import tool_views
from enrichment import views as enrichment_views

urlpatterns: list = [
    path("decisions/", enrichment_views.decision_history, name="decisions"),
    path("decisions/<int:run_id>/", enrichment_views.decision_detail, name="decision-detail"),
    path("explain/", enrichment_views.explain, name="explain"),
    path("tools/", tool_views.tool_access, name="tool-access"),
    path("render/", canvas_views.render_preview, name="render-preview"),
    path("messages/", canvas_views.message_list, name="messages"),
    path("messages/<int:message_id>/", canvas_views.message_detail, name="message-detail"),
    path(
        "__openclaw__/canvas/documents/<str:view_id>/index.html",
        canvas_views.canvas_document,
        name="canvas-document",
    ),
]
