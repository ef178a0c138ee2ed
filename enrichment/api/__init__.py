"""The enrichment app's REST API: one router module per area, each with its schemas
(explain, enrich, history, config, versions, files, tools; bounds in ``limits``).
``controlui/api.py`` mounts each router under ``/api/``."""
