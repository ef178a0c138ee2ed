"""The worked examples in the extraction modules' docstrings hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import enrichment.pipeline.extract as extract_package

MODULES = sorted(
    f"enrichment.pipeline.extract.{info.name}"
    for info in pkgutil.iter_modules(extract_package.__path__)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
