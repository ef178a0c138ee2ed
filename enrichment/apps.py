from django.apps import AppConfig


class EnrichmentConfig(AppConfig):
    name = "enrichment"
    verbose_name = "Enrichment"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from enrichment import checks  # noqa: F401  (registers the system checks)
        from enrichment.config.cache import connect_signals

        connect_signals()  # a saved config row makes every process re-read the config
