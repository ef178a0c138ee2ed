// @ts-check
/**
 * Pure translations between OpenClaw's hook events and Control UI's API: no network, no
 * clock, no host objects kept.
 *
 * An inbound turn becomes a `POST /api/enrich` request:
 *
 *   enrichRequest({ body: "see https://example.org", sessionKey: "agent:main:telegram:group:42",
 *                   agentId: "main", channel: "telegram" })
 *   → { body: "see https://example.org", sessionKey: "agent:main:telegram:group:42",
 *       agentId: "main", channel: "telegram", chatType: "group" }
 *
 * and Control UI's answer becomes the context the agent gets — what enrichment appended
 * to the (trimmed) original:
 *
 *   enrichmentContext("see https://example.org ", "see https://example.org\n\n[Link]\nURL: …")
 *   → "[Link]\nURL: …"
 */

export const MAX_BODY_CHARS = 1_048_576; // POST /api/enrich refuses longer bodies
export const MAX_REPLY_CHARS = 1_048_576; // POST /api/render refuses longer texts
export const MAX_ATTACHMENTS = 32;
const CHAT_TYPES = new Map([
  ["direct", "direct"],
  ["dm", "direct"],
  ["group", "group"],
  ["channel", "channel"],
]);
// Field bounds of POST /api/enrich: a longer value would turn the whole request into a 422.
const FIELD_LIMITS = { channel: 100, sessionKey: 300, agentId: 100, messageId: 200, senderName: 200 };
const SILENT_REPLY = "NO_REPLY";

/**
 * What an OpenClaw session key says about its conversation:
 * `agent:<agentId>:<channel>:<direct|group|channel>:<peer>[:thread:…]`, with an account id
 * between channel and kind on per-account keys; `agent:<agentId>:main` is the agent's main
 * (direct) session and says nothing of a channel.
 *
 *   sessionFacts("agent:ops:slack:acme:channel:C42:thread:9")
 *   → { agentId: "ops", channel: "slack", chatType: "channel" }
 *
 * @param {string | undefined} sessionKey
 * @returns {{ agentId?: string, channel?: string, chatType?: string }}
 */
export function sessionFacts(sessionKey) {
  if (!sessionKey) return {};
  const parts = sessionKey.split(":");
  if (parts[0] !== "agent" || parts.length < 3 || !parts[1]) return {};
  const facts = /** @type {{ agentId?: string, channel?: string, chatType?: string }} */ ({
    agentId: parts[1],
  });
  for (let index = 3; index < Math.min(parts.length, 5); index += 1) {
    const chatType = CHAT_TYPES.get(parts[index].toLowerCase());
    if (chatType && parts[2]) {
      facts.channel = parts[2];
      facts.chatType = chatType;
      break;
    }
  }
  return facts;
}

/**
 * @typedef {object} MediaFact
 * @property {string} [url]
 * @property {string} [path]
 * @property {string} [contentType]
 *
 * @typedef {object} TurnFacts
 * @property {string} body
 * @property {string} [sessionKey]
 * @property {string} [agentId]
 * @property {string} [channel]
 * @property {string} [chatType]
 * @property {string} [messageId]
 * @property {string} [senderName]
 * @property {MediaFact[]} [media]
 */

/**
 * The `POST /api/enrich` body for one turn; facts the session key implies fill what the
 * hook context left out, and values over the API's bounds are left out rather than sent.
 * @param {TurnFacts} turn
 * @returns {Record<string, unknown>}
 */
export function enrichRequest(turn) {
  const implied = sessionFacts(turn.sessionKey);
  /** @type {Record<string, unknown>} */
  const request = { body: turn.body };
  const fields = {
    channel: turn.channel || implied.channel,
    chatType: normalizeChatType(turn.chatType) || implied.chatType,
    sessionKey: turn.sessionKey,
    agentId: turn.agentId || implied.agentId,
    messageId: turn.messageId,
    senderName: turn.senderName,
  };
  for (const [name, value] of Object.entries(fields)) {
    const limit = /** @type {Record<string, number>} */ (FIELD_LIMITS)[name] ?? 20;
    if (typeof value === "string" && value && value.length <= limit) request[name] = value;
  }
  const attachments = attachmentsOf(turn.media);
  if (attachments.length) request.attachments = attachments;
  return request;
}

/** @param {string | undefined} value */
function normalizeChatType(value) {
  return value ? CHAT_TYPES.get(value.toLowerCase()) : undefined;
}

/**
 * Media references as Control UI's attachments, in the message's order: a remote `url`
 * when the gateway has one (Control UI downloads it under its own SSRF policy), else the
 * staged local `path` (usable when Control UI shares the gateway's media directory).
 * @param {MediaFact[] | undefined} media
 * @returns {Array<Record<string, string>>}
 */
export function attachmentsOf(media) {
  if (!Array.isArray(media)) return [];
  const attachments = [];
  for (const fact of media.slice(0, MAX_ATTACHMENTS)) {
    if (!fact || typeof fact !== "object") continue;
    /** @type {Record<string, string>} */
    const attachment = {};
    if (typeof fact.url === "string" && /^https?:\/\//i.test(fact.url)) attachment.url = fact.url;
    else if (typeof fact.path === "string" && fact.path) attachment.path = fact.path;
    else continue;
    if (typeof fact.contentType === "string" && fact.contentType.length <= 200) {
      attachment.mime = fact.contentType;
    }
    attachments.push(attachment);
  }
  return attachments;
}

/**
 * What Control UI added to the body: the envelope after the trimmed original, or the whole
 * enriched body when media understanding rewrote it around the original. "" = nothing.
 * @param {string} original
 * @param {string} enriched
 */
export function enrichmentContext(original, enriched) {
  const trimmed = original.trim();
  const result = enriched.trim();
  if (!result || result === trimmed) return "";
  if (trimmed && result.startsWith(trimmed)) return result.slice(trimmed.length).trim();
  return result;
}

/**
 * The reply of a finished run: the text of the last assistant message after the last user
 * message (a run's tool calls and their results come before it). "" when the run ended
 * without one, or with OpenClaw's "nothing to say" token.
 * @param {unknown} messages
 */
export function finalReplyText(messages) {
  if (!Array.isArray(messages)) return "";
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (!message || typeof message !== "object") continue;
    const { role, content } = /** @type {{ role?: unknown, content?: unknown }} */ (message);
    if (role === "user") return "";
    if (role !== "assistant") continue;
    const text = textOf(content);
    if (text.trim()) return text.trim() === SILENT_REPLY ? "" : text;
  }
  return "";
}

/** @param {unknown} content */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("");
}
