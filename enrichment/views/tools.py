"""The "Tool access" page: which tools an agent may use under the stored config, by group,
with the stage that removed each missing tool (SPEC §7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.errors import InvalidInput
from enrichment.selectors.tool_access import stored_config, tool_access_report

MAX_FIELD_CHARS = 200


class ToolAccessForm(forms.Form):
    agent = forms.ChoiceField(required=False, label="Agent")
    provider = forms.CharField(required=False, max_length=MAX_FIELD_CHARS, strip=True)
    model = forms.CharField(required=False, max_length=MAX_FIELD_CHARS, strip=True)

    def __init__(self, data: Mapping[str, Any] | None, *, agent_ids: tuple[str, ...]) -> None:
        super().__init__(data)
        agent = self.fields["agent"]
        assert isinstance(agent, forms.ChoiceField)
        agent.choices = [("", "(none)"), *((i, i) for i in agent_ids)]


@require_GET
def tool_access(request: HttpRequest) -> HttpResponse:
    form: ToolAccessForm | None = None
    report = None
    try:
        config = stored_config()
        form = ToolAccessForm(request.GET or None, agent_ids=tuple(a.id for a in config.agents))
        # An invalid choice (an agent not configured, an overlong name) shows the form's
        # errors rather than a resolution the user did not ask for.
        if not form.is_bound or form.is_valid():
            choice = form.cleaned_data if form.is_bound else {}
            report = tool_access_report(
                config=config,
                agent_id=choice.get("agent") or None,
                provider=choice.get("provider") or None,
                model=choice.get("model") or None,
            )
    except InvalidInput as exc:  # a stored config edited around the validators
        context = {"form": form, "config_error": exc.detail, "config_errors": exc.errors}
        return render(request, "enrichment/tool_access.html", context)
    return render(request, "enrichment/tool_access.html", {"form": form, "report": report})
