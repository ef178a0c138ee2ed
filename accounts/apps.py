from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """API tokens: how programs (a gateway plugin, scripts) sign in to the API and sockets."""

    name = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"
