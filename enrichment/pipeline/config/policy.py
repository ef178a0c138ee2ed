"""The tool-policy keys of ``tools`` and of an agent's ``tools`` (profile, allow, …).

Kept as plain JSON; the policy engine's own parser (``pipeline/policy``) decides what is valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from enrichment.pipeline.config.model import TOOL_POLICY_KEYS
from enrichment.pipeline.config.readers import ConfigReader, json_copy
from enrichment.pipeline.policy.resolve import parse_tool_policy


def parse_policy_keys(read: ConfigReader, block: Mapping[str, object], path: str) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    for key in TOOL_POLICY_KEYS:
        if key in block and read.json(block[key], f"{path}.{key}"):
            policy[key] = json_copy(block[key])
    for error_path, message in parse_tool_policy(policy, path)[1]:
        read.fail(error_path, message)
    return policy
