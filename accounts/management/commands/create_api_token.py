from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it (only its hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label to tell tokens apart.")

    def handle(self, *args: Any, username: str, name: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive; activate it first.")
        _, secret = ApiToken.issue(user=user, name=name)
        self.stdout.write(secret)
