"""A one-line cause per attempt; "blocked" only for policy refusals; DNS failures are their
own category on the run page, the overview, the history filters and the export (issue 33,
items 4 and 5)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.links.causes import attempt_cause, url_verdict
from tests.enrichment.selectors.test_exports import streamed
from tests.enrichment.stored import restate
from tests.enrichment.views.test_history import make_run

CAUSES = [
    ("success", "", 0, "", ""),
    (
        "failed",
        "exited with code 1",
        1,
        "GET https://x/\nerror: HTTP 404 Not Found\n",
        "HTTP 404 Not Found (exit code 1)",
    ),
    (
        "failed",
        "exited with code 1",
        1,
        "urllib.error.HTTPError: HTTP Error 503: x",
        "exit code 1: urllib.error.HTTPError: HTTP Error 503: x",
    ),
    ("failed", "exited with code 1", 1, "fetch failed: HTTP 503", "HTTP 503 (exit code 1)"),
    ("failed", "timed out after 30s", None, "partial output", "timeout: timed out after 30s"),
    (
        "failed",
        "exited with code 2",
        2,
        "socket.gaierror: [Errno -2] Name or service not known",
        "DNS failure: the host does not resolve (exit code 2)",
    ),
    (
        "failed",
        "exited with code 3",
        3,
        "line one\nboom: upstream said no\n\n",
        "exit code 3: boom: upstream said no",
    ),
    ("failed", "exited with code 3", 3, "", "exit code 3"),
    ("failed", "command not found: nope", None, "", "command not found: nope"),
    (
        "failed",
        "Blocked: resolves to private address 10.0.0.5",
        None,
        "",
        "blocked by the SSRF policy: Blocked: resolves to private address 10.0.0.5",
    ),
    ("failed", "exited with code 1", 1, "x" * 500, "exit code 1: " + "x" * 159 + "…"),
]


@pytest.mark.parametrize(
    ("outcome", "reason", "exit_code", "stderr", "expected"),
    CAUSES,
    ids=[
        "success",
        "http-404",
        "http-error-words",
        "http-503",
        "timeout",
        "dns",
        "last-line",
        "bare-exit",
        "not-found",
        "policy",
        "long-line",
    ],
)
def test_attempt_cause(outcome, reason, exit_code, stderr, expected) -> None:
    assert attempt_cause(outcome, reason, exit_code, stderr) == expected


@pytest.mark.parametrize(
    ("blocked", "reason", "expected"),
    [
        (False, None, "allowed"),
        (True, "hostname does not resolve", "dns-failure"),
        (True, "resolves to private address 10.0.0.5", "blocked"),
        (True, None, "blocked"),
    ],
    ids=["allowed", "dns", "private", "no-reason"],
)
def test_url_verdict_keeps_blocked_for_policy_refusals(blocked, reason, expected) -> None:
    assert url_verdict(blocked, reason) == expected


def dns_run() -> Run:
    run = make_run(urls=0, outcome="skipped", url_count=1)
    row = UrlDecision.objects.create(
        run=run,
        position=0,
        url="https://www.python.org/downloads/",
        blocked=True,
        reason="hostname does not resolve",
        addresses=[],
    )
    Attempt.objects.create(
        url_decision=row,
        position=0,
        command="ssrf",
        argv=[],
        outcome="blocked",
        reason="hostname does not resolve",
    )
    restate(run)
    return run


def policy_run() -> Run:
    run = make_run(urls=0, outcome="skipped", url_count=1)
    UrlDecision.objects.create(
        run=run,
        position=0,
        url="http://intranet.example/",
        blocked=True,
        reason="resolves to private address 10.0.0.7",
        addresses=["10.0.0.7"],
    )
    return run


@pytest.mark.django_db
def test_run_page_shows_the_cause_outside_the_stderr_box(user_client) -> None:
    run = make_run(urls=1, attempts=2)
    Attempt.objects.filter(url_decision__run=run, outcome="failed").update(
        stderr_tail="fetching\nerror: HTTP 404 Not Found\n",
        reason="exited with code 1",
        exit_code=1,
    )
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert '<div class="attempt-cause">HTTP 404 Not Found (exit code 1)</div>' in html
    # The list says the first choice failed although the run reads success.
    assert "fallback succeeded</span>" in html


@pytest.mark.django_db
def test_run_page_calls_an_unresolved_host_a_dns_failure(user_client) -> None:
    html = user_client.get(f"/decisions/{dns_run().pk}/").content.decode()
    assert 'badge badge-dns-failure">DNS failure<' in html
    assert 'badge badge-blocked">blocked<' not in html
    assert "not fetched: DNS failure" in html


@pytest.mark.django_db
def test_overview_keeps_dns_failures_out_of_blocked_hosts(user_client) -> None:
    dns_run()
    policy_run()
    html = user_client.get("/").content.decode()
    blocked = html.split('id="blocked-title"', 1)[1].split("</section>", 1)[0]
    dns = html.split('id="dns-failures"', 1)[1].split("</section>", 1)[0]
    assert "intranet.example" in blocked and "www.python.org" not in blocked
    assert "www.python.org" in dns and "intranet.example" not in dns
    assert "status=dns-failure" in dns


@pytest.mark.django_db
def test_history_filters_and_export_know_dns_failures(user_client) -> None:
    dns = dns_run()
    policy_run()
    recovered = make_run(urls=1, attempts=2)
    page = user_client.get("/decisions/", {"status": "dns-failure"}).content.decode()
    assert f'href="/decisions/{dns.pk}/' in page and page.count('href="/decisions/') >= 1
    api = user_client.get("/api/decisions", {"status": "dns-failure"}).json()
    assert [item["runId"] for item in api["items"]] == [dns.pk]
    fallback = user_client.get("/api/decisions", {"status": "fallback"}).json()
    assert [item["runId"] for item in fallback["items"]] == [recovered.pk]
    exported = user_client.get("/api/decisions/export", {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(streamed(exported))))
    statuses = {int(row["runId"]): row["statuses"] for row in rows}
    assert statuses[dns.pk] == "dns-failure"
    assert statuses[recovered.pk] == "fallback"
    as_json = user_client.get("/api/decisions/export", {"format": "json"})
    items = json.loads(streamed(as_json))
    assert {item["runId"]: item["statuses"] for item in items}[dns.pk] == ["dns-failure"]
