"""Config versions in the admin: a save is one version, based on the version the editor
opened (a hidden field), so a save racing another one gets a form error naming its base
instead of silently overwriting it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest

from enrichment.config.store import config_document
from enrichment.config.versions import ConfigConflict, latest_number, lock_and_check, version_record
from enrichment.models import Agent, EnrichmentConfig


class VersionedFormMixin(forms.ModelForm):
    base_version = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    change_note = forms.CharField(
        required=False,
        max_length=500,
        help_text="Optional: why you change the config (kept with the new version).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["base_version"] = latest_number()

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        base = (cleaned or {}).get("base_version")
        if base is not None and self._changes_active_config():
            try:
                # The admin's change view runs in one transaction: the lock taken here is
                # held until the rows and the new version are written.
                lock_and_check(base or None)
            except ConfigConflict as exc:
                raise forms.ValidationError(exc.detail, code="conflict") from None
        return cleaned

    def _changes_active_config(self) -> bool:
        instance = self.instance
        if isinstance(instance, Agent):
            return instance.config_id is None or bool(instance.config.is_active)
        return bool(getattr(instance, "is_active", False)) or not instance.pk


class VersionedAdminMixin:
    """Record the active config as a new version once the form and its inlines are saved."""

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)  # type: ignore[misc]
        config = form.instance if isinstance(form.instance, EnrichmentConfig) else None
        if config is None:
            config = form.instance.config
        if config.is_active:
            version_record(
                document=config_document(config),
                source="admin",
                author=request.user.get_username(),
                note=form.cleaned_data.get("change_note", ""),
            )
