"""The run page lists the assistant replies stored for its turn (same session key, from the
run on, before the session's next run), each linked to its message page."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from enrichment.models import Run
from enrichment.selectors.replies import run_replies
from richoutput.models import AssistantMessage
from richoutput.services import message_store

pytestmark = pytest.mark.django_db

SESSION = "agent:main:webchat:direct:e2e"


def make_run(created_at: datetime, session_key: str = SESSION) -> Run:
    return Run.objects.create(
        created_at=created_at,
        session_key=session_key,
        original_body="see http://127.0.0.1/page",
        enriched_body="see http://127.0.0.1/page",
        outcome="no-links",
        duration_ms=5,
    )


# Rows stored by a command have no owner: staff read them (owner scoping: test_canvas_ownership).
STAFF = SimpleNamespace(is_authenticated=True, is_staff=True, pk=None)


def store_reply(text: str, at: datetime, session_key: str = SESSION) -> AssistantMessage:
    message = message_store(text=text, session_key=session_key)
    AssistantMessage.objects.filter(pk=message.pk).update(created_at=at)
    return message


def reply_section(html: str) -> str:
    match = re.search(r'<section class="card run-replies".*?</section>', html, re.S)
    assert match, "no replies section on the run page"
    return match.group(0)


def test_the_turns_replies_are_listed_and_linked(staff_client) -> None:
    start = timezone.now() - timedelta(minutes=10)
    store_reply("before the run", start - timedelta(seconds=1))
    run = make_run(start)
    first = store_reply(
        'Here it is [embed ref="cv_1" title="Chart" /]', start + timedelta(seconds=2)
    )
    second = store_reply("and one more thing", start + timedelta(seconds=3))
    store_reply("another session", start + timedelta(seconds=2), session_key="agent:main:other")
    make_run(start + timedelta(minutes=1))  # the session's next turn
    store_reply("answers the next turn", start + timedelta(minutes=1, seconds=2))

    section = reply_section(staff_client.get(f"/decisions/{run.pk}/").content.decode())

    links = re.findall(r'<a href="(/messages/\d+/)">Message #(\d+)</a>', section)
    assert links == [
        (f"/messages/{first.pk}/", str(first.pk)),
        (f"/messages/{second.pk}/", str(second.pk)),
    ]
    assert "· 1 canvas block" in section and "· 0 canvas blocks" in section
    assert "Here it is" in section
    for absent in ("before the run", "another session", "answers the next turn"):
        assert absent not in section


def test_the_last_run_of_a_session_gets_every_later_reply() -> None:
    start = timezone.now() - timedelta(hours=1)
    run = make_run(start)
    replies = [store_reply(f"reply {index}", start + timedelta(minutes=index)) for index in (1, 2)]
    assert [message.pk for message in run_replies(run=run, reader=STAFF)] == [
        reply.pk for reply in replies
    ]


def test_a_run_without_session_key_has_no_replies_section(user_client) -> None:
    run = make_run(timezone.now(), session_key="")
    store_reply("orphan", timezone.now(), session_key="")
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert 'id="run-replies"' not in html
    assert run_replies(run=run, reader=STAFF) == []


def test_no_reply_yet_says_how_replies_arrive(user_client) -> None:
    run = make_run(timezone.now())
    section = reply_section(user_client.get(f"/decisions/{run.pk}/").content.decode())
    assert "No assistant message of this session was stored after this run" in section
    assert "POST /api/render" in section


def test_reply_text_is_shown_as_text_never_markup(staff_client) -> None:
    start = timezone.now() - timedelta(minutes=1)
    run = make_run(start)
    store_reply(
        "<script>alert(1)</script><img src=x onerror=alert(2)>", start + timedelta(seconds=1)
    )
    section = reply_section(staff_client.get(f"/decisions/{run.pk}/").content.decode())
    assert "<script>" not in section and "<img" not in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section


def test_query_count_does_not_grow_with_replies(django_assert_num_queries) -> None:
    start = timezone.now() - timedelta(minutes=5)
    run = make_run(start)
    for index in range(6):
        message_store(
            text=f'r{index} [embed ref="v{index}" /] [embed ref="w" /]', session_key=SESSION
        )
    with django_assert_num_queries(2):
        replies = run_replies(run=run, reader=STAFF)
        counts = [message.block_count for message in replies]
    assert counts == [2] * 6
