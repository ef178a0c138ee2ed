"""API tokens: generation and hashing (only a SHA-256 digest is ever stored)."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "cui_"


def token_generate() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
