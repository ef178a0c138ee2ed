"""Plumbing shared by the apps: domain errors, keyset paging, the authenticated JSON consumer, permission checks. Imports no app."""
