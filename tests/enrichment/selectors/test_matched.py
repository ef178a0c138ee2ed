"""The history page's numbers worked out from one read of the matching runs (pure)."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime, timedelta

import pytest

from enrichment.selectors import matched
from enrichment.selectors.matched import Choices, MatchedRun, grouped, newest_after

NOON = datetime(2026, 11, 3, 12, tzinfo=UTC)


def run(pk: int, minutes_ago: int = 0, **fields) -> MatchedRun:
    return MatchedRun(
        id=pk,
        created_at=NOON - timedelta(minutes=minutes_ago),
        outcome=fields.get("outcome", "success"),
        channel=fields.get("channel", "slack"),
        chat_type=fields.get("chat_type", "direct"),
        duration_ms=fields.get("duration_ms"),
        statuses=frozenset(fields.get("statuses", ())),
    )


def test_the_examples_in_the_module_docstring_hold() -> None:
    assert doctest.testmod(matched).failed == 0


@pytest.mark.parametrize(
    ("choices", "kept"),
    [
        (Choices(), [1, 2, 3, 4]),
        (Choices(outcomes=("error", "skipped")), [2, 3]),
        (Choices(channels=("SLACK",)), [1, 2]),
        (Choices(channels=("Telegram", "discord")), [3, 4]),
        (Choices(chat_types=("group",)), [2, 4]),
        (Choices(statuses=("media", "fallback")), [3, 4]),
        (Choices(statuses=("dns-failure",)), []),
        (Choices(outcomes=("skipped",), channels=("telegram",), chat_types=("direct",)), [3]),
    ],
    ids=[
        "nothing-chosen",
        "any-of-two-outcomes",
        "channel-any-case",
        "two-channels",
        "chat-type",
        "any-of-two-statuses",
        "a-status-no-run-has",
        "three-filters-at-once",
    ],
)
def test_a_run_is_kept_when_it_has_one_of_the_values_of_every_chosen_filter(choices, kept) -> None:
    runs = [
        run(1, channel="Slack"),
        run(2, outcome="error", channel="slack", chat_type="group"),
        run(3, outcome="skipped", channel="telegram", statuses={"media"}),
        run(4, outcome="success", channel="Discord", chat_type="group", statuses={"fallback"}),
    ]
    assert [r.id for r in runs if choices.keep(r)] == kept


def test_groups_join_channels_of_any_case_and_sum_each_status() -> None:
    runs = [
        run(1, channel="Slack", statuses={"media", "fallback"}),
        run(2, channel="slack", statuses={"media"}),
        run(3, channel="slack", outcome="error"),
    ]
    statuses = ("media", "attempts-failed", "fallback")
    assert grouped(runs, statuses=statuses) == [
        ("success", "slack", "direct", 2, 2, 0, 1),
        ("error", "slack", "direct", 1, 0, 0, 0),
    ]
    # Without statuses: only the runs per grouping, as the database's grouping has them.
    assert grouped(runs, statuses=()) == [
        ("success", "slack", "direct", 2),
        ("error", "slack", "direct", 1),
    ]
    assert grouped([], statuses=statuses) == []


def ids(runs: list[MatchedRun]) -> list[int]:
    return [r.id for r in runs]


def test_a_page_starts_strictly_after_its_cursor_and_breaks_ties_by_id() -> None:
    # Newest first: three runs in the same instant (ids descending), then older ones.
    runs = [run(9), run(8), run(5), run(7, minutes_ago=1), run(3, minutes_ago=2)]
    assert ids(newest_after(runs, None, 2)) == [9, 8]
    assert ids(newest_after(runs, (NOON, 8), 2)) == [5, 7]
    assert ids(newest_after(runs, (NOON, 5), 10)) == [7, 3]
    assert ids(newest_after(runs, (NOON - timedelta(minutes=2), 3), 10)) == []
    # A cursor between two runs (a run deleted since, or another filter's cursor).
    assert ids(newest_after(runs, (NOON - timedelta(seconds=30), 1), 10)) == [7, 3]
    assert ids(newest_after([], None, 5)) == []
