"""Admin form pieces: yes/no settings that say "default", hostnames one per line."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.db import models

# Letters, digits, dots, dashes, the "*." wildcard, and IPv6 brackets/colons; the core
# checks the finer rules (no bare "*.", no apex wildcard).
HOSTNAME_CHARS = re.compile(r"[A-Za-z0-9._*:\[\]-]+")


class DefaultBooleanSelect(forms.NullBooleanSelect):
    """A yes/no setting that may be left unset, so it follows the default.

    Django's ``NullBooleanSelect`` offers "Unknown / Yes / No"; an unset key here is not
    unknown, it is the documented default."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.choices = [
            ("unknown", "— not set (use the default) —"),
            ("true", "Yes"),
            ("false", "No"),
        ]


class BooleanWidgetsMixin:
    """Nullable booleans get ``DefaultBooleanSelect``; plain ones keep their checkbox."""

    def formfield_for_dbfield(
        self, db_field: models.Field[Any, Any], request: Any, **kwargs: Any
    ) -> Any:
        if isinstance(db_field, models.BooleanField) and db_field.null:
            kwargs["widget"] = DefaultBooleanSelect
        return super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]


class HostnameListField(forms.Field):
    """``allowedHostnames`` as a textarea, one hostname (or ``*.suffix``) per line.

    Blank lines and surrounding spaces are dropped; a pasted JSON list is accepted too. The
    core validates each entry when the form is cleaned (``CoreScalarsMixin``)."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 40, "spellcheck": "false"})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "help_text",
            "One hostname per line: an exact name (intranet.example) or *.suffix "
            "(*.corp.example). Cloud metadata addresses stay blocked whatever is listed.",
        )
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value: Any) -> list[str]:
        if value in (None, ""):
            return []
        if isinstance(value, list):
            lines = [str(item) for item in value]
        elif str(value).lstrip().startswith("["):
            # A JSON list pasted from an OpenClaw file is read as such.
            try:
                parsed = json.loads(value)
            except ValueError:
                raise forms.ValidationError(
                    "not a JSON list; or write one hostname per line"
                ) from None
            if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
                raise forms.ValidationError("must be a list of strings")
            lines = parsed
        else:
            lines = str(value).splitlines()
        hostnames = [line.strip() for line in lines if line.strip()]
        # Every bad line at once, so a pasted list is fixed in one go.
        problems = [
            f"{hostname!r}: not a hostname (one per line, no quotes, spaces or commas)"
            for hostname in hostnames
            if not HOSTNAME_CHARS.fullmatch(hostname)
        ]
        if problems:
            raise forms.ValidationError(problems)
        return hostnames
