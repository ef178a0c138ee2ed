"""Dashboard page routes contributed by the feature areas (kept apart from the project URLs)."""

from django.urls import path

from enrichment.config import views as config_views
from enrichment.views import explain, history, problems, runs
from enrichment.views import tools as tool_views
from richoutput import views as canvas_views

urlpatterns: list = [
    path("decisions/", history.decision_history, name="decisions"),
    path("decisions/counts/", history.decision_history_counts, name="decision-counts"),
    path("decisions/<int:run_id>/", runs.decision_detail, name="decision-detail"),
    path("decisions/views/", history.saved_view_create, name="saved-view-create"),
    path("decisions/views/<int:view_id>/", history.saved_view_open, name="saved-view"),
    path(
        "decisions/views/<int:view_id>/delete/",
        history.saved_view_delete,
        name="saved-view-delete",
    ),
    path("problems/", problems.problems, name="problems"),
    path("problems/<int:problem_id>/", problems.problem, name="problem"),
    path("explain/", explain.explain, name="explain"),
    path("config/history/", config_views.config_history, name="config-history"),
    path("config/versions/<int:number>/", config_views.config_version, name="config-version"),
    path(
        "config/versions/<int:number>/restore/",
        config_views.config_restore,
        name="config-restore",
    ),
    path("config/preview/<int:config_id>/", config_views.config_preview, name="config-preview"),
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
