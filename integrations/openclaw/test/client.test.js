// @ts-check
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { postJson, statusReason, transportReason } from "../src/client.js";
import { closedPortUrl, sendJson, startFakeControlUi } from "./fake-control-ui.js";

const TOKEN = "tok-3f9a-secret";

/** Answers by the request's path, so one server serves every case. */
async function answer(request, response) {
  switch (request.url) {
    case "/api/ok":
      return sendJson(response, 200, { runId: 1, echo: request.body });
    case "/api/slow":
      return; // never answers: the caller's bound must end the wait
    case "/api/slow-body":
      response.writeHead(200, { "Content-Type": "application/json" });
      response.write('{"runId": 1,');
      return; // headers and half a body, then nothing
    case "/api/unauthorized":
      return sendJson(response, 401, { detail: "Authentication required." });
    case "/api/forbidden":
      return sendJson(response, 403, { detail: "Staff only." });
    case "/api/broken":
      return sendJson(response, 500, { detail: "Internal\nserver   error" });
    case "/api/html-error":
      response.writeHead(502, { "Content-Type": "text/html" });
      return response.end("<html>bad gateway</html>");
    case "/api/invalid":
      return sendJson(response, 422, { detail: "body: longer than 1048576 characters", errors: [] });
    case "/api/malformed":
      response.writeHead(200, { "Content-Type": "application/json" });
      return response.end("{not json");
    case "/api/list":
      return sendJson(response, 200, [1, 2]);
    case "/api/redirect":
      response.writeHead(302, { Location: "/login/" });
      return response.end();
    default:
      return sendJson(response, 404, { detail: "Not Found" });
  }
}

describe("postJson against a fake Control UI", () => {
  /** @type {Awaited<ReturnType<typeof startFakeControlUi>>} */
  let server;
  before(async () => {
    server = await startFakeControlUi(answer);
  });
  after(() => server.close());

  const call = (path, timeoutMs = 2000) =>
    postJson({ config: { baseUrl: server.baseUrl, apiToken: TOKEN, timeoutMs }, path, payload: { body: "hi" } });

  test("success: the JSON object, sent with the bearer token", async () => {
    const result = await call("/api/ok");
    assert.deepEqual(result, { ok: true, status: 200, data: { runId: 1, echo: { body: "hi" } } });
    const sent = server.requests.at(-1);
    assert.equal(sent?.method, "POST");
    assert.equal(sent?.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(sent?.headers["content-type"], "application/json");
  });

  const failures = [
    ["/api/unauthorized", "HTTP 401: the API token was refused"],
    ["/api/forbidden", "HTTP 403: the API token was refused"],
    ["/api/broken", "HTTP 500: Internal server error"],
    ["/api/html-error", "HTTP 502"],
    ["/api/invalid", "HTTP 422: body: longer than 1048576 characters"],
    ["/api/malformed", "answered HTTP 200 with malformed JSON"],
    ["/api/list", "answered HTTP 200 with JSON that is not an object"],
    ["/api/redirect", "HTTP 302: a redirect (is baseUrl the address of Control UI?)"],
  ];
  for (const [path, reason] of failures) {
    test(`${path} → ${reason}`, async () => {
      assert.deepEqual(await call(path), { ok: false, reason });
    });
  }

  test("a server that never answers is given up after the timeout", async () => {
    const started = performance.now();
    const result = await call("/api/slow", 300);
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { ok: false, reason: "timed out after 300 ms" });
    assert.ok(elapsed >= 250 && elapsed < 1500, `waited ${elapsed} ms`);
  });

  test("the timeout also bounds an answer whose body stalls", async () => {
    const started = performance.now();
    const result = await call("/api/slow-body", 300);
    assert.deepEqual(result, { ok: false, reason: "timed out after 300 ms" });
    assert.ok(performance.now() - started < 1500);
  });

  test("no reason ever holds the token", async () => {
    for (const [path] of failures) {
      const result = await call(path);
      assert.ok(!result.ok && !result.reason.includes(TOKEN));
    }
  });
});

test("connection refused is named as such, at once", async () => {
  const baseUrl = await closedPortUrl();
  const started = performance.now();
  const result = await postJson({
    config: { baseUrl, apiToken: TOKEN, timeoutMs: 5000 },
    path: "/api/enrich",
    payload: {},
  });
  assert.deepEqual(result, { ok: false, reason: "cannot connect (connection refused)" });
  assert.ok(performance.now() - started < 2000);
});

test("a socket error wrapped by fetch is named by its code (no DNS needed)", async () => {
  // undici's shape: TypeError("fetch failed") caused by the resolver's or socket's error.
  const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND controlui.internal"), { code: "ENOTFOUND" });
  const reset = new AggregateError([Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })]);
  for (const [cause, reason] of [
    [lookup, "cannot connect (ENOTFOUND)"],
    [reset, "cannot connect (ECONNRESET)"],
  ]) {
    const fetchImpl = async () => {
      throw new TypeError("fetch failed", { cause });
    };
    const result = await postJson({
      config: { baseUrl: "http://controlui.internal", apiToken: TOKEN, timeoutMs: 5000 },
      path: "/api/enrich",
      payload: {},
      fetchImpl: /** @type {typeof fetch} */ (/** @type {unknown} */ (fetchImpl)),
    });
    assert.deepEqual(result, { ok: false, reason });
  }
});

test("a fetch that throws something unexpected is one line", () => {
  assert.equal(transportReason(new Error("boom\nsecond line"), 1000), "request failed (boom second line)");
  assert.equal(transportReason(Object.assign(new Error("x"), { name: "TimeoutError" }), 700), "timed out after 700 ms");
  assert.equal(statusReason(404, ""), "HTTP 404");
  assert.equal(statusReason(500, JSON.stringify({ detail: "d".repeat(500) })).length, "HTTP 500: ".length + 161);
});
