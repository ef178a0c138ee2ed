// @ts-check
/**
 * The plugin's settings (`plugins.entries.controlui-bridge.config` in openclaw.json).
 *
 * OpenClaw validates that object against the manifest's `configSchema` before the plugin
 * loads; this module checks it again at registration (a host that skipped validation, a test
 * that builds the API by hand) and fills in the defaults. The bounds here and in
 * `openclaw.plugin.json` are the same numbers; a unit test holds them together.
 *
 *   resolveConfig({ baseUrl: "http://127.0.0.1:8000/", apiToken: "t" })
 *   → { ok: true, config: { baseUrl: "http://127.0.0.1:8000", apiToken: "t",
 *       timeoutMs: 5000, enrich: true, storeReplies: true, agents: null } }
 */

export const PLUGIN_ID = "controlui-bridge";
export const TIMEOUT_MIN_MS = 100;
export const TIMEOUT_MAX_MS = 60_000;
export const TIMEOUT_DEFAULT_MS = 5_000;
export const MAX_AGENTS = 256;
const KNOWN_KEYS = new Set(["baseUrl", "apiToken", "timeoutMs", "enrich", "storeReplies", "agents"]);
const BASE_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;
// `${VAR}` left in place: OpenClaw keeps a missing environment variable visibly unresolved.
const UNRESOLVED_VARIABLE = /^\$\{[A-Z_][A-Z0-9_]*\}$/;

/**
 * @typedef {object} BridgeConfig
 * @property {string} baseUrl Control UI's origin and path prefix, without a trailing slash.
 * @property {string} apiToken
 * @property {number} timeoutMs
 * @property {boolean} enrich
 * @property {boolean} storeReplies
 * @property {Set<string> | null} agents null = every agent.
 */

/**
 * @param {unknown} raw
 * @returns {{ ok: true, config: BridgeConfig } | { ok: false, problem: string }}
 */
export function resolveConfig(raw) {
  if (raw === undefined || raw === null) {
    return fail("config: missing (baseUrl and apiToken are required)");
  }
  if (typeof raw !== "object" || Array.isArray(raw)) return fail("config: must be an object");
  const given = /** @type {Record<string, unknown>} */ (raw);
  const unknown = Object.keys(given).filter((key) => !KNOWN_KEYS.has(key));
  if (unknown.length) return fail(`config.${unknown[0]}: unknown setting`);

  const { baseUrl, apiToken } = given;
  if (typeof baseUrl !== "string" || !baseUrl) return fail("config.baseUrl: required (a URL)");
  if (baseUrl.length > 2048 || !BASE_URL.test(baseUrl) || !URL.canParse(baseUrl)) {
    return fail("config.baseUrl: must be an http(s) URL without query or fragment");
  }
  if (typeof apiToken !== "string" || !apiToken) return fail("config.apiToken: required");
  if (apiToken.length > 512) return fail("config.apiToken: longer than 512 characters");
  if (UNRESOLVED_VARIABLE.test(apiToken)) {
    return fail("config.apiToken: the environment variable it names is not set");
  }

  const timeoutMs = given.timeoutMs ?? TIMEOUT_DEFAULT_MS;
  if (
    typeof timeoutMs !== "number" ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < TIMEOUT_MIN_MS ||
    timeoutMs > TIMEOUT_MAX_MS
  ) {
    return fail(
      `config.timeoutMs: must be a whole number of milliseconds from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS}`,
    );
  }
  for (const key of ["enrich", "storeReplies"]) {
    if (given[key] !== undefined && typeof given[key] !== "boolean") {
      return fail(`config.${key}: must be true or false`);
    }
  }
  const agents = resolveAgents(given.agents);
  if (typeof agents === "string") return fail(agents);

  return {
    ok: true,
    config: {
      baseUrl: baseUrl.replace(/\/+$/, ""),
      apiToken,
      timeoutMs,
      enrich: given.enrich !== false,
      storeReplies: given.storeReplies !== false,
      agents,
    },
  };
}

/**
 * @param {unknown} raw
 * @returns {Set<string> | null | string} the agent ids, null for all, or a problem
 */
function resolveAgents(raw) {
  if (raw === undefined) return null;
  if (!Array.isArray(raw)) return "config.agents: must be a list of agent ids";
  if (raw.length > MAX_AGENTS) return `config.agents: at most ${MAX_AGENTS} agent ids`;
  for (const [index, id] of raw.entries()) {
    if (typeof id !== "string" || !id || id.length > 100) {
      return `config.agents[${index}]: must be an agent id (1 to 100 characters)`;
    }
  }
  return new Set(raw);
}

/** @param {string} problem */
function fail(problem) {
  return /** @type {const} */ ({ ok: false, problem });
}
