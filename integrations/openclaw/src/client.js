// @ts-check
/**
 * One bounded JSON call to Control UI. It never throws: every way the call can go wrong
 * (down, slow, refused token, server error, a body that is not JSON) comes back as a
 * one-line reason the plugin can log. The reason never holds the token or the message.
 *
 *   await postJson({ config, path: "/api/enrich", payload: { body: "hi" } })
 *   → { ok: true, status: 200, data: { runId: 7, body: "hi", links: {…}, media: [] } }
 *   → { ok: false, reason: "timed out after 5000 ms" }
 */

const USER_AGENT = "controlui-bridge/0.1.0";
const MAX_DETAIL_CHARS = 160;

/**
 * @typedef {{ ok: true, status: number, data: Record<string, unknown> }} CallSuccess
 * @typedef {{ ok: false, reason: string }} CallFailure
 * @typedef {CallSuccess | CallFailure} CallResult
 */

/**
 * @param {object} params
 * @param {{ baseUrl: string, apiToken: string, timeoutMs: number }} params.config
 * @param {string} params.path e.g. "/api/enrich"
 * @param {unknown} params.payload sent as JSON
 * @param {typeof fetch} [params.fetchImpl] the real fetch unless a test passes its own
 * @returns {Promise<CallResult>}
 */
export async function postJson({ config, path, payload, fetchImpl = fetch }) {
  // One signal bounds the whole exchange: connecting, the answer's headers and its body.
  const signal = AbortSignal.timeout(config.timeoutMs);
  let response;
  let text;
  try {
    response = await fetchImpl(config.baseUrl + path, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${config.apiToken}`,
        "Content-Type": "application/json",
        Accept: "application/json",
        "User-Agent": USER_AGENT,
      },
      body: JSON.stringify(payload),
      // A redirect means baseUrl is not Control UI's API (a login page, a proxy); following
      // it would send the token somewhere else.
      redirect: "manual",
      signal,
    });
    text = await response.text();
  } catch (error) {
    return { ok: false, reason: transportReason(error, config.timeoutMs) };
  }
  if (response.status < 200 || response.status > 299) {
    return { ok: false, reason: statusReason(response.status, text) };
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, reason: `answered HTTP ${response.status} with malformed JSON` };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, reason: `answered HTTP ${response.status} with JSON that is not an object` };
  }
  return { ok: true, status: response.status, data };
}

/**
 * @param {unknown} error
 * @param {number} timeoutMs
 */
export function transportReason(error, timeoutMs) {
  const name = error instanceof Error ? error.name : "";
  if (name === "TimeoutError" || name === "AbortError") return `timed out after ${timeoutMs} ms`;
  const code = errorCode(error);
  if (code === "ECONNREFUSED") return "cannot connect (connection refused)";
  if (code) return `cannot connect (${code})`;
  const message = error instanceof Error ? error.message : String(error);
  return `request failed (${oneLine(message)})`;
}

/**
 * undici wraps the socket's error: `TypeError("fetch failed", { cause })`, sometimes twice
 * (an AggregateError for each address of a name).
 * @param {unknown} error
 * @returns {string}
 */
function errorCode(error) {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    const record = /** @type {{ code?: unknown, cause?: unknown, errors?: unknown[] }} */ (current);
    if (typeof record.code === "string" && !record.code.startsWith("ERR_INVALID")) {
      return record.code;
    }
    if (Array.isArray(record.errors) && record.errors.length) {
      const inner = errorCode(record.errors[0]);
      if (inner) return inner;
    }
    current = record.cause;
  }
  return "";
}

/**
 * @param {number} status
 * @param {string} text
 */
export function statusReason(status, text) {
  if (status === 401 || status === 403) return `HTTP ${status}: the API token was refused`;
  if (status >= 300 && status < 400) {
    return `HTTP ${status}: a redirect (is baseUrl the address of Control UI?)`;
  }
  const detail = detailOf(text);
  return detail ? `HTTP ${status}: ${detail}` : `HTTP ${status}`;
}

/** Control UI's refusals are `{"detail": "…"}`; anything else is not quoted. @param {string} text */
function detailOf(text) {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.detail === "string") {
      const line = oneLine(parsed.detail);
      return line.length > MAX_DETAIL_CHARS ? `${line.slice(0, MAX_DETAIL_CHARS)}…` : line;
    }
  } catch {
    // not JSON: the status alone says enough
  }
  return "";
}

/** @param {string} text */
function oneLine(text) {
  return text.replace(/\s+/g, " ").trim();
}
