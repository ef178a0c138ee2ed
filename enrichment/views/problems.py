"""Problem pages: the list (/problems/) and one problem with its state buttons."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from common.errors import InvalidInput, NotFound
from enrichment.pipeline.problems.fingerprint import KINDS
from enrichment.selectors.problems import (
    STATE_FILTERS,
    ProblemFilters,
    problem_detail,
    problem_list,
)
from enrichment.services.problems import problem_set_state

STATE_LABELS = {"open": "Open", "resolved": "Resolved", "ignored": "Ignored", "all": "All"}
# What each state button does, in the order shown.
STATE_ACTIONS = (("resolved", "Resolve"), ("ignored", "Ignore"), ("open", "Reopen"))


@require_GET
def problems(request: HttpRequest) -> HttpResponse:
    try:
        filters = ProblemFilters.from_params(request.GET.dict())
    except InvalidInput as exc:
        context = {"error": exc.detail, "kinds": KINDS, "filters": ProblemFilters()}
        return render(request, "enrichment/problems.html", context, status=400)
    listing = problem_list(filters=filters)
    tabs = [
        {
            "state": state,
            "label": STATE_LABELS[state],
            "count": listing.state_counts[state],
            "query": filters.query(state=state, page=1),
            "current": state == filters.state,
        }
        for state in STATE_FILTERS
    ]
    context = {
        "listing": listing,
        "filters": filters,
        "tabs": tabs,
        "kinds": KINDS,
        "newer_query": filters.query(page=listing.page.number - 1)
        if listing.page.has_previous()
        else None,
        "older_query": filters.query(page=listing.page.number + 1)
        if listing.page.has_next()
        else None,
    }
    return render(request, "enrichment/problems.html", context)


@require_http_methods(["GET", "POST"])
def problem(request: HttpRequest, problem_id: int) -> HttpResponse:
    error = ""
    if request.method == "POST":
        try:
            problem_set_state(problem_id=problem_id, state=request.POST.get("state", ""))
        except NotFound:
            raise Http404(f"No problem with id {problem_id}.") from None
        except InvalidInput as exc:
            error = exc.detail
        else:  # after a POST, a GET: reloading the page does not post again
            return HttpResponseRedirect(reverse("problem", args=[problem_id]))
    try:
        detail = problem_detail(problem_id=problem_id)
    except NotFound:
        raise Http404(f"No problem with id {problem_id}.") from None
    state = detail.row.problem.state
    context = {
        "detail": detail,
        "problem": detail.row.problem,
        "actions": [(value, label) for value, label in STATE_ACTIONS if value != state],
        "state_label": STATE_LABELS[state],
        "error": error,
    }
    return render(request, "enrichment/problem.html", context, status=400 if error else 200)
