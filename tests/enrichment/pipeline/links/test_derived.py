"""A run's derived statuses from its link decisions (stored on the run when recorded)."""

from __future__ import annotations

import pytest

from enrichment.pipeline.links.derived import DerivedStatus, derived_status

UNRESOLVED = "hostname does not resolve"


@pytest.mark.parametrize(
    ("attempts", "blocked", "expected"),
    [
        ([], [], DerivedStatus()),
        ([("cli", "success")], [], DerivedStatus()),
        ([("cli", "skipped")], [], DerivedStatus()),  # empty output: a harmless skip
        ([("cli", "failed"), ("other", "failed")], [], DerivedStatus(attempts_failed=True)),
        ([("cli", "failed"), ("other", "success")], [], DerivedStatus(fallback_used=True)),
        # The SSRF guard's record is not a CLI attempt, whatever its outcome.
        ([("ssrf", "failed")], [], DerivedStatus()),
        ([("ssrf", "blocked")], [UNRESOLVED], DerivedStatus(dns_failed=True)),
        ([], ["resolves to private address 10.0.0.7"], DerivedStatus()),
        (
            [("cli", "failed"), ("ssrf", "blocked")],
            ["resolves to private address 10.0.0.7", UNRESOLVED],
            DerivedStatus(attempts_failed=True, dns_failed=True),
        ),
    ],
)
def test_derived_status(attempts, blocked, expected) -> None:
    assert derived_status(attempts, blocked) == expected
