"""``{{Name}}`` argument templates and the message context they draw from.

``render_template("--url {{ LinkUrl }}", {"LinkUrl": "https://a.example"})`` gives
``"--url https://a.example"``. Names are ASCII word characters and case-sensitive; an unknown
name renders as ``""``; text that is not a well-formed placeholder (``{{Link-Url}}``) is left
as written. ``find_template_errors`` flags those malformed placeholders so that configuration
validation can reject them before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# JavaScript's ``\s`` (and ``String.prototype.trim``), which the reference relies on. Python's
# ``\s`` adds U+001C-U+001F and U+0085 and leaves out U+FEFF, so spell the class out.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS = f"[{re.escape(JS_WHITESPACE)}]*"
_PLACEHOLDER = re.compile(r"\{\{" + _WS + r"([A-Za-z0-9_]+)" + _WS + r"\}\}")
_NAME_ONLY = re.compile(_WS + r"[A-Za-z0-9_]+" + _WS)


def js_trim(text: str) -> str:
    """Trim like JavaScript's ``trim()`` (see ``JS_WHITESPACE``)."""
    return text.strip(JS_WHITESPACE)


def render_template(text: str, variables: Mapping[str, str]) -> str:
    """Replace every ``{{ Name }}``; unknown names become the empty string."""
    if not text:
        return ""
    return _PLACEHOLDER.sub(lambda found: variables.get(found.group(1), ""), text)


def find_template_errors(text: str) -> list[str]:
    """Describe each malformed placeholder in ``text`` (unclosed, empty or a bad name).

    ``find_template_errors("{{LinkUrl}} {{ }} {{Link-Url}} {{Body")`` gives
    ``['empty placeholder "{{ }}"', 'invalid placeholder "{{Link-Url}}"',
    'unclosed "{{" at position 30']``.
    """
    errors: list[str] = []
    position = text.find("{{")
    while position != -1:
        end = text.find("}}", position + 2)
        if end == -1:
            errors.append(f'unclosed "{{{{" at position {position}')
            break
        inner = text[position + 2 : end]
        placeholder = text[position : end + 2]
        if not js_trim(inner):
            errors.append(f'empty placeholder "{placeholder}"')
        elif not _NAME_ONLY.fullmatch(inner):
            errors.append(f'invalid placeholder "{placeholder}"')
        position = text.find("{{", end + 2)
    return errors


@dataclass(frozen=True)
class MessageContext:
    """The inbound message as the enrichment pipeline sees it.

    ``body`` is the text the agent will read (enrichment appends to it); ``raw_body`` is the
    original text as typed, scanned for links when set (the reference prefers it over a body
    that media understanding may already have rewritten).
    """

    body: str = ""
    raw_body: str | None = None
    channel: str | None = None
    chat_type: str | None = None
    session_key: str | None = None
    provider: str | None = None
    surface: str | None = None
    sender_name: str | None = None
    sender_id: str | None = None
    message_sid: str | None = None
    account_id: str | None = None
    from_: str | None = None
    to: str | None = None
    agent_id: str | None = None

    @property
    def scope_channel(self) -> str | None:
        """The channel scope rules compare against: Surface, else Provider, else channel."""
        for candidate in (self.surface, self.provider, self.channel):
            if candidate is not None and candidate.strip():
                return candidate
        return None

    @property
    def link_text(self) -> str:
        """The text scanned for links: the raw body when known, else the body."""
        return self.raw_body if self.raw_body is not None else self.body

    def template_variables(self, link_url: str | None = None) -> dict[str, str]:
        """Template names of SPEC §4; missing values render as ``""``."""
        values: dict[str, str | None] = {
            "Body": self.body,
            "RawBody": self.link_text,
            "From": self.from_,
            "To": self.to,
            "MessageSid": self.message_sid,
            "SessionKey": self.session_key,
            "ChatType": self.chat_type,
            "Provider": self.provider,
            "Surface": self.surface,
            "SenderName": self.sender_name,
            "SenderId": self.sender_id,
            "AccountId": self.account_id,
            "LinkUrl": link_url,
        }
        return {name: value or "" for name, value in values.items()}
