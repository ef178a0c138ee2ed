from django.apps import AppConfig


class ControlUIConfig(AppConfig):
    name = "controlui"
    verbose_name = "Control UI"
    default_auto_field = "django.db.models.BigAutoField"
