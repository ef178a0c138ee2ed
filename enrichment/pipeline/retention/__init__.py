"""Retention and redaction of the decision log: the pure policy (``policy``)."""
