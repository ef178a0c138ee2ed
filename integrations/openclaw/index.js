// @ts-check
/**
 * OpenClaw plugin entry: Control UI enriches each inbound turn and stores each reply.
 * The host resolves `openclaw/plugin-sdk/*`; everything else lives in ./src (tested alone).
 */
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { PLUGIN_ID } from "./src/config.js";
import { registerBridge } from "./src/plugin.js";

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "Control UI bridge",
  description:
    "Sends each inbound turn to Control UI for link and media enrichment, gives the agent " +
    "what it appended, and stores each assistant reply there as rich output.",
  register(api) {
    registerBridge(api);
  },
});
