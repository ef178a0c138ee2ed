// @ts-check
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  MAX_ATTACHMENTS,
  attachmentsOf,
  enrichRequest,
  enrichmentContext,
  finalReplyText,
  sessionFacts,
} from "../src/turn.js";

describe("sessionFacts", () => {
  const cases = [
    ["agent:main:telegram:direct:123", { agentId: "main", channel: "telegram", chatType: "direct" }],
    ["agent:main:telegram:group:-100:topic:42", { agentId: "main", channel: "telegram", chatType: "group" }],
    ["agent:ops:discord:channel:1:thread:9", { agentId: "ops", channel: "discord", chatType: "channel" }],
    ["agent:ops:slack:acme:direct:U1", { agentId: "ops", channel: "slack", chatType: "direct" }],
    ["agent:ops:whatsapp:DM:+1555", { agentId: "ops", channel: "whatsapp", chatType: "direct" }],
    ["agent:main:main", { agentId: "main" }],
    ["agent:main:incident-42", { agentId: "main" }],
    ["global", {}],
    ["agent::x:direct:1", {}],
    ["", {}],
    [undefined, {}],
  ];
  for (const [key, expected] of cases) {
    test(`${JSON.stringify(key)}`, () => assert.deepEqual(sessionFacts(key), expected));
  }
});

describe("enrichRequest", () => {
  test("carries the turn's facts, and what the session key implies fills the gaps", () => {
    assert.deepEqual(
      enrichRequest({
        body: "see https://example.org",
        sessionKey: "agent:main:telegram:group:42",
        messageId: "m-7",
        media: [{ url: "https://cdn.example.org/a.png", contentType: "image/png" }],
      }),
      {
        body: "see https://example.org",
        channel: "telegram",
        chatType: "group",
        sessionKey: "agent:main:telegram:group:42",
        agentId: "main",
        messageId: "m-7",
        attachments: [{ url: "https://cdn.example.org/a.png", mime: "image/png" }],
      },
    );
  });

  test("the hook's own channel, chat type and agent win over the session key's", () => {
    const request = enrichRequest({
      body: "x",
      sessionKey: "agent:main:telegram:group:42",
      agentId: "helper",
      channel: "webchat",
      chatType: "dm",
    });
    assert.equal(request.agentId, "helper");
    assert.equal(request.channel, "webchat");
    assert.equal(request.chatType, "direct");
  });

  test("values over the API's bounds are left out instead of failing the whole request", () => {
    const request = enrichRequest({
      body: "x",
      sessionKey: `agent:main:${"k".repeat(400)}`,
      messageId: "m".repeat(201),
      chatType: "room",
    });
    assert.deepEqual(request, { body: "x", agentId: "main" });
  });
});

describe("attachmentsOf", () => {
  test("a remote URL first, else the staged path; other schemes and junk are skipped", () => {
    assert.deepEqual(
      attachmentsOf([
        { url: "https://cdn.example.org/a.ogg", path: "/media/a.ogg", contentType: "audio/ogg" },
        { path: "/media/b.pdf" },
        { url: "file:///etc/passwd", path: "/media/c.txt" },
        { url: "data:text/plain,hi" },
        null,
        "nonsense",
      ]),
      [
        { url: "https://cdn.example.org/a.ogg", mime: "audio/ogg" },
        { path: "/media/b.pdf" },
        { path: "/media/c.txt" },
      ],
    );
  });

  test(`at most ${MAX_ATTACHMENTS}, the API's limit`, () => {
    const many = Array.from({ length: 40 }, (_, index) => ({ path: `/m/${index}` }));
    assert.equal(attachmentsOf(many).length, MAX_ATTACHMENTS);
    assert.deepEqual(attachmentsOf(undefined), []);
  });
});

describe("enrichmentContext", () => {
  const envelope = "[Link]\nURL: https://example.org\nSource: link-understand\nSummary:\nHello";
  const cases = [
    ["the envelope after the original", "see https://example.org", `see https://example.org\n\n${envelope}`, envelope],
    ["the original was trimmed by Control UI", "  see it \n", `see it\n\n${envelope}`, envelope],
    ["nothing appended", "hello", "hello", ""],
    ["nothing appended, whitespace differs", "hello\n", "hello", ""],
    ["an empty original (media only)", "", "[Image]\nA cat", "[Image]\nA cat"],
    ["media rewrote the body around the original", "look", "[Image]\nUser text:\nlook\nDescription:\nA cat", "[Image]\nUser text:\nlook\nDescription:\nA cat"],
    ["an empty answer", "look", "", ""],
  ];
  for (const [name, original, enriched, expected] of cases) {
    test(name, () => assert.equal(enrichmentContext(original, enriched), expected));
  }
});

describe("finalReplyText", () => {
  const user = (text) => ({ role: "user", content: text });
  const assistant = (content) => ({ role: "assistant", content });

  test("the last assistant text after the last user message, in parts joined", () => {
    const messages = [
      user("old"),
      assistant("old reply"),
      user("new"),
      assistant([{ type: "toolCall", id: "1" }]),
      { role: "toolResult", content: [{ type: "text", text: "tool output" }] },
      assistant([{ type: "text", text: "Here: " }, { type: "text", text: '[embed ref="v" /]' }]),
    ];
    assert.equal(finalReplyText(messages), 'Here: [embed ref="v" /]');
  });

  test("a run that ended without a reply stores nothing (not the previous turn's)", () => {
    assert.equal(finalReplyText([user("a"), assistant("reply a"), user("b")]), "");
    assert.equal(finalReplyText([user("a"), assistant("NO_REPLY")]), "");
    assert.equal(finalReplyText([user("a"), assistant([{ type: "text", text: "  " }])]), "");
    assert.equal(finalReplyText("not a list"), "");
    assert.equal(finalReplyText([null, 3, assistant("fine")]), "fine");
  });
});
