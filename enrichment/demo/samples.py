"""Sample inbound messages for the demo data, and the demo world they live in.

Every fetchable link points at the local demo page server (``base_url``), whose pages are
the embedded test pages (``news/harbour-bridge.html`` is ``news-harbour-bridge.html``).
The other hosts only exist in ``DEMO_HOSTS``, the demo's DNS: they resolve to private or
metadata addresses, so the SSRF guard blocks them, or to nothing at all.

``sample_messages(n, base_url=...)`` is deterministic for a given ``seed``. It starts with a
fixed tour (``TOUR``) that reaches every outcome, so even ``--runs 12`` shows the whole
range, then draws conversations and scenarios by weight.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from enrichment.services.runs import EnrichRequest


@dataclass(frozen=True)
class Conversation:
    """Where a message was posted, and which agent answers there."""

    channel: str
    chat_type: str
    session_key: str
    agent_id: str
    people: tuple[str, ...]
    weight: int


CONVERSATIONS: dict[str, Conversation] = {
    "slack-eng": Conversation(
        "slack", "channel", "agent:main:slack:channel:c04-eng", "main", ("Priya", "Tom", "Ana"), 9
    ),
    "slack-dm": Conversation(
        "slack", "direct", "agent:main:slack:dm:u02-priya", "main", ("Priya",), 4
    ),
    "slack-reading": Conversation(
        "slack",
        "channel",
        "agent:research:slack:channel:c07-reading",
        "research",
        ("Ana", "Marcus"),
        3,
    ),
    "slack-archive": Conversation(
        "slack",
        "channel",
        "agent:archive-bot:slack:channel:c09-archive",
        "archive-bot",
        ("Tom",),
        2,
    ),
    "discord-general": Conversation(
        "discord",
        "channel",
        "agent:main:discord:channel:general",
        "main",
        ("kestrel", "mossy", "finch"),
        7,
    ),
    "discord-announcements": Conversation(
        "discord", "channel", "agent:main:discord:channel:announcements", "main", ("mossy",), 2
    ),
    "discord-dm": Conversation(
        "discord", "dm", "agent:main:discord:dm:4471", "main", ("finch",), 3
    ),
    "telegram-family": Conversation(
        "telegram", "group", "agent:main:telegram:group:-100287", "main", ("Mum", "Jonas"), 4
    ),
    "telegram-direct": Conversation(
        "telegram", "direct", "agent:support:telegram:direct:88123", "support", ("Lena",), 3
    ),
    "telegram-support-group": Conversation(
        "telegram", "group", "agent:support:telegram:group:-100455", "support", ("Lena", "Ravi"), 2
    ),
    "webchat-visitor": Conversation(
        "webchat", "direct", "agent:support:webchat:direct:visitor-3f9a", "support", ("Visitor",), 3
    ),
    "webchat-main": Conversation(
        "webchat", "direct", "agent:main:webchat:direct:visitor-81c2", "main", ("Visitor",), 3
    ),
}

# Demo page path (without .html) -> how people talk about it.
ARTICLES: dict[str, str] = {
    "news/harbour-bridge": "the bridge is finally open again",
    "news/library-hours": "libraries are staying open later this winter",
    "news/rainfall-record": "no wonder the garden is a swamp",
    "news/school-meals": "good news for the school run",
    "news/museum-donation": "the museum got a big donation",
    "blog/night-sky": "for the stargazing trip",
    "blog/remote-work-habits": "some of these might help the team",
    "blog/sourdough-starter": "my starter died again, reading this",
    "blog/keyboard-build": "thinking about building one of these",
    "docs/api-pagination": "this is how the pagination should work",
    "docs/cli-install": "install steps for the new laptop",
    "docs/config-loader": "the config loader reference",
    "docs/error-codes": "the error codes we keep asking about",
    "forum/bike-chain": "same problem as my bike",
    "forum/router-drops": "this sounds like our office wifi",
    "forum/sql-slow-query": "that slow query from yesterday",
    "list/budget-tips": "for the grocery budget",
    "list/houseplants": "plants for the dark corner by the stairs",
    "list/travel-tips": "before the long flight next week",
    "recipe/green-salad": "for Friday's potluck",
    "recipe/lentil-soup": "dinner tonight?",
    "recipe/oat-cookies": "baking these this weekend",
}

# The demo's DNS: names the SSRF guard must refuse, with the addresses they "resolve" to.
DEMO_HOSTS: dict[str, list[str]] = {
    "wiki.corp.example": ["10.20.0.7"],
    "grafana.ops.example": ["172.16.4.20"],
    "router.home.example": ["192.168.1.1"],
    "metadata.rebind.example": ["169.254.169.254"],
    "printer.office.example": ["fd12:3456:789a::15"],
    "intranet.retired.example": [],  # does not resolve any more
}
PRIVATE_LINKS = (
    "http://wiki.corp.example/OnCall/Runbook",
    "http://grafana.ops.example/d/api-latency?orgId=1",
    "http://router.home.example/admin/",
    "http://metadata.rebind.example/latest/meta-data/iam/",
    "http://printer.office.example/status",
    "http://intranet.retired.example/handbook",
)


def demo_resolve(host: str) -> list[str]:
    """DNS of the demo world; the seeding never asks the real resolver."""
    return list(DEMO_HOSTS.get(host.lower(), []))


WITH_LINK = (
    "{hook}: {url}",
    "{url} — {hook}",
    "Has anyone read this? {url}",
    "Worth a look before standup {url}",
    "@assistant can you summarise {url} please",
    "Saving this for later, {hook} {url}",
    "{hook}. {url}",
)
TWO_LINKS = (
    "Comparing {url} with {url2}, which one is right?",
    "Two for the reading pile: {url} and {url2}",
)
PRIVATE_TEXTS = (
    "Runbook is here {url}",
    "Dashboard for the incident: {url}",
    "can you check {url} for me",
)
NO_LINK = (
    "Morning all! Coffee is in the kitchen.",
    "Can we move the sync to 3pm?",
    "Thanks, that fixed it 🎉",
    "Who is on call this weekend?",
    "Reminder: deploy freeze starts Thursday.",
    "ok sounds good",
    "lol",
    "Is the office open on Monday?",
    "I'll bring the cake.",
    "What was the name of that soup place?",
)

# Scenario -> weight for the random part; every scenario maps to a kind of link.
SCENARIOS = {
    "article": 52,
    "no-link": 18,
    "private": 7,
    "two-links": 7,
    "slow": 5,
    "missing": 4,
    "draft": 4,
    "busy": 3,
    "photo": 4,
    "notes": 2,
}
# Attachments (served by the demo page server under /media/) and what people say with them.
PHOTOS = (
    ("whiteboard.png", "Whiteboard from today's planning, in case you missed it"),
    ("team-photo.png", "Team photo from the offsite!"),
)
NOTES = (("budget.csv", "Numbers for the budget sync"),)
TOUR = (
    ("slack-eng", "article"),  # success
    ("discord-dm", "no-link"),  # no-links
    ("telegram-family", "article"),  # scope-deny (global rule 0)
    ("slack-dm", "private"),  # skipped: blocked by the SSRF guard
    ("slack-archive", "article"),  # disabled agent
    ("webchat-main", "slow"),  # timeout, then the archive fallback succeeds
    ("slack-reading", "article"),  # the built-in link-understand
    ("discord-general", "missing"),  # both entries fail: skipped
    ("webchat-visitor", "draft"),  # empty output, archive miss: skipped
    ("telegram-support-group", "article"),  # scope-deny (agent scope)
    ("discord-general", "two-links"),  # success next to a blocked link
    ("discord-announcements", "article"),  # scope-deny (global rule 1)
    ("slack-eng", "photo"),  # an image attachment described by the demo's image "model"
    ("slack-dm", "notes"),  # a CSV attachment appended by file extraction
)


@dataclass(frozen=True)
class SampleMessage:
    request: EnrichRequest
    scenario: str
    conversation: str


def sample_messages(count: int, *, base_url: str, seed: int = 2026) -> list[SampleMessage]:
    rng = random.Random(seed)
    picks = list(TOUR[:count])
    names = list(CONVERSATIONS)
    weights = [CONVERSATIONS[name].weight for name in names]
    while len(picks) < count:
        name = rng.choices(names, weights)[0]
        scenario = rng.choices(list(SCENARIOS), list(SCENARIOS.values()))[0]
        if name == "slack-reading" and scenario in ("slow", "draft", "busy"):
            scenario = "article"  # the research channel shares finished articles
        picks.append((name, scenario))
    return [_message(rng, name, scenario, base_url.rstrip("/")) for name, scenario in picks]


def _message(rng: random.Random, name: str, scenario: str, base_url: str) -> SampleMessage:
    conversation = CONVERSATIONS[name]
    body, attachments = _content(rng, scenario, base_url)
    request = EnrichRequest(
        body=body,
        attachments=attachments,
        channel=conversation.channel,
        chat_type=conversation.chat_type,
        session_key=conversation.session_key,
        agent_id=conversation.agent_id,
        message_id=f"{conversation.channel}-{rng.getrandbits(40):010x}",
        sender_name=rng.choice(conversation.people),
    )
    return SampleMessage(request, scenario, name)


def _content(
    rng: random.Random, scenario: str, base_url: str
) -> tuple[str, tuple[dict[str, str], ...]]:
    """The body of a message and its attachments (served under ``/media/``)."""
    if scenario in ("photo", "notes"):
        name, text = rng.choice(PHOTOS if scenario == "photo" else NOTES)
        return text, ({"url": f"{base_url}/media/{name}", "name": name},)
    return _body(rng, scenario, base_url), ()


def _body(rng: random.Random, scenario: str, base_url: str) -> str:
    path, hook = rng.choice(list(ARTICLES.items()))
    article = f"{base_url}/{path}.html"
    if scenario == "no-link":
        return rng.choice(NO_LINK)
    if scenario == "private":
        return rng.choice(PRIVATE_TEXTS).format(url=rng.choice(PRIVATE_LINKS))
    if scenario == "two-links":
        other = rng.choice([f"{base_url}/{p}.html" for p in ARTICLES if p != path])
        second = rng.choice([other, rng.choice(PRIVATE_LINKS)])
        return rng.choice(TWO_LINKS).format(url=article, url2=second)
    url = {
        "slow": f"{base_url}/slow/{path}.html",  # the server holds it back
        "missing": f"{base_url}/{path.split('/')[0]}/retired-{rng.randint(1, 99)}.html",
        "draft": f"{base_url}/drafts/untitled-{rng.randint(1, 99)}.html",
        "busy": f"{base_url}/busy/{path}.html",  # 503, then the archive copy
    }.get(scenario, article)
    capitalised = hook[0].upper() + hook[1:]
    return rng.choice(WITH_LINK).format(hook=capitalised, url=url)


# --- assistant replies with canvas documents --------------------------------------------------

STATUS_BOARD_ID = "demo-status-board"
READING_LIST_ID = "demo-reading-list"
OUTCOME_COLOURS = {
    "success": "#1f7a4d",
    "skipped": "#6b7280",
    "no-links": "#9ca3af",
    "scope-deny": "#b3261e",
    "disabled": "#a86400",
    "error": "#7f1d1d",
}
_DOCUMENT_STYLE = (
    "body{margin:0;padding:14px 18px;font:14px/1.45 system-ui,sans-serif;color:#1d2330;"
    "background:#fff}h1{font-size:16px;margin:0 0 10px}table{border-collapse:collapse;width:100%}"
    "td{padding:3px 6px;border-bottom:1px solid #eef0f3}td.n{text-align:right;width:3em}td.b{width:50%}"
    ".bar{height:10px;border-radius:5px}.grid{display:grid;grid-template-columns:1fr 1fr;gap:18px}"
    "h2{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#5f6b7a;margin:0 0 4px}"
    "li{margin-bottom:6px}small{color:#5f6b7a}"
)


@dataclass(frozen=True)
class DemoStats:
    """What the seeding produced, for the documents the assistant "writes" about it."""

    days: int
    runs: int
    outcomes: tuple[tuple[str, int], ...]
    channels: tuple[tuple[str, int], ...]
    blocked_reasons: tuple[tuple[str, int], ...]
    reading: tuple[tuple[str, str], ...]  # (first summary line, url)


@dataclass(frozen=True)
class AssistantSample:
    text: str
    session_key: str
    current_message_id: str | None  # the inbound message being answered
    hours_ago: float


def _document(title: str, body: str) -> str:
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_DOCUMENT_STYLE}</style></head><body>{body}</body></html>"
    )


def _rows(counts: tuple[tuple[str, int], ...], total: int, colours: dict[str, str]) -> str:
    rows = []
    for label, count in counts:
        width = round(100 * count / total) if total else 0
        colour = colours.get(label, "#2457c5")
        bar = f"<div class='bar' style='width:{width}%;background:{colour}'></div>"
        rows.append(
            f"<tr><td>{escape(label)}</td><td class='n'>{count}</td><td class='b'>{bar}</td></tr>"
        )
    return "<table>" + "".join(rows) + "</table>"


def status_board_html(stats: DemoStats) -> str:
    """A self-contained status board (inline style only: canvas documents reach no network)."""
    blocked = "".join(
        f"<li>{escape(reason)} <small>× {count}</small></li>"
        for reason, count in stats.blocked_reasons[:3]
    )
    body = (
        f"<h1>Link enrichment — {stats.runs} messages in the last {stats.days} days</h1>"
        f"<div class='grid'><section><h2>Outcomes</h2>"
        f"{_rows(stats.outcomes, stats.runs, OUTCOME_COLOURS)}</section>"
        f"<section><h2>Channels</h2>{_rows(stats.channels, stats.runs, {})}</section></div>"
        f"<h2 style='margin-top:14px'>Blocked links</h2><ul>{blocked or '<li>none</li>'}</ul>"
    )
    return _document("Link enrichment status", body)


def reading_list_html(stats: DemoStats) -> str:
    items = "".join(
        f"<li>{escape(title)}<br><small>{escape(url)}</small></li>"
        for title, url in stats.reading[:7]
    )
    body = f"<h1>Reading list</h1><ol>{items or '<li>Nothing shared yet.</li>'}</ol>"
    return _document("Reading list", body)


def assistant_samples(stats: DemoStats, latest_ids: Mapping[str, str]) -> list[AssistantSample]:
    """Replies in a few conversations; ``latest_ids`` maps a conversation name to the id of
    its newest inbound message (absent when the seeding did not reach that conversation)."""
    reading_reply = (
        f"[[reply_to:{latest_ids['discord-general']}]]"
        if "discord-general" in latest_ids
        else "[[reply_to_current]]"
    )
    return [
        AssistantSample(
            "[[reply_to_current]]\nHere is the link-enrichment status board for the last "
            f"{stats.days} days.\n\n"
            f'[embed ref="{STATUS_BOARD_ID}" title="Link enrichment status" height="360" /]\n\n'
            "Blocked links all pointed at internal hosts; none of them was fetched.",
            CONVERSATIONS["slack-eng"].session_key,
            latest_ids.get("slack-eng"),
            0.5,
        ),
        AssistantSample(
            f"{reading_reply}\nEverything people shared this week, in one place:\n\n"
            f'[embed ref="{READING_LIST_ID}" title="Reading list" height="420" /]',
            CONVERSATIONS["discord-general"].session_key,
            None,
            20,
        ),
        AssistantSample(
            "[[audio_as_voice]] Here is a short voice summary of the harbour bridge article.\n"
            "MEDIA:./media/outbound/harbour-bridge-summary.ogg",
            CONVERSATIONS["telegram-direct"].session_key,
            None,
            30,
        ),
        AssistantSample(
            "This week's blocked links by reason, as a chart:\n"
            "MEDIA:https://media.example.com/charts/blocked-links-week.png",
            CONVERSATIONS["webchat-main"].session_key,
            None,
            52,
        ),
    ]
