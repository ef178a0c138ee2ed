// @ts-check
/**
 * The hooks: what the gateway does with Control UI, turn by turn.
 *
 * - `message_received` (channel messages) remembers the inbound message's id, channel and
 *   media for its session; no network here, so nothing is sent twice.
 * - `before_prompt_build` sends the turn to `POST /api/enrich` and waits at most `timeoutMs`;
 *   what Control UI appended (the `[Link …]` and media envelopes) is returned as
 *   `appendContext`, where OpenClaw's own link understanding would have put it. Any failure
 *   is one log line and the turn goes on unenriched.
 * - `agent_end` sends the final assistant reply to `POST /api/render` with `store: true` and
 *   the same session key: Control UI stores the message and its canvas blocks, and the run's
 *   page links to it. The gateway does not wait for this (an observation hook).
 *
 * Why the REST endpoint and not `/ws/enrich/`: a turn is one request and one answer, and a
 * bounded wait is one AbortSignal; fetch keeps the connection alive between turns, so a
 * socket of our own would add reconnection, request ids and a second failure mode (a
 * half-open socket) for nothing the gateway uses (progress frames).
 */

import { postJson } from "./client.js";
import { PLUGIN_ID, resolveConfig } from "./config.js";
import {
  MAX_BODY_CHARS,
  MAX_REPLY_CHARS,
  enrichRequest,
  enrichmentContext,
  finalReplyText,
} from "./turn.js";

// A remembered inbound message is used only by the prompt build that follows it closely.
const INBOUND_TTL_MS = 120_000;
// Bounded memory however many sessions and turns the gateway serves.
const MAX_REMEMBERED = 512;
const MAX_OUTCOMES = 64; // an outcome holds the envelopes of a turn: up to a few 100 KB
// The host's wait for our handler ends a little after our own bound, never before it.
const HOOK_MARGIN_MS = 1_000;

/**
 * @typedef {object} HostLogger
 * @property {(message: string) => void} info
 * @property {(message: string) => void} warn
 * @property {(message: string) => void} [debug]
 *
 * @typedef {object} PluginApi the part of OpenClaw's plugin API this plugin uses
 * @property {unknown} [pluginConfig]
 * @property {HostLogger} logger
 * @property {(hook: any, handler: (event: any, ctx: any) => any, options?: { timeoutMs?: number }) => void} on
 *   `hook` is one of OpenClaw's typed hook names
 *
 * @typedef {object} Dependencies
 * @property {typeof fetch} [fetchImpl]
 * @property {() => number} [now]
 */

/**
 * Register the hooks on `api`; with an invalid config, log why and register nothing.
 * @param {PluginApi} api
 * @param {Dependencies} [dependencies]
 * @returns {boolean} whether the hooks were registered
 */
export function registerBridge(api, { fetchImpl = fetch, now = Date.now } = {}) {
  const resolved = resolveConfig(api.pluginConfig);
  if (!resolved.ok) {
    api.logger.warn(`${PLUGIN_ID}: not active: ${resolved.problem}`);
    return false;
  }
  const config = resolved.config;
  const inbound = new BoundedMap(MAX_REMEMBERED);
  const enrichments = new BoundedMap(MAX_OUTCOMES);
  const replyTargets = new BoundedMap(MAX_REMEMBERED);
  const storedRuns = new BoundedMap(MAX_REMEMBERED);
  /** @param {string} message */
  const warn = (message) => api.logger.warn(`${PLUGIN_ID}: ${message}`);

  /** @param {{ agentId?: string, sessionKey?: string, trigger?: string }} ctx */
  const serves = (ctx) => {
    // Heartbeats and cron wakes are the gateway talking to itself, not a user's message.
    if (ctx.trigger && ctx.trigger !== "user") return false;
    if (!config.agents) return true;
    const agentId = ctx.agentId || /^agent:([^:]+):/.exec(ctx.sessionKey ?? "")?.[1];
    return Boolean(agentId && config.agents.has(agentId));
  };

  if (config.enrich) {
    api.on("message_received", (event, ctx) => {
      const sessionKey = event?.sessionKey ?? ctx?.sessionKey;
      if (!sessionKey) return;
      inbound.set(sessionKey, {
        at: now(),
        runId: event.runId ?? ctx?.runId,
        messageId: event.messageId ?? ctx?.messageId,
        channel: ctx?.channelId,
        chatType: typeof event.metadata?.chatType === "string" ? event.metadata.chatType : undefined,
        media: event.media ?? event.originalMedia,
      });
    });

    api.on(
      "before_prompt_build",
      async (event, ctx) => {
        ctx = ctx ?? {};
        if (!serves(ctx)) return undefined;
        const body = turnBody(event);
        if (body.length > MAX_BODY_CHARS) {
          warn(`turn not enriched: message longer than ${MAX_BODY_CHARS} characters`);
          return undefined;
        }
        const remembered = takeInbound(inbound, ctx, now());
        const replyKey = ctx.runId ?? ctx.sessionKey;
        if (remembered?.messageId && replyKey) {
          // The reply of this run answers that message ([[reply_to_current]]).
          replyTargets.set(replyKey, remembered.messageId);
        }
        // A prompt rebuilt for the same run (retry, compaction) reuses the first answer:
        // one turn, one run in the decision log.
        const key = ctx.runId ? `run:${ctx.runId}` : `turn:${ctx.sessionKey}\n${body}`;
        const started = now();
        let earlier = enrichments.get(key);
        if (!earlier || started - earlier.at > INBOUND_TTL_MS) {
          const request = enrichRequest({
            body,
            sessionKey: ctx.sessionKey,
            agentId: ctx.agentId,
            channel: ctx.channel ?? ctx.messageProvider ?? remembered?.channel,
            chatType: remembered?.chatType,
            messageId: remembered?.messageId,
            media: remembered?.media,
          });
          earlier = { at: started, outcome: enrich(config, request, body, fetchImpl) };
          enrichments.set(key, earlier);
        }
        const outcome = await earlier.outcome;
        if ("reason" in outcome) {
          // How long this turn waited: what an operator weighs against timeoutMs.
          const waited = Math.round(now() - started);
          warn(
            `turn not enriched after ${waited} ms (${outcome.reason}); session ${ctx.sessionKey ?? "unknown"}`,
          );
          return undefined;
        }
        const context = outcome.context;
        return context ? { appendContext: context } : undefined;
      },
      { timeoutMs: config.timeoutMs + HOOK_MARGIN_MS },
    );
  }

  if (config.storeReplies) {
    api.on("agent_end", async (event, ctx) => {
      ctx = ctx ?? {};
      if (!event?.success || !serves(ctx)) return;
      const runKey = event.runId ?? ctx.runId;
      if (runKey && storedRuns.has(runKey)) return;
      const text = finalReplyText(event.messages);
      if (!text) return;
      if (text.length > MAX_REPLY_CHARS) {
        warn(`reply not stored: longer than ${MAX_REPLY_CHARS} characters`);
        return;
      }
      if (runKey) storedRuns.set(runKey, true);
      /** @type {Record<string, unknown>} */
      const payload = { text, store: true };
      if (ctx.sessionKey && ctx.sessionKey.length <= 300) payload.sessionKey = ctx.sessionKey;
      const replyKey = runKey ?? ctx.sessionKey;
      const current = replyKey ? replyTargets.get(replyKey) : undefined;
      if (typeof current === "string" && current.length <= 256) payload.currentMessageId = current;
      const result = await postJson({ config, path: "/api/render", payload, fetchImpl });
      if (!result.ok) {
        warn(`reply not stored (${result.reason}); session ${ctx.sessionKey ?? "unknown"}`);
      }
    });
  }
  return true;
}

/**
 * Ask Control UI to enrich one turn; what the agent gets (only the appended part, so a
 * remembered outcome stays small) or why it gets nothing.
 * @param {import("./config.js").BridgeConfig} config
 * @param {Record<string, unknown>} request
 * @param {string} body
 * @param {typeof fetch} fetchImpl
 * @returns {Promise<{ context: string } | { reason: string }>}
 */
async function enrich(config, request, body, fetchImpl) {
  const result = await postJson({ config, path: "/api/enrich", payload: request, fetchImpl });
  if (!result.ok) return { reason: result.reason };
  if (typeof result.data.body !== "string") return { reason: "the answer has no body" };
  return { context: enrichmentContext(body, result.data.body) };
}

/**
 * The user's text of this turn: the request itself when the runtime gives it apart from
 * the history it rebuilt into `prompt`.
 * @param {{ prompt?: unknown, currentUserMessage?: unknown }} event
 */
function turnBody(event) {
  if (typeof event?.currentUserMessage === "string") return event.currentUserMessage;
  return typeof event?.prompt === "string" ? event.prompt : "";
}

/**
 * The inbound message remembered for this session, once, when it belongs to this turn
 * (same run id when both sides have one; recent otherwise).
 * @param {BoundedMap} inbound
 * @param {{ sessionKey?: string, runId?: string }} ctx
 * @param {number} at
 */
function takeInbound(inbound, ctx, at) {
  if (!ctx.sessionKey) return undefined;
  const remembered = inbound.get(ctx.sessionKey);
  if (!remembered) return undefined;
  inbound.delete(ctx.sessionKey);
  if (at - remembered.at > INBOUND_TTL_MS) return undefined;
  if (remembered.runId && ctx.runId && remembered.runId !== ctx.runId) return undefined;
  return remembered;
}

/** A Map that forgets its oldest entry past `limit` entries. */
class BoundedMap extends Map {
  /** @param {number} limit */
  constructor(limit) {
    super();
    this.limit = limit;
  }

  /** @param {any} key @param {any} value */
  set(key, value) {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.limit) this.delete(this.keys().next().value);
    return this;
  }
}
