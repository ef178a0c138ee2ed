// @ts-check
/** A stand-in for Control UI on 127.0.0.1: records each request, answers as a test says. */
import { createServer } from "node:http";

/**
 * @typedef {{ method: string, url: string, headers: import("node:http").IncomingHttpHeaders, body: any }} Recorded
 * @typedef {(request: Recorded, response: import("node:http").ServerResponse) => void | Promise<void>} Answer
 */

/** @param {Answer} answer */
export async function startFakeControlUi(answer) {
  /** @type {Recorded[]} */
  const requests = [];
  /** @type {Set<import("node:net").Socket>} */
  const sockets = new Set();
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const recorded = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body };
    requests.push(recorded);
    await answer(recorded, response);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    requests,
    async close() {
      // A slow answer still pending must not keep the test process alive.
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/**
 * @param {import("node:http").ServerResponse} response
 * @param {number} status
 * @param {unknown} body
 */
export function sendJson(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  response.end(text);
}

/** A port nothing listens on: bound, then released. */
export async function closedPortUrl() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return `http://127.0.0.1:${address.port}`;
}
