"""Fuzz a given build of the C fast path against the full scan (run by test_linkscan_asan).

    python linkscan_fuzz.py PATH_TO_SO EXAMPLES

Exits non-zero on the first disagreement; under AddressSanitizer a memory error aborts.
"""

from __future__ import annotations

import importlib.util
import sys

from hypothesis import HealthCheck, given, settings

from tests.enrichment.pipeline.links.test_linkscan import (
    CHAT,
    HOSTILE_INPUTS,
    MESSAGES,
    full_candidates,
)


def main(path: str, examples: int) -> None:
    spec = importlib.util.spec_from_file_location("_linkscan", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    candidates = module.candidates

    for message in [*CHAT, *HOSTILE_INPUTS]:
        found = candidates(message)
        assert found is None or found == full_candidates(message), message[:200]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(message=MESSAGES)
    def agrees(message: str) -> None:
        found = candidates(message)
        assert found is None or found == full_candidates(message)

    agrees()
    print(f"ok: {examples} generated messages and {len(CHAT) + len(HOSTILE_INPUTS)} fixed ones")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
