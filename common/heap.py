"""The start-up heap kept out of the cyclic garbage collector's sweeps.

A server process holds a large, long-lived heap from the moment it is ready: Django, the
app's modules, settings, URL patterns, compiled templates and regexes (about 150,000 objects in
daphne). Python's full collections walk every tracked object each time; under load they run
every few seconds and took several percent of a worker's CPU re-proving that the start-up
heap is alive. ``gc.freeze()`` moves it to a permanent generation that collections skip.
Objects made afterwards (requests, runs, pages) are collected as before.
"""

from __future__ import annotations

import gc


def startup_heap_freeze() -> int:
    """Collect what start-up left as garbage, then freeze the rest; answers how many objects
    are now frozen. Call once, when the process is ready to serve (the ASGI application and
    the job worker, after their pools are started)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
