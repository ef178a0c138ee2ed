"""Dry run: what a proposed config would decide for recorded runs, without running anything."""
