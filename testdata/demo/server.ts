/**
 * The demo stdio MCP server used by `deno task demo`: no SDK, no network, one tool.
 */

const enc = new TextEncoder();
function send(msg: unknown): void {
  Deno.stdout.writeSync(enc.encode(JSON.stringify(msg) + "\n"));
}

function handle(msg: { id?: number | string; method?: string; params?: Record<string, unknown> }) {
  if (msg.id === undefined || msg.method === undefined) return;
  switch (msg.method) {
    case "initialize":
      return send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "demo", version: "1.0.0" },
        },
      });
    case "tools/list":
      return send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          tools: [{
            name: "greet",
            title: "Greet",
            description: "Says hello to someone",
            inputSchema: {
              type: "object",
              properties: { name: { type: "string", description: "who to greet" } },
              required: ["name"],
            },
          }],
        },
      });
    case "tools/call": {
      const args = (msg.params?.arguments ?? {}) as { name?: string };
      return send({
        jsonrpc: "2.0",
        id: msg.id,
        result: { content: [{ type: "text", text: `Hello, ${args.name}!` }] },
      });
    }
    case "ping":
      return send({ jsonrpc: "2.0", id: msg.id, result: {} });
    default:
      return send({
        jsonrpc: "2.0",
        id: msg.id,
        error: { code: -32601, message: "Method not found" },
      });
  }
}

const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (line) handle(JSON.parse(line));
  }
}
