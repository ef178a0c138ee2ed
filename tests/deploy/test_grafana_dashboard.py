"""The Grafana dashboard in the repo queries only metrics that ``/metrics`` exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import ApiToken
from accounts.tokens import token_digest, token_generate

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "control-ui.json"
METRIC_NAME = re.compile(r"\bcontrolui_[a-z0-9_]+")
# The series each family type exports (prometheus-client's text format).
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def queries(document: dict) -> list[str]:
    found = [target["expr"] for panel in document["panels"] for target in panel.get("targets", ())]
    found += [
        variable["definition"]
        for variable in document["templating"]["list"]
        if variable["type"] == "query"
    ]
    return found


def exported_series(text: str) -> set[str]:
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in SUFFIXES.get(family.type, ("",))
    }


def test_every_metric_the_dashboard_queries_is_in_the_metrics_output(client, user) -> None:
    secret = token_generate()
    ApiToken.objects.create(user=user, name="grafana", digest=token_digest(secret), hint="x")
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    exported = exported_series(response.content.decode())
    queried = {name for expr in queries(dashboard()) for name in METRIC_NAME.findall(expr)}
    assert len(queried) >= 15  # the checker itself found the queries
    assert sorted(queried - exported) == []


def test_the_checker_notices_a_metric_that_does_not_exist() -> None:
    exported = exported_series("# TYPE controlui_runs counter\ncontrolui_runs_total 1\n")
    assert "controlui_runs_total" in exported
    assert "controlui_run_total" not in exported


def test_every_panel_is_placed_and_reads_the_chosen_prometheus() -> None:
    document = dashboard()
    ids = [panel["id"] for panel in document["panels"]]
    assert len(ids) == len(set(ids))
    for panel in document["panels"]:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"])
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]


@pytest.mark.parametrize("expr", queries(dashboard()), ids=lambda expr: expr[:60])
def test_every_query_has_balanced_brackets(expr) -> None:
    for opening, closing in ("()", "[]", "{}"):
        assert expr.count(opening) == expr.count(closing), expr
