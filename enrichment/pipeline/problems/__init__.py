"""Failures grouped into problems: fingerprints, trends and alert rules, as pure values."""
