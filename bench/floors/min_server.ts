/**
 * Floor: the smallest honest stdio MCP server. Plain Deno, no SDK, no imports, no
 * permissions. Reads newline-delimited JSON-RPC from stdin, answers `initialize`,
 * `tools/list`, `tools/call` of its one tool `echo`, and `ping`; ignores notifications;
 * exits when stdin ends.
 *
 * Run: `deno run -q --no-config bench/floors/min_server.ts`
 *
 * The HTTP floor server imports {@linkcode answer} so both floors speak the same protocol.
 *
 * @module
 */

/** The one tool. */
export const ECHO_TOOL = {
  name: "echo",
  description: "Returns its message.",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
};

// deno-lint-ignore no-explicit-any
type Message = any;

/**
 * The reply to one JSON-RPC message, or `undefined` for a notification or a response.
 *
 * @example
 * ```ts
 * import { answer } from "./min_server.ts";
 * const reply = answer({ jsonrpc: "2.0", id: 1, method: "ping" });
 * console.log(reply); // { jsonrpc: "2.0", id: 1, result: {} }
 * ```
 */
export function answer(msg: Message): Record<string, unknown> | undefined {
  if (msg === null || typeof msg !== "object" || typeof msg.method !== "string") return undefined;
  if (msg.id === undefined || msg.id === null) return undefined;
  const id = msg.id;
  switch (msg.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "min-server", version: "1.0.0" },
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return { jsonrpc: "2.0", id, result: { tools: [ECHO_TOOL] } };
    case "tools/call": {
      if (msg.params?.name !== "echo") {
        return { jsonrpc: "2.0", id, error: { code: -32602, message: "unknown tool" } };
      }
      const text = String(msg.params?.arguments?.message ?? "");
      return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } };
    }
    default:
      return { jsonrpc: "2.0", id, error: { code: -32601, message: "method not found" } };
  }
}

async function serveStdio(): Promise<void> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(65536);
  let pending = "";
  while (true) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) break;
    pending += decoder.decode(buffer.subarray(0, n), { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line === "") continue;
      let reply: Record<string, unknown> | undefined;
      try {
        reply = answer(JSON.parse(line));
      } catch {
        reply = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } };
      }
      if (reply) {
        const bytes = encoder.encode(JSON.stringify(reply) + "\n");
        let off = 0;
        while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
      }
    }
  }
}

if (import.meta.main) await serveStdio();
