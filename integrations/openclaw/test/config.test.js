// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import {
  PLUGIN_ID,
  TIMEOUT_DEFAULT_MS,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
  resolveConfig,
} from "../src/config.js";

const manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
const packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const VALID = { baseUrl: "http://127.0.0.1:8000", apiToken: "secret-token" };

describe("resolveConfig", () => {
  test("fills the defaults and drops a trailing slash", () => {
    const result = resolveConfig({ ...VALID, baseUrl: "https://ui.example.org/control/" });
    assert.deepEqual(result, {
      ok: true,
      config: {
        baseUrl: "https://ui.example.org/control",
        apiToken: "secret-token",
        timeoutMs: TIMEOUT_DEFAULT_MS,
        enrich: true,
        storeReplies: true,
        agents: null,
      },
    });
  });

  test("keeps the toggles, the timeout and the agent list it is given", () => {
    const result = resolveConfig({
      ...VALID,
      timeoutMs: 250,
      enrich: false,
      storeReplies: false,
      agents: ["main", "support"],
    });
    assert.ok(result.ok);
    assert.equal(result.config.timeoutMs, 250);
    assert.equal(result.config.enrich, false);
    assert.equal(result.config.storeReplies, false);
    assert.deepEqual([...(result.config.agents ?? [])], ["main", "support"]);
  });

  const refused = [
    ["missing config", undefined, "config: missing (baseUrl and apiToken are required)"],
    ["not an object", ["x"], "config: must be an object"],
    ["unknown key", { ...VALID, token: "x" }, "config.token: unknown setting"],
    ["no base URL", { apiToken: "t" }, "config.baseUrl: required (a URL)"],
    ["ftp base URL", { ...VALID, baseUrl: "ftp://h/" }, "config.baseUrl: must be an http(s) URL without query or fragment"],
    ["base URL with query", { ...VALID, baseUrl: "http://h/?a=1" }, "config.baseUrl: must be an http(s) URL without query or fragment"],
    ["base URL with space", { ...VALID, baseUrl: "http://h /x" }, "config.baseUrl: must be an http(s) URL without query or fragment"],
    ["no token", { baseUrl: VALID.baseUrl }, "config.apiToken: required"],
    ["empty token", { ...VALID, apiToken: "" }, "config.apiToken: required"],
    ["unset variable", { ...VALID, apiToken: "${CONTROLUI_API_TOKEN}" }, "config.apiToken: the environment variable it names is not set"],
    ["timeout too small", { ...VALID, timeoutMs: TIMEOUT_MIN_MS - 1 }, `config.timeoutMs: must be a whole number of milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`],
    ["timeout too large", { ...VALID, timeoutMs: TIMEOUT_MAX_MS + 1 }, `config.timeoutMs: must be a whole number of milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`],
    ["timeout fraction", { ...VALID, timeoutMs: 1000.5 }, `config.timeoutMs: must be a whole number of milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`],
    ["timeout as text", { ...VALID, timeoutMs: "1000" }, `config.timeoutMs: must be a whole number of milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`],
    ["toggle as text", { ...VALID, enrich: "yes" }, "config.enrich: must be true or false"],
    ["agents not a list", { ...VALID, agents: "main" }, "config.agents: must be a list of agent ids"],
    ["empty agent id", { ...VALID, agents: ["main", ""] }, "config.agents[1]: must be an agent id (1 to 100 characters)"],
  ];
  for (const [name, raw, problem] of refused) {
    test(`refuses ${name}`, () => {
      assert.deepEqual(resolveConfig(raw), { ok: false, problem });
    });
  }
});

describe("openclaw.plugin.json", () => {
  const schema = manifest.configSchema;

  test("names the plugin as the code does, and package.json points at the entry", () => {
    assert.equal(manifest.id, PLUGIN_ID);
    assert.deepEqual(packageJson.openclaw.extensions, ["./index.js"]);
  });

  test("has the bounds and defaults the plugin applies", () => {
    assert.equal(schema.properties.timeoutMs.minimum, TIMEOUT_MIN_MS);
    assert.equal(schema.properties.timeoutMs.maximum, TIMEOUT_MAX_MS);
    assert.equal(schema.properties.timeoutMs.default, TIMEOUT_DEFAULT_MS);
    assert.deepEqual(schema.required, ["baseUrl", "apiToken"]);
    assert.equal(schema.additionalProperties, false);
  });

  test("every setting it declares is one the plugin accepts", () => {
    const all = {
      ...VALID,
      timeoutMs: 1000,
      enrich: true,
      storeReplies: true,
      agents: ["main"],
    };
    assert.deepEqual(Object.keys(schema.properties).sort(), Object.keys(all).sort());
    assert.ok(resolveConfig(all).ok);
  });

  test("its base URL pattern refuses what the plugin refuses", () => {
    const pattern = new RegExp(schema.properties.baseUrl.pattern);
    for (const url of ["http://127.0.0.1:8000", "https://h/a/b/"]) assert.ok(pattern.test(url), url);
    for (const url of ["ftp://h", "http://h/?q", "http://h/#f", "h:8000"]) assert.ok(!pattern.test(url), url);
  });

  test("marks the token as a secret", () => {
    assert.equal(manifest.uiHints.apiToken.sensitive, true);
  });
});
