/**
 * Floor: the smallest honest Streamable HTTP MCP server. `Deno.serve` on 127.0.0.1, an
 * ephemeral port, stateless (no session id), JSON responses (never SSE). POST a request:
 * 200 with the JSON-RPC response; POST a notification or response: 202; GET and DELETE:
 * 405 (the spec allows a server without a standalone stream or sessions to refuse them).
 * Prints its URL as the first line on stdout, then serves until killed.
 *
 * Run: `deno run -q --no-config --allow-net=127.0.0.1 bench/floors/min_http_server.ts`
 *
 * @module
 */

import { answer } from "./min_server.ts";

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

async function handle(req: Request): Promise<Response> {
  if (req.method !== "POST") {
    await req.body?.cancel();
    return new Response(null, { status: 405, headers: { allow: "POST" } });
  }
  let msg: unknown;
  try {
    msg = JSON.parse(await req.text());
  } catch {
    return json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }, 400);
  }
  if (Array.isArray(msg)) {
    const replies = msg.map(answer).filter((r) => r !== undefined);
    return replies.length ? json(replies) : new Response(null, { status: 202 });
  }
  const reply = answer(msg);
  return reply ? json(reply) : new Response(null, { status: 202 });
}

if (import.meta.main) {
  Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ hostname, port }) => console.log(`http://${hostname}:${port}/mcp`),
  }, handle);
}
