"""The metrics catalogue: bounded labels, attempts read from run records, scrape output."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from common import metrics


def test_bounded_label_lowercases_cuts_and_folds_the_overflow_into_other() -> None:
    label = metrics.BoundedLabel(most=2)
    assert label("Telegram") == "telegram"
    assert label("x" * 500) == "x" * metrics.MAX_LABEL_CHARS
    assert label("discord") == metrics.OTHER  # a third distinct value
    assert label("TELEGRAM") == "telegram"  # a value already seen keeps its own series
    assert label("") == "none" and label(None) == "none"


def test_bounded_label_can_keep_case() -> None:
    assert metrics.BoundedLabel(lower=False)("/usr/bin/Summarize") == "/usr/bin/Summarize"


RECORDS = {
    "links": {
        "outcome": "success",
        "urls": [
            {
                "attempts": [
                    {"type": "ssrf", "command": "", "outcome": "failed", "durationMs": 0},
                    {
                        "type": "in-process",
                        "command": "link-understand",
                        "outcome": "success",
                        "durationMs": 1500,
                    },
                ]
            },
            {"attempts": []},
        ],
    },
    "media": [
        {
            "capability": "audio",
            "outcome": "success",
            "attachments": [
                {
                    "attachmentIndex": 0,
                    "attempts": [
                        {
                            "type": "provider",
                            "provider": "openai",
                            "outcome": "failed",
                            "durationMs": 20,
                        },
                        {
                            "type": "cli",
                            "argv": ["whisper", "a.ogg"],
                            "outcome": "success",
                            "durationMs": 3000,
                        },
                        {"type": "cli", "argv": ["untimed"], "outcome": "skipped"},
                    ],
                }
            ],
        },
        {"capability": "file", "outcome": "skipped", "attachments": [], "files": []},
    ],
}


def test_attempt_samples_reads_link_and_media_attempts_with_their_labels() -> None:
    samples = list(metrics.attempt_samples(RECORDS))
    assert [(s.stage, s.labels, s.seconds) for s in samples] == [
        ("links", ("", "ssrf", "failed"), 0.0),
        ("links", ("link-understand", "in-process", "success"), 1.5),
        ("media", ("audio", "provider", "openai", "failed"), 0.02),
        ("media", ("audio", "cli", "whisper", "success"), 3.0),
    ]


@pytest.mark.parametrize(
    "records",
    [
        {},
        {"links": None, "media": None},
        {"links": "odd", "media": {"x": 1}},
        {"links": {"urls": [{"attempts": [{"durationMs": "12"}, {"durationMs": True}]}]}},
    ],
    ids=["empty", "null-stages", "wrong-types", "non-numeric-durations"],
)
def test_attempt_samples_ignores_what_is_missing_or_malformed(records) -> None:
    assert list(metrics.attempt_samples(records)) == []


def _value(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return None


def test_run_observe_counts_the_run_and_times_its_attempts() -> None:
    class NoGauges:
        def collect(self):
            return []

    def scrape() -> str:
        return metrics.exposition(NoGauges()).decode()

    before = scrape()
    metrics.run_observe(
        outcome="success", channel="Unit-Test-Channel", duration_ms=2500, records=RECORDS
    )
    after = scrape()

    def moved(name: str, **labels: str) -> float:
        return (_value(after, name, **labels) or 0) - (_value(before, name, **labels) or 0)

    assert moved("controlui_runs_total", outcome="success", channel="unit-test-channel") == 1
    assert moved("controlui_run_duration_seconds_sum", outcome="success") == pytest.approx(2.5)
    link = {"command": "link-understand", "type": "in-process", "outcome": "success"}
    assert moved("controlui_link_attempt_duration_seconds_count", **link) == 1
    assert moved("controlui_link_attempt_duration_seconds_bucket", le="1.0", **link) == 0
    assert moved("controlui_link_attempt_duration_seconds_bucket", le="2.5", **link) == 1
    media = {"capability": "audio", "type": "cli", "command": "whisper", "outcome": "success"}
    assert moved("controlui_media_attempt_duration_seconds_sum", **media) == pytest.approx(3.0)


def test_queue_gauges_are_exposed_as_read() -> None:
    readings = metrics.QueueReadings(
        queued=4, running=3, overdue=1, live_workers=2, dead_letters=5, retrying=6
    )

    class Gauges:
        def collect(self):
            return metrics.queue_metrics(readings)

    text = metrics.exposition(Gauges()).decode()
    assert _value(text, "controlui_queue_depth") == 4
    assert _value(text, "controlui_runs_running") == 3
    assert _value(text, "controlui_runs_overdue") == 1
    assert _value(text, "controlui_workers_live") == 2
    assert _value(text, "controlui_queue_dead_letters") == 5
    assert _value(text, "controlui_queue_retrying") == 6


RECORD_ONE_RUN = """
from common import metrics
metrics.run_observe(outcome="success", channel="slack", duration_ms=100, records={})
"""
SCRAPE = """
from common import metrics
class NoGauges:
    def collect(self):
        return []
print(metrics.exposition(NoGauges()).decode())
"""


def test_multiprocess_mode_sums_the_runs_of_every_process(tmp_path) -> None:
    """With PROMETHEUS_MULTIPROC_DIR, a scrape in any process sees the runs of all."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}

    def python(code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    python(RECORD_ONE_RUN)
    python(RECORD_ONE_RUN)
    text = python(SCRAPE)
    assert _value(text, "controlui_runs_total", outcome="success", channel="slack") == 2
    # Without the directory each process counts only its own.
    env.pop("PROMETHEUS_MULTIPROC_DIR")
    assert _value(python(SCRAPE), "controlui_runs_total", channel="slack") is None
