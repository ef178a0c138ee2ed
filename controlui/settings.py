"""Control UI settings: one env-driven module.

Embedded defaults (SQLite file, in-memory channel layer, locmem cache) make a fresh
checkout run; ``DATABASE_URL`` and ``REDIS_URL`` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE as CSP_NONE
from csp.constants import SELF as CSP_SELF
from django.core.exceptions import ImproperlyConfigured

from controlui.env import (
    parse_database_url,
    read_bool,
    read_int,
    read_list,
    read_networks,
    read_redis_url,
    secret_key_problem,
)
from enrichment.pipeline.retention.policy import PolicyError, policy_from_environment

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONTROLUI_VAR_DIR", BASE_DIR / "var"))

DEBUG = read_bool("DEBUG", default=True)

# A development key is generated once per checkout and kept in var/; production must
# bring its own. Refusing the dev key when DEBUG is off stops an accidental deployment.
DEV_SECRET_KEY_FILE = VAR_DIR / "dev-secret-key"


def _dev_secret_key() -> str:
    try:
        return DEV_SECRET_KEY_FILE.read_text().strip()
    except FileNotFoundError:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        key = "dev-insecure-" + secrets.token_urlsafe(48)
        DEV_SECRET_KEY_FILE.write_text(key)
        return key


SECRET_KEY = os.environ.get("SECRET_KEY", "").strip() or _dev_secret_key()
if not DEBUG and (weak := secret_key_problem(SECRET_KEY)):
    raise ImproperlyConfigured(f"{weak}; set SECRET_KEY to a long random value")

ALLOWED_HOSTS = read_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = read_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "adminsortable2",
    # Before "channels": its ``runworker enrichment`` runs the Dramatiq job queue.
    "enrichment",
    "channels",
    "axes",
    "accounts",
    "richoutput",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "server.login_required.LoginRequiredEverywhere",
    "server.input_guard.ApiInputGuard",
    "server.not_found.SiteNotFoundPage",
    # Last, as django-axes asks: it turns a lockout raised by its backend into a 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "controlui.urls"
ASGI_APPLICATION = "controlui.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "controlui.context_processors.navigation",
            ],
            # ``{% load timestamps %}`` in every app's templates (``common`` is not an app).
            "libraries": {"timestamps": "common.timestamps"},
        },
    },
]

DATABASES = {
    "default": parse_database_url(
        os.environ.get("DATABASE_URL", "").strip() or "sqlite:///db.sqlite3", base_dir=BASE_DIR
    ).as_django(
        pool_max_size=read_int("DATABASE_POOL_MAX_SIZE", 10, minimum=0),
        pool_timeout=read_int("DATABASE_POOL_TIMEOUT", 10, minimum=1),
        jit=read_bool("DATABASE_JIT", False),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = read_redis_url("REDIS_URL")
# Processes that extract pages for the built-in link-understand (started with the server):
# one per core, and at least two, so that one host's pages (at most half of them, below)
# never hold them all: on one core, another user's page shares the core with a slow one
# instead of waiting behind it.
EXTRACTION_WORKERS = read_int("EXTRACTION_WORKERS", max(2, len(os.sched_getaffinity(0))), minimum=1)
# Time one page's extraction may take in its process (below the links' 30 s timeout) before
# the process is killed and replaced and the link fails with "extraction-timeout".
EXTRACTION_TIMEOUT_SECONDS = read_int("EXTRACTION_TIMEOUT_SECONDS", 10, minimum=1)
# Fairness: pages of one host take at most this many of those processes at once.
EXTRACTION_SLOTS_PER_HOST = read_int(
    "EXTRACTION_SLOTS_PER_HOST", max(1, EXTRACTION_WORKERS // 2), minimum=1
)
# A run's progress frames (``/ws/enrich/``) go out only once it has lasted this long: quick
# work answers with its result alone (``HeldProgress`` in ``enrichment/pipeline/stages.py``).
PROGRESS_AFTER_MS = read_int("PROGRESS_AFTER_MS", 500, minimum=0)
# Wall-clock budget of one attachment or upload extraction (PDF, text) before its worker is
# killed and the file is skipped with "extraction-timeout".
FILE_EXTRACTION_TIMEOUT_SECONDS = read_int("FILE_EXTRACTION_TIMEOUT_SECONDS", 10, minimum=1)
# Every enrichment job ends within this many seconds: a socket whose job has no final frame
# by then gets an ``error`` frame naming why (the worker or Redis lost it), and the periodic
# sweeper (enrichment/services/interrupted.py) closes runs still ``running`` past it as
# ``interrupted``; /api/health is ``degraded`` while such runs exist.
ENRICHMENT_JOB_DEADLINE_SECONDS = read_int("ENRICHMENT_JOB_DEADLINE_SECONDS", 300, minimum=5)
# With workers: how many times a job that could not start (database or Redis unreachable) is
# sent again, with exponential backoff from 1 s to 15 s; then it is a dead letter (answered
# with an error frame, recorded as a ``dead-letter`` run that can be run again).
ENRICHMENT_JOB_RETRIES = read_int("ENRICHMENT_JOB_RETRIES", 5, minimum=0)
# How often each server and worker process sweeps for runs past that deadline (0: never; the
# test suite sweeps by hand).
ENRICHMENT_SWEEP_SECONDS = read_int("ENRICHMENT_SWEEP_SECONDS", 30, minimum=0)
# PostgreSQL: time budget of the history page's result count and facet counts together.
HISTORY_COUNTS_BUDGET_MS = read_int("HISTORY_COUNTS_BUDGET_MS", 30, minimum=1)
# Alerts (enrichment/services/alerts.py). Webhooks go through the SSRF guard: only public
# addresses, unless the webhook's host is listed here (an intranet chat server; 127.0.0.1 in
# tests), which lets that name resolve to a private address. Metadata addresses never pass.
ALERT_WEBHOOK_ALLOWED_HOSTS = read_list("ALERT_WEBHOOK_ALLOWED_HOSTS", [])
# Tries per delivery (the first included) and the first wait between them (doubling).
ALERT_DELIVERY_ATTEMPTS = read_int("ALERT_DELIVERY_ATTEMPTS", 3, minimum=1)
ALERT_RETRY_BASE_MS = read_int("ALERT_RETRY_BASE_MS", 1000, minimum=0)
ALERT_TIMEOUT_SECONDS = read_int("ALERT_TIMEOUT_SECONDS", 10, minimum=1)
# After runs are recorded, alert rules are checked in the background at most this often per
# process (0: only by ``manage.py check_alerts``, e.g. from cron).
ALERT_CHECK_AFTER_RUNS_SECONDS = read_int("ALERT_CHECK_AFTER_RUNS_SECONDS", 60, minimum=0)
# Where people open this site (``https://control.example.com``): alert messages end with a
# link to its problems page. Unset: no link.
ALERT_LINK_BASE_URL = os.environ.get("ALERT_LINK_BASE_URL", "").strip().rstrip("/")
if ALERT_LINK_BASE_URL and not ALERT_LINK_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(
        f"ALERT_LINK_BASE_URL must start with http:// or https://, not {ALERT_LINK_BASE_URL!r}"
    )
# Off: nothing is counted and ``/metrics`` is 404 (README "Monitoring").
METRICS_ENABLED = read_bool("METRICS_ENABLED", default=True)
# ``/metrics`` answers a bearer API token, or any client in these networks (CIDRs, comma
# separated: a Prometheus on the same host or network scrapes without a token).
METRICS_ALLOWED_NETWORKS = read_networks("METRICS_ALLOWED_NETWORKS")
# The run page links its trace id here when set, e.g. http://jaeger:16686/trace/{trace_id}.
TRACE_URL_TEMPLATE = os.environ.get("TRACE_URL_TEMPLATE", "").strip()
if TRACE_URL_TEMPLATE and (
    "{trace_id}" not in TRACE_URL_TEMPLATE
    or not TRACE_URL_TEMPLATE.startswith(("http://", "https://"))
):
    raise ImproperlyConfigured(
        f"TRACE_URL_TEMPLATE: expected an http(s) URL containing {{trace_id}}, got {TRACE_URL_TEMPLATE!r}"
    )
# A run still ``running`` after this long counts as overdue (``controlui_runs_overdue``).
RUN_OVERDUE_SECONDS = read_int("RUN_OVERDUE_SECONDS", 300, minimum=1)
# Retention and redaction of the decision log (README "Retention"; ``manage.py prune_runs``).
try:
    RETENTION = policy_from_environment(os.environ)
except PolicyError as exc:
    raise ImproperlyConfigured(str(exc)) from None
# Runs about to be removed are first written here as gzip JSON lines (unset: not exported).
RETENTION_EXPORT_DIR = os.environ.get("RETENTION_EXPORT_DIR", "").strip() or None
# Runs removed or redacted per transaction: each batch holds its row locks only briefly.
RETENTION_BATCH_SIZE = read_int("RETENTION_BATCH_SIZE", 500, minimum=1)
# Partitioned storage on PostgreSQL (``manage.py partition_runs``): monthly partitions kept
# created this many months ahead by each prune pass, and the lock timeout of every step that
# takes a lock blocking inserts (it is tried again, so inserts never wait longer).
RUNS_PARTITIONS_AHEAD = read_int("RUNS_PARTITIONS_AHEAD", 3, minimum=1)
if RUNS_PARTITIONS_AHEAD > 24:
    raise ImproperlyConfigured(
        f"RUNS_PARTITIONS_AHEAD: at most 24 months, got {RUNS_PARTITIONS_AHEAD}"
    )
PARTITION_LOCK_TIMEOUT_MS = read_int("PARTITION_LOCK_TIMEOUT_MS", 50, minimum=1)
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis' layer, its sends in one round trip (same data in Redis).
            "BACKEND": "common.channel_layer.RedisChannelLayer",
            "CONFIG": {
                "hosts": [REDIS_URL],
                "capacity": 1500,
                "expiry": 60,
                # Deployments sharing one Redis keep their channels apart with a prefix.
                "prefix": os.environ.get("CHANNEL_LAYER_PREFIX", "").strip() or "asgi",
            },
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "controlui",
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "common.memory_layer.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Login throttling (site and admin login both go through authenticate()): after
# LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is locked
# out for LOGIN_COOLOFF_MINUTES (a 429). Keyed on the pair so nobody can lock the operator
# out from elsewhere by guessing their username.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = read_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=read_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# "2026-11-26 14:05:09 UTC" everywhere Django formats a time itself (the admin), as on the
# dashboard: English's own formats ("2:05 p.m.") would win over DATETIME_FORMAT otherwise.
FORMAT_MODULE_PATH = ["controlui.formats"]

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Largest request body Django will read into memory (multipart uploads stream to disk).
DATA_UPLOAD_MAX_MEMORY_SIZE = read_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# Hard cap on one uploaded file, checked while the multipart body is parsed (a 413 naming it);
# the body itself is capped per route before it is read (controlui/request_limits.py).
FILE_UPLOAD_MAX_BYTES = read_int("UPLOAD_MAX_FILE_MIB", 25, minimum=1) * 1024 * 1024
FILE_UPLOAD_HANDLERS = [
    "server.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# Connection guards under daphne (server/connections.py): a request's headers must arrive
# within HTTP_HEADER_TIMEOUT_SECONDS (else 408, closed); a keep-alive connection idle for
# HTTP_IDLE_TIMEOUT_SECONDS, or a WebSocket silent (no pong either) for
# WEBSOCKET_IDLE_TIMEOUT_SECONDS, is closed; one client address holds at most
# MAX_CONNECTIONS_PER_CLIENT connections at once (0: no cap; raise it behind a proxy).
HTTP_HEADER_TIMEOUT_SECONDS = read_int("HTTP_HEADER_TIMEOUT_SECONDS", 10, minimum=1)
HTTP_IDLE_TIMEOUT_SECONDS = read_int("HTTP_IDLE_TIMEOUT_SECONDS", 60, minimum=1)
WEBSOCKET_IDLE_TIMEOUT_SECONDS = read_int("WEBSOCKET_IDLE_TIMEOUT_SECONDS", 120, minimum=1)
MAX_CONNECTIONS_PER_CLIENT = read_int("MAX_CONNECTIONS_PER_CLIENT", 256, minimum=0)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "SAMEORIGIN"
# Every page (dashboard, admin, API docs) runs only our own static scripts: no inline script,
# no inline style attributes, nothing from another origin. The canvas document view sets its
# own, stricter policy (django-csp leaves a header already set alone).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF],
        "style-src": [CSP_SELF],
        "img-src": [CSP_SELF, "data:"],
        "font-src": [CSP_SELF],
        "connect-src": [CSP_SELF],  # CSP level 3: 'self' includes ws:/wss: to this host
        "frame-src": [CSP_SELF],
        "frame-ancestors": [CSP_SELF],
        "object-src": [CSP_NONE],
        "base-uri": [CSP_SELF],
        "form-action": [CSP_SELF],
    }
}
if not DEBUG:
    SESSION_COOKIE_SECURE = read_bool("SECURE_COOKIES", default=True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# Root for local media attachments referenced by path (no traversal outside it).
MEDIA_ROOT = Path(os.environ.get("CONTROLUI_MEDIA_ROOT", VAR_DIR / "media"))

# ``json``: one JSON object per line with the run id, session key, job id and trace id of what
# the line concerns (``common/logs.py``); ``plain``: text for a terminal.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "").strip().lower() or "plain"
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT: expected plain or json, got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "common.logs.LogContextFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "common.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.channels.server": {"level": "WARNING"},
        # axes logs every successful login at INFO; lockouts are WARNING and stay visible.
        "axes": {"level": "WARNING"},
    },
}
