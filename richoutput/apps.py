from django.apps import AppConfig


class RichOutputConfig(AppConfig):
    """Assistant replies rendered for delivery: stored messages, canvas blocks and documents."""

    name = "richoutput"
    verbose_name = "Rich output"
    default_auto_field = "django.db.models.BigAutoField"
