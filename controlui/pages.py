"""Dashboard page routes contributed by the feature areas (kept apart from the project URLs)."""


urlpatterns: list = []
