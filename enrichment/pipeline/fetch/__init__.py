"""The guarded web fetch: SSRF classification, pinned fetch, main-content extraction, untrusted-content wrapper."""
