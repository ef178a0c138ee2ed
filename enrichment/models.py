"""Enrichment config (relational, OpenClaw-shaped) and the decision log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Upper
from django.utils import timezone

from enrichment.pipeline.problems.alerts import webhook_url_error

ACTION_CHOICES = [("allow", "allow"), ("deny", "deny")]
CHAT_TYPE_CHOICES = [
    ("", "any"),
    ("direct", "direct"),
    ("dm", "dm"),
    ("group", "group"),
    ("channel", "channel"),
]


class EnrichmentConfig(models.Model):
    """The one active configuration (``tools`` of the OpenClaw document).

    Nullable fields mean "not set in the document" so an export writes back exactly what
    was imported; the pure core supplies the defaults.
    """

    name = models.CharField(max_length=100, default="default")
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    # tools.links
    links_enabled = models.BooleanField(
        null=True, blank=True, help_text="Blank: on when there are models."
    )
    links_max_links = models.PositiveIntegerField(null=True, blank=True, help_text="Default 3.")
    # Seconds may be fractional (1.5): kept as given, never rounded (SPEC §13).
    links_timeout_seconds = models.FloatField(
        null=True, blank=True, help_text="Seconds, may be fractional. Default 30, minimum 1."
    )
    links_concurrency = models.PositiveIntegerField(
        null=True, blank=True, help_text="Default: maxLinks."
    )
    links_scope_default = models.CharField(
        max_length=5,
        choices=ACTION_CHOICES,
        blank=True,
        help_text="Blank with no rules: no scope (every message allowed).",
    )

    # tools.web.fetch (blank = default)
    fetch_max_chars = models.PositiveIntegerField(null=True, blank=True)
    fetch_max_chars_cap = models.PositiveIntegerField(null=True, blank=True)
    fetch_max_response_bytes = models.PositiveIntegerField(null=True, blank=True)
    fetch_timeout_seconds = models.PositiveIntegerField(null=True, blank=True)
    fetch_cache_ttl_minutes = models.FloatField(
        null=True, blank=True, help_text="Minutes, may be fractional; 0 disables the cache."
    )
    fetch_max_redirects = models.PositiveIntegerField(null=True, blank=True)
    fetch_user_agent = models.CharField(max_length=300, blank=True)
    ssrf_allowed_hostnames = models.JSONField(
        default=list, blank=True, help_text='Exact names or "*.suffix" (never the apex).'
    )
    ssrf_allow_private_network = models.BooleanField(null=True, blank=True)
    ssrf_allow_rfc2544_benchmark_range = models.BooleanField(null=True, blank=True)
    ssrf_allow_ipv6_unique_local_range = models.BooleanField(null=True, blank=True)

    # Blocks owned by later features, kept in their OpenClaw shape.
    media = models.JSONField(null=True, blank=True, help_text="tools.media as OpenClaw JSON.")
    tool_policy = models.JSONField(
        default=dict, blank=True, help_text="profile, allow, alsoAllow, deny, byProvider."
    )

    class Meta:
        verbose_name = "enrichment config"
        constraints = [
            models.UniqueConstraint(
                fields=["is_active"], condition=Q(is_active=True), name="one_active_config"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}{' (active)' if self.is_active else ''}"


class Agent(models.Model):
    """``agents.list[]``: an agent id with optional per-agent link overrides."""

    config = models.ForeignKey(EnrichmentConfig, on_delete=models.CASCADE, related_name="agents")
    position = models.PositiveIntegerField(default=0)
    agent_id = models.CharField(max_length=100)
    links_enabled = models.BooleanField(null=True, blank=True)
    links_max_links = models.PositiveIntegerField(null=True, blank=True)
    links_timeout_seconds = models.FloatField(null=True, blank=True)
    links_concurrency = models.PositiveIntegerField(null=True, blank=True)
    override_scope = models.BooleanField(
        default=False, help_text="Use this agent's scope rules instead of the global ones."
    )
    links_scope_default = models.CharField(max_length=5, choices=ACTION_CHOICES, blank=True)
    override_models = models.BooleanField(
        default=False, help_text="Use this agent's link models instead of the global ones."
    )
    media = models.JSONField(null=True, blank=True)
    tool_policy = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["config", "agent_id"], name="unique_agent_per_config")
        ]

    def __str__(self) -> str:
        return self.agent_id


class ScopeRule(models.Model):
    """One ``tools.links.scope.rules[]`` entry (global when ``agent`` is empty)."""

    config = models.ForeignKey(
        EnrichmentConfig, on_delete=models.CASCADE, related_name="scope_rules"
    )
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, null=True, blank=True, related_name="scope_rules"
    )
    position = models.PositiveIntegerField(default=0)
    action = models.CharField(max_length=5, choices=ACTION_CHOICES, default="allow")
    channel = models.CharField(max_length=100, blank=True)
    chat_type = models.CharField(max_length=20, blank=True)
    key_prefix = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        parts = [
            f"{k}={v}"
            for k, v in (
                ("channel", self.channel),
                ("chatType", self.chat_type),
                ("keyPrefix", self.key_prefix),
            )
            if v
        ]
        # No position number: the admin orders rules by dragging, so a number shown on the
        # row would be stale until the next save.
        return f"{self.action} {' '.join(parts) or 'everything'}"


class LinkModel(models.Model):
    """One ``tools.links.models[]`` CLI entry, tried in order (fallback chain)."""

    config = models.ForeignKey(
        EnrichmentConfig, on_delete=models.CASCADE, related_name="link_models"
    )
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, null=True, blank=True, related_name="link_models"
    )
    position = models.PositiveIntegerField(default=0)
    type = models.CharField(max_length=10, default="cli", editable=False)
    command = models.CharField(max_length=500)
    args = models.JSONField(
        default=list, blank=True, help_text='JSON list, e.g. ["--url", "{{LinkUrl}}"].'
    )
    timeout_seconds = models.FloatField(
        null=True, blank=True, help_text="Seconds, may be fractional; blank: the block's."
    )

    class Meta:
        ordering = ["position", "id"]
        verbose_name = "link model (CLI entry)"

    def __str__(self) -> str:
        return " ".join([self.command, *map(str, self.args or [])])


class ConfigVersion(models.Model):
    """One accepted change of the stored config: immutable, numbered 1, 2, 3 ….

    ``document`` is the JSON text of the whole OpenClaw-shaped config exactly as
    ``GET /api/config`` returned it after the change (text, not jsonb: PostgreSQL's jsonb
    reorders keys, and a rollback must give back the very same bytes).
    """

    class Source(models.TextChoices):
        MIGRATION = "migration"
        INSTALL = "install"
        ADMIN = "admin"
        API = "api"
        IMPORT = "import"
        RESTORE = "restore"
        COMMAND = "command"

    number = models.PositiveIntegerField(unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    author = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=20, choices=Source.choices)
    note = models.CharField(max_length=500, blank=True)
    restored_from = models.PositiveIntegerField(null=True, blank=True)
    document = models.TextField()

    class Meta:
        ordering = ["-number"]
        indexes = [models.Index(fields=["-created_at", "-id"], name="configversion_history")]

    def __str__(self) -> str:
        return f"v{self.number}"


# Sort keys of the history's duration orders, and the expressions of their indexes: a run
# without a duration (running, interrupted) sorts last both ways. Integer, not the field's
# positive type: Django answers a lookup below a positive field's range (``< -1``) with no
# rows at all, and the keyset cursor compares with these sentinels.
NO_DURATION_LONGEST_FIRST = -1
NO_DURATION_SHORTEST_FIRST = 2**31 - 1
DURATION_LONGEST_FIRST = Coalesce(
    "duration_ms", Value(NO_DURATION_LONGEST_FIRST), output_field=models.BigIntegerField()
)
DURATION_SHORTEST_FIRST = Coalesce(
    "duration_ms", Value(NO_DURATION_SHORTEST_FIRST), output_field=models.BigIntegerField()
)


class RunQuerySet(models.QuerySet["Run"]):
    def history_order(self) -> RunQuerySet:
        return self.order_by("-created_at", "-id")


class Run(models.Model):
    """One enrichment of one inbound message: the decision-log entry."""

    class Outcome(models.TextChoices):
        RUNNING = "running"
        SUCCESS = "success"
        SKIPPED = "skipped"
        DISABLED = "disabled"
        SCOPE_DENY = "scope-deny"
        NO_LINKS = "no-links"
        ERROR = "error"
        INTERRUPTED = "interrupted"
        # A worker job given up on (retries exhausted): recorded by enrichment.services.dead_letters.
        DEAD_LETTER = "dead-letter"

    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    message_id = models.CharField(max_length=200, blank=True)
    channel = models.CharField(max_length=100, blank=True)
    chat_type = models.CharField(max_length=20, blank=True)
    session_key = models.CharField(max_length=300, blank=True)
    agent_id = models.CharField(max_length=100, blank=True)
    original_body = models.TextField(blank=True)
    enriched_body = models.TextField(blank=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices, default=Outcome.RUNNING)
    error = models.TextField(blank=True)
    matched_rule = models.IntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    url_count = models.PositiveSmallIntegerField(default=0)
    config_snapshot = models.JSONField(default=dict, blank=True)
    config_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="Number of the config version the run ran under."
    )
    media = models.JSONField(default=list, blank=True)
    # Records of stages without storage of their own, by stage name (enrichment/stage_specs).
    stage_records = models.JSONField(default=dict, blank=True)
    owner = models.CharField(
        max_length=200, blank=True, help_text="host:pid of the process running it."
    )
    job = models.CharField(
        max_length=64,
        blank=True,
        db_index=True,
        help_text="Id of the worker job that ran it (empty when run in the web process).",
    )
    # A default in the database too: code of the release before (during a rolling deploy)
    # and raw inserts that do not name the column still write runs.
    trace_id = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_default="",
        help_text="OpenTelemetry trace id of the run (empty when tracing is off).",
    )
    # When its chat content (bodies, link summaries, media text, CLI stderr) was removed by
    # redaction (enrichment.services.retention); the decisions stay. None: never redacted.
    redacted_at = models.DateTimeField(null=True, blank=True)
    # Derived statuses (enrichment.pipeline.links.derived), stored with the run's decisions so
    # the history filters any mix of them on this table alone; database defaults as above.
    attempts_failed = models.BooleanField(
        default=False, db_default=False, help_text="CLI attempts failed and no URL got a result."
    )
    fallback_used = models.BooleanField(
        default=False,
        db_default=False,
        help_text="An attempt failed; a later CLI entry of the chain succeeded.",
    )
    dns_failed = models.BooleanField(
        default=False, db_default=False, help_text="A link's host did not resolve."
    )

    objects = RunQuerySet.as_manager()

    class Meta:
        # The history's filters and orders, newest first. On PostgreSQL each also carries the
        # facet columns (outcome, channel, chat type), so the facet counts of the history page
        # read the newest runs from the index alone (selectors.history_page).
        indexes = [
            models.Index(
                fields=["-created_at", "-id"],
                include=["outcome", "channel", "chat_type"],
                name="run_history",
            ),
            models.Index(
                fields=["outcome", "-created_at", "-id"],
                include=["channel", "chat_type"],
                name="run_outcome_history",
            ),
            # The channel filter ignores case (``channel__iexact`` is ``UPPER(channel) =``).
            models.Index(
                Upper("channel"),
                F("outcome"),
                F("created_at").desc(),
                F("id").desc(),
                include=["channel", "chat_type"],
                name="run_channel_ci_outcome",
            ),
            models.Index(
                fields=["chat_type", "-created_at", "-id"],
                include=["outcome", "channel"],
                name="run_chat_type_history",
            ),
            # ``?status=media``: the few runs with media records, newest first, without
            # walking every run that has none.
            models.Index(
                fields=["-created_at", "-id"],
                include=["outcome", "channel", "chat_type"],
                condition=~models.Q(media=[]),
                name="run_media_history",
            ),
            # Each derived status: the runs that have it, newest first (a rare one, such as a
            # DNS failure, is found without walking the runs that have another). Any mix of
            # them is an OR of these indexes.
            *(
                models.Index(
                    fields=["-created_at", "-id"],
                    include=["outcome", "channel", "chat_type"],
                    condition=models.Q(**{flag: True}),
                    name=f"run_{flag}_history",
                )
                for flag in ("attempts_failed", "fallback_used", "dns_failed")
            ),
            models.Index(fields=["session_key", "-created_at"], name="run_session_key"),
            # The history's other orders (selectors.SORTS): the same expressions, then id.
            # A run without a duration sorts last both ways, hence one index per direction.
            models.Index(DURATION_LONGEST_FIRST, F("id"), name="run_duration_longest"),
            models.Index(DURATION_SHORTEST_FIRST, F("id"), name="run_duration_shortest"),
            models.Index(fields=["url_count", "id"], name="run_url_count"),
            # Redaction walks the runs not yet redacted, oldest first, without stepping over
            # the ones it already did (enrichment.services.retention).
            models.Index(
                fields=["created_at", "id"],
                condition=models.Q(redacted_at__isnull=True),
                name="run_unredacted",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} {self.outcome}"


class UrlDecision(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="url_decisions")
    # The run's creation time, copied: with partitioned storage on PostgreSQL
    # (enrichment.services.partitions) a run's rows live in the partitions of its month.
    # Empty on rows stored before the column existed.
    run_created_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The run's duration, copied when the run finished (its URL rows are written then): a
    # rare URL fragment's runs are put in duration order from their URL rows alone
    # (``selectors.text_search.ranked_first``). Empty on rows stored before it existed.
    # No CHECK (a PositiveIntegerField's): adding one would scan every stored row.
    run_duration_ms = models.IntegerField(null=True, blank=True, editable=False)
    position = models.PositiveSmallIntegerField()
    url = models.TextField()
    blocked = models.BooleanField(default=False)
    reason = models.TextField(blank=True)
    addresses = models.JSONField(default=list, blank=True)
    chosen_position = models.PositiveSmallIntegerField(null=True, blank=True)
    summary = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="unique_url_position")
        ]

    def __str__(self) -> str:
        return self.url

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.run_created_at is None and self.run_id is not None:
            self.run_created_at = self.run.created_at
        if self.run_duration_ms is None and self.run_id is not None:
            self.run_duration_ms = self.run.duration_ms
        super().save(*args, **kwargs)


class Attempt(models.Model):
    url_decision = models.ForeignKey(UrlDecision, on_delete=models.CASCADE, related_name="attempts")
    run_created_at = models.DateTimeField(null=True, blank=True, editable=False)  # as above
    position = models.PositiveSmallIntegerField()
    type = models.CharField(max_length=20, default="cli")
    command = models.CharField(max_length=500, blank=True)
    argv = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=10)
    reason = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    stdout_bytes = models.PositiveIntegerField(null=True, blank=True)
    stderr_tail = models.TextField(blank=True)

    class Meta:
        ordering = ["url_decision", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["url_decision", "position"], name="unique_attempt_position"
            )
        ]

    def __str__(self) -> str:
        return f"{self.command} {self.outcome}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.run_created_at is None and self.url_decision_id is not None:
            self.run_created_at = self.url_decision.run_created_at
        super().save(*args, **kwargs)


class SavedView(models.Model):
    """A named set of history filters (and sort) of one user, optionally shared with all.

    ``query`` is the canonical query string of ``/decisions/`` (only known filter
    parameters, bounded): opening the view is opening ``/decisions/?<query>``.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=2000, blank=True)
    shared = models.BooleanField(default=False, help_text="Listed for every user.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="unique_saved_view_name")
        ]
        indexes = [models.Index(fields=["shared", "name"], name="saved_view_shared")]

    def __str__(self) -> str:
        return self.name


class Problem(models.Model):
    """Failures of one kind and subject (a fingerprint), across runs: what an operator triages.

    Everything the pages show lives here (counts, first/last seen, the hourly trend, sessions),
    so a problem keeps its history when the runs behind it are redacted or pruned.
    """

    class State(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        IGNORED = "ignored"

    fingerprint = models.CharField(max_length=32, unique=True)
    kind = models.CharField(max_length=30)
    subject = models.CharField(max_length=300)
    title = models.CharField(max_length=400)
    detail = models.TextField(blank=True, help_text="The latest reason given (an example).")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    count = models.PositiveIntegerField(default=0, help_text="Runs it happened in.")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # Occurrences per UTC hour of the last week ({"2026-12-04T23": 3}): the 24 h / 7 d trend.
    hourly = models.JSONField(default=dict, blank=True)
    session_count = models.PositiveIntegerField(default=0)
    recent_sessions = models.JSONField(default=list, blank=True)  # the last few, newest first
    last_run_id = models.BigIntegerField(null=True, blank=True)
    state_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["-last_seen", "-id"], name="problem_last_seen"),
            models.Index(fields=["state", "-last_seen", "-id"], name="problem_state_last_seen"),
            models.Index(fields=["first_seen"], name="problem_first_seen"),
        ]

    def __str__(self) -> str:
        return self.title


class ProblemSession(models.Model):
    """A session a problem touched (the distinct count survives runs being pruned)."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="sessions")
    session_key = models.CharField(max_length=300)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["problem", "session_key"], name="unique_problem_session"
            )
        ]

    def __str__(self) -> str:
        return self.session_key


class ProblemRun(models.Model):
    """One run a problem happened in. ``run_id`` is not a foreign key on purpose: runs leave
    by retention (dropped partitions on PostgreSQL) and the problem keeps its list."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="runs")
    run_id = models.BigIntegerField()
    seen_at = models.DateTimeField()
    session_key = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["problem", "run_id"], name="unique_problem_run")
        ]
        indexes = [
            models.Index(fields=["problem", "-seen_at", "-run_id"], name="problem_run_recent"),
            models.Index(fields=["run_id"], name="problem_run_run"),
            models.Index(fields=["seen_at"], name="problem_run_seen_at"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id}"


class AlertRule(models.Model):
    """Post to a webhook when the failure rate or the number of new problems in a window is
    above a threshold (``manage.py check_alerts``, and after runs are recorded)."""

    class Kind(models.TextChoices):
        FAILURE_RATE = "failure-rate", "failure rate above threshold (%)"
        NEW_PROBLEMS = "new-problems", "new problems at least threshold"

    name = models.CharField(max_length=100, unique=True)
    enabled = models.BooleanField(default=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.FAILURE_RATE)
    window_minutes = models.PositiveIntegerField(
        default=60, help_text="The rule looks at the last N minutes (1 to 10080, one week)."
    )
    threshold = models.FloatField(
        default=20,
        help_text="Failure rate: a percentage (fires above it). New problems: a count "
        "(fires at or above it, at least 1).",
    )
    min_runs = models.PositiveIntegerField(
        default=10, help_text="Failure rate: judge only windows with at least this many runs."
    )
    cooldown_minutes = models.PositiveIntegerField(
        default=60, help_text="While it keeps firing, post again only after this long."
    )
    webhook_url = models.CharField(
        max_length=2000,
        help_text='Slack-compatible incoming webhook (receives {"text": ...}). Private '
        "addresses are refused unless the host is in ALERT_WEBHOOK_ALLOWED_HOSTS.",
    )
    firing = models.BooleanField(default=False, editable=False)
    last_value = models.FloatField(null=True, blank=True, editable=False)
    last_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_sent_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        problem = webhook_url_error(
            self.webhook_url or "", allowed_hosts=settings.ALERT_WEBHOOK_ALLOWED_HOSTS
        )
        if problem:
            errors["webhook_url"] = problem
        if not 1 <= (self.window_minutes or 0) <= 7 * 24 * 60:
            errors["window_minutes"] = "between 1 and 10080 minutes (one week)"
        if self.threshold is None or not 0 <= self.threshold <= 1_000_000:
            errors["threshold"] = "between 0 and 1000000"
        elif self.kind == self.Kind.FAILURE_RATE and self.threshold >= 100:
            errors["threshold"] = "a failure rate threshold is a percentage below 100"
        if errors:
            raise ValidationError(errors)


class AlertDelivery(models.Model):
    """One message an alert rule posted (or failed to post), with every try counted."""

    class Status(models.TextChoices):
        DELIVERED = "delivered"
        FAILED = "failed"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="deliveries")
    created_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=10, choices=Status.choices)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_code = models.IntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    text = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["rule", "-created_at"], name="alert_delivery_rule")]
        verbose_name_plural = "alert deliveries"

    def __str__(self) -> str:
        return f"{self.rule} {self.status} {self.created_at:%Y-%m-%d %H:%M}"


class RetentionPass(models.Model):
    """One pass of ``prune_runs`` (enrichment.services.retention): what it removed and
    redacted, and under which policy. The dashboard and ``/api/health`` show the last one."""

    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    dry_run = models.BooleanField(default=False)
    policy = models.CharField(max_length=500, blank=True)
    removed = models.PositiveIntegerField(default=0)
    redacted = models.PositiveIntegerField(default=0)
    exported_to = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["-started_at", "-id"], name="retention_pass_latest")]

    def __str__(self) -> str:
        return f"retention pass {self.started_at:%Y-%m-%d %H:%M}"
