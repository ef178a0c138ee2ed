// @ts-check
/**
 * The hooks as the gateway calls them, against a fake Control UI: what the agent gets, what
 * Control UI receives, how long a turn waits, and what is logged when things go wrong.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";

import { registerBridge } from "../src/plugin.js";
import { closedPortUrl, sendJson, startFakeControlUi } from "./fake-control-ui.js";

const TOKEN = "tok-7c1e-secret";
const SESSION = "agent:main:telegram:direct:555";
const ENVELOPE = "[Link]\nURL: http://127.0.0.1/page\nSource: link-understand\nSummary:\nA page.";

/** The slice of OpenClaw's plugin API the bridge uses, recording what it is given. */
function fakeApi(pluginConfig) {
  /** @type {Map<string, { handler: (event: any, ctx: any) => any, options?: { timeoutMs?: number } }>} */
  const hooks = new Map();
  /** @type {string[]} */
  const logs = [];
  const api = {
    pluginConfig,
    logger: {
      info: (/** @type {string} */ line) => logs.push(`info ${line}`),
      warn: (/** @type {string} */ line) => logs.push(`warn ${line}`),
      debug: (/** @type {string} */ line) => logs.push(`debug ${line}`),
    },
    on: (/** @type {string} */ hook, handler, options) => hooks.set(hook, { handler, options }),
  };
  return { api, hooks, logs };
}

/** Control UI as the plugin sees it: /api/enrich appends an envelope, /api/render stores. */
let mode = "normal";
async function controlUi(request, response) {
  if (mode === "slow") return; // never answers
  if (mode === "401") return sendJson(response, 401, { detail: "Authentication required." });
  if (mode === "500") return sendJson(response, 500, { detail: "Server error." });
  if (mode === "malformed") {
    response.writeHead(200, { "Content-Type": "application/json" });
    return response.end("{oops");
  }
  if (mode === "no-body") return sendJson(response, 200, { runId: 3 });
  if (request.url === "/api/enrich") {
    const body = String(request.body.body).trim();
    const enriched = body.includes("http") ? `${body}\n\n${ENVELOPE}` : body;
    return sendJson(response, 200, { runId: 41, body: enriched, links: {}, media: [] });
  }
  if (request.url === "/api/render") {
    return sendJson(response, 200, { text: request.body.text, blocks: [], messageId: 9 });
  }
  return sendJson(response, 404, { detail: "Not Found" });
}

describe("the bridge's hooks", () => {
  /** @type {Awaited<ReturnType<typeof startFakeControlUi>>} */
  let server;
  before(async () => {
    server = await startFakeControlUi(controlUi);
  });
  after(() => server.close());
  afterEach(() => {
    mode = "normal";
    server.requests.length = 0;
  });

  const setUp = (extra = {}) => {
    const fake = fakeApi({ baseUrl: server.baseUrl, apiToken: TOKEN, timeoutMs: 400, ...extra });
    assert.equal(registerBridge(fake.api), true);
    return fake;
  };
  const promptBuild = (fake, event, ctx) =>
    fake.hooks.get("before_prompt_build")?.handler(event, { sessionKey: SESSION, agentId: "main", runId: "r1", trigger: "user", ...ctx });

  test("the agent gets what Control UI appended, as appended context", async () => {
    const fake = setUp();
    const result = await promptBuild(fake, { prompt: "history…\nread http://127.0.0.1/page", currentUserMessage: "read http://127.0.0.1/page", messages: [] });
    assert.deepEqual(result, { appendContext: ENVELOPE });
    assert.deepEqual(server.requests.map((request) => [request.url, request.body]), [
      [
        "/api/enrich",
        {
          body: "read http://127.0.0.1/page",
          channel: "telegram",
          chatType: "direct",
          sessionKey: SESSION,
          agentId: "main",
        },
      ],
    ]);
    assert.equal(server.requests[0].headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(fake.logs, []);
  });

  test("without a current message, the prompt is the body", async () => {
    const fake = setUp();
    await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [] });
    assert.equal(server.requests[0].body.body, "see http://127.0.0.1/page");
  });

  test("nothing appended: nothing returned, and the run is still recorded", async () => {
    const fake = setUp();
    assert.equal(await promptBuild(fake, { prompt: "just words", messages: [] }), undefined);
    assert.equal(server.requests.length, 1);
  });

  test("the host's wait is set just above the plugin's own bound", () => {
    const fake = setUp({ timeoutMs: 2500 });
    assert.equal(fake.hooks.get("before_prompt_build")?.options?.timeoutMs, 3500);
  });

  test("a channel message's id, channel and media go with its turn", async () => {
    const fake = setUp();
    fake.hooks.get("message_received")?.handler(
      {
        from: "telegram:555",
        content: "photo http://127.0.0.1/page",
        messageId: "tg-99",
        sessionKey: SESSION,
        runId: "r1",
        media: [{ path: "/media/in/a.jpg", contentType: "image/jpeg" }],
      },
      { channelId: "telegram", sessionKey: SESSION },
    );
    await promptBuild(fake, { prompt: "photo http://127.0.0.1/page", messages: [] });
    const sent = server.requests[0].body;
    assert.equal(sent.messageId, "tg-99");
    assert.deepEqual(sent.attachments, [{ path: "/media/in/a.jpg", mime: "image/jpeg" }]);

    // The reply then answers that message.
    await fake.hooks.get("agent_end")?.handler(
      { runId: "r1", success: true, messages: [{ role: "user", content: "x" }, { role: "assistant", content: "ok [[reply_to_current]]" }] },
      { sessionKey: SESSION, agentId: "main", runId: "r1", trigger: "user" },
    );
    assert.equal(server.requests[1].body.currentMessageId, "tg-99");
  });

  test("a remembered message from another run is not attached to this one", async () => {
    const fake = setUp();
    fake.hooks.get("message_received")?.handler(
      { from: "x", content: "old", messageId: "tg-1", sessionKey: SESSION, runId: "other" },
      { channelId: "telegram", sessionKey: SESSION },
    );
    await promptBuild(fake, { prompt: "new", messages: [] });
    assert.equal(server.requests[0].body.messageId, undefined);
  });

  test("a prompt rebuilt for the same run is not enriched (or recorded) twice", async () => {
    const fake = setUp();
    const first = await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [] });
    const again = await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [1, 2] });
    assert.deepEqual(again, first);
    assert.equal(server.requests.length, 1);
  });

  test("a prompt rebuilt after a timeout does not wait a second time", async () => {
    mode = "slow";
    const fake = setUp();
    await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [] });
    const started = performance.now();
    assert.equal(await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [1] }), undefined);
    assert.ok(performance.now() - started < 100);
    assert.equal(server.requests.length, 1);
  });

  const failures = [
    ["slow", "timed out after 400 ms"],
    ["401", "HTTP 401: the API token was refused"],
    ["500", "HTTP 500: Server error."],
    ["malformed", "answered HTTP 200 with malformed JSON"],
    ["no-body", "the answer has no body"],
  ];
  for (const [failure, reason] of failures) {
    test(`Control UI ${failure}: the turn goes on unenriched, and one line says why`, async () => {
      mode = failure;
      const fake = setUp();
      const started = performance.now();
      const result = await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [] });
      const elapsed = performance.now() - started;
      assert.equal(result, undefined);
      assert.ok(elapsed < 1400, `the turn waited ${elapsed} ms`);
      assert.equal(fake.logs.length, 1);
      const logged = /^warn controlui-bridge: turn not enriched after (\d+) ms \((.*)\); session (.*)$/.exec(fake.logs[0]);
      assert.ok(logged, fake.logs[0]);
      assert.deepEqual(logged.slice(2), [reason, SESSION]);
      // The line says how long the turn waited: the timeout's worth when Control UI hangs.
      const waited = Number(logged[1]);
      assert.ok(failure === "slow" ? waited >= 395 && waited < 1400 : waited < 400, `${waited} ms`);
    });
  }

  test("Control UI down: connection refused, the turn goes on at once", async () => {
    const fake = fakeApi({ baseUrl: await closedPortUrl(), apiToken: TOKEN, timeoutMs: 5000 });
    registerBridge(fake.api);
    const started = performance.now();
    const result = await promptBuild(fake, { prompt: "see http://127.0.0.1/page", messages: [] });
    assert.equal(result, undefined);
    assert.ok(performance.now() - started < 2000);
    assert.match(
      fake.logs[0],
      /^warn controlui-bridge: turn not enriched after \d+ ms \(cannot connect \(connection refused\)\); session agent:main:telegram:direct:555$/,
    );
    await fake.hooks.get("agent_end")?.handler(
      { runId: "r1", success: true, messages: [{ role: "assistant", content: "hi" }] },
      { sessionKey: SESSION, runId: "r1" },
    );
    assert.equal(fake.logs[1], `warn controlui-bridge: reply not stored (cannot connect (connection refused)); session ${SESSION}`);
    assert.ok(fake.logs.every((line) => !line.includes(TOKEN)));
  });

  test("the final reply is stored under the same session key, once per run", async () => {
    const fake = setUp();
    const reply = 'Done. [embed ref="cv_1" title="Status" /]';
    const event = {
      runId: "r1",
      success: true,
      messages: [{ role: "user", content: "go" }, { role: "assistant", content: [{ type: "text", text: reply }] }],
    };
    const ctx = { sessionKey: SESSION, agentId: "main", runId: "r1", trigger: "user" };
    await fake.hooks.get("agent_end")?.handler(event, ctx);
    await fake.hooks.get("agent_end")?.handler(event, ctx);
    assert.deepEqual(server.requests.map((request) => [request.url, request.body]), [
      ["/api/render", { text: reply, store: true, sessionKey: SESSION }],
    ]);
  });

  test("failed runs, empty replies and Control UI errors store nothing; errors are logged", async () => {
    const fake = setUp();
    const agentEnd = fake.hooks.get("agent_end")?.handler;
    await agentEnd?.({ runId: "a", success: false, messages: [{ role: "assistant", content: "x" }] }, { sessionKey: SESSION });
    await agentEnd?.({ runId: "b", success: true, messages: [{ role: "user", content: "x" }] }, { sessionKey: SESSION });
    assert.equal(server.requests.length, 0);
    mode = "500";
    await agentEnd?.({ runId: "c", success: true, messages: [{ role: "assistant", content: "x" }] }, { sessionKey: SESSION });
    assert.deepEqual(fake.logs, [`warn controlui-bridge: reply not stored (HTTP 500: Server error.); session ${SESSION}`]);
  });

  test("heartbeat and cron turns are not the user's: neither enriched nor stored", async () => {
    const fake = setUp();
    assert.equal(await promptBuild(fake, { prompt: "http://127.0.0.1/x", messages: [] }, { trigger: "heartbeat" }), undefined);
    await fake.hooks.get("agent_end")?.handler(
      { runId: "h", success: true, messages: [{ role: "assistant", content: "ok" }] },
      { sessionKey: SESSION, trigger: "cron" },
    );
    assert.equal(server.requests.length, 0);
  });

  test("with an agent list, other agents are left alone", async () => {
    const fake = setUp({ agents: ["support"] });
    assert.equal(await promptBuild(fake, { prompt: "http://127.0.0.1/x", messages: [] }), undefined);
    await promptBuild(fake, { prompt: "http://127.0.0.1/x", messages: [] }, { agentId: undefined, sessionKey: "agent:support:main", runId: "r2" });
    assert.deepEqual(server.requests.map((request) => request.body.sessionKey), ["agent:support:main"]);
  });

  test("the toggles switch each half off", () => {
    assert.deepEqual([...setUp({ enrich: false }).hooks.keys()], ["agent_end"]);
    assert.deepEqual([...setUp({ storeReplies: false }).hooks.keys()], ["message_received", "before_prompt_build"]);
  });

  test("an oversized message is not sent", async () => {
    const fake = setUp();
    assert.equal(await promptBuild(fake, { prompt: "x".repeat(1_048_577), messages: [] }), undefined);
    assert.equal(server.requests.length, 0);
    assert.deepEqual(fake.logs, ["warn controlui-bridge: turn not enriched: message longer than 1048576 characters"]);
  });
});

test("an invalid config registers no hook and says why", () => {
  const fake = fakeApi({ baseUrl: "not a url", apiToken: TOKEN });
  assert.equal(registerBridge(fake.api), false);
  assert.equal(fake.hooks.size, 0);
  assert.deepEqual(fake.logs, [
    "warn controlui-bridge: not active: config.baseUrl: must be an http(s) URL without query or fragment",
  ]);
});
