"""Date and time formats of the site (``FORMAT_MODULE_PATH``): the admin shows times as the
dashboard does, ``2026-11-26 14:05:09 UTC`` (24 h), not English's "Nov. 26, 2026, 2:05 p.m."."""
