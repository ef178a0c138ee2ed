from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from controlui import views
from controlui.api import api
from controlui.metrics import metrics_view

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="registration/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("metrics", metrics_view, name="metrics"),
    path("", include("controlui.pages")),
]
