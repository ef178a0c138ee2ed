from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandParser

DEMO_USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Prepare a local demo: a superuser with a generated password (printed), and demo data "
        "on an empty install. Safe to run on every start."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-data", action="store_true", help="Skip the demo data.")
        parser.add_argument(
            "--port", type=int, default=8000, help="The port the dashboard will be served on."
        )

    def handle(self, *args: Any, no_data: bool, port: int, **options: Any) -> None:
        password = self.demo_password()
        user_model = get_user_model()
        user = user_model.objects.filter(username=DEMO_USERNAME).first()
        if user is None:
            user_model.objects.create_superuser(DEMO_USERNAME, "admin@example.invalid", password)
        elif not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
        if not no_data and "seed_demo" in get_commands():
            call_command("seed_demo", if_empty=True, stdout=self.stdout)
        self.stdout.write(
            self.style.SUCCESS(
                "\n  Control UI demo login\n"
                f"  URL:      http://127.0.0.1:{port}/\n"
                f"  Username: {DEMO_USERNAME}\n"
                f"  Password: {password}\n"
            )
        )

    def demo_password(self) -> str:
        """A password generated once per checkout and kept beside the dev secret key."""
        path = settings.VAR_DIR / "demo-password"
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
            password = secrets.token_urlsafe(12)
            path.write_text(password)
            path.chmod(0o600)
            return password
