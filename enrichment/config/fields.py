"""Where each plain setting of the config document is stored: (document key, column) pairs
of ``EnrichmentConfig`` and ``Agent``, shared by the store, the column checks and the admin."""

# (document key, model field) pairs for plain scalar settings.
LINK_FIELDS = (
    ("enabled", "links_enabled"),
    ("maxLinks", "links_max_links"),
    ("timeoutSeconds", "links_timeout_seconds"),
    ("concurrency", "links_concurrency"),
)
FETCH_FIELDS = (
    ("maxChars", "fetch_max_chars"),
    ("maxCharsCap", "fetch_max_chars_cap"),
    ("maxResponseBytes", "fetch_max_response_bytes"),
    ("timeoutSeconds", "fetch_timeout_seconds"),
    ("cacheTtlMinutes", "fetch_cache_ttl_minutes"),
    ("maxRedirects", "fetch_max_redirects"),
    ("userAgent", "fetch_user_agent"),
)
SSRF_FLAGS = (
    ("allowPrivateNetwork", "ssrf_allow_private_network"),
    ("allowRfc2544BenchmarkRange", "ssrf_allow_rfc2544_benchmark_range"),
    ("allowIpv6UniqueLocalRange", "ssrf_allow_ipv6_unique_local_range"),
)
POLICY_KEYS = ("profile", "allow", "alsoAllow", "deny", "byProvider")
