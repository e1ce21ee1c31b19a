/**
 * A scriptable stdio MCP server for tests (no SDK). Behaviour is chosen by flags:
 *
 *   --mode normal | exit-at-start | never-init | oversize | bad-version | noisy | hang-call
 *   --tools N            advertise N extra tools (tool_0…)
 *   --record FILE        append every received message to FILE (JSON lines)
 *   --stderr TEXT        write TEXT to stderr at start
 *   --pidfile FILE       append this process's pid to FILE (tests check none is left)
 *   --odd-schemas        add tools `looping` ($ref cycle) and `elsewhere` (external $ref)
 *
 * Tools: echo(message: string), add(a: number, b: number), fail (isError), broken
 * (JSON-RPC error), slow(ms),
 * typed(text: string, count: integer, flag: boolean, list: string[], obj: object).
 */

const args = Deno.args;
function flag(name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
const mode = flag("mode") ?? "normal";
const record = flag("record");
const extra = Number(flag("tools") ?? "0");
const enc = new TextEncoder();

const pidfile = flag("pidfile");
if (pidfile) Deno.writeTextFileSync(pidfile, `${Deno.pid}\n`, { append: true });
if (flag("stderr")) await Deno.stderr.write(enc.encode(flag("stderr") + "\n"));
if (mode === "exit-at-start") {
  await Deno.stderr.write(enc.encode("fixture: fatal: cannot open database\n"));
  Deno.exit(7);
}

function send(msg: unknown): void {
  Deno.stdout.writeSync(enc.encode(JSON.stringify(msg) + "\n"));
}

const tools = [
  {
    name: "echo",
    title: "Echo",
    description: "Echoes the message back",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
  },
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
  { name: "fail", description: "Always fails", inputSchema: { type: "object" } },
  { name: "broken", description: "Answers with a JSON-RPC error", inputSchema: { type: "object" } },
  {
    name: "slow",
    description: "Waits, reporting progress",
    inputSchema: { type: "object", properties: { ms: { type: "integer" } } },
  },
  {
    name: "typed",
    description: "Returns its arguments as structured content",
    inputSchema: {
      type: "object",
      properties: {
        text: { type: "string" },
        count: { type: "integer" },
        flag: { type: "boolean" },
        list: { type: "array", items: { type: "string" } },
        obj: { type: "object" },
      },
    },
  },
  ...Array.from({ length: extra }, (_, i) => ({
    name: `tool_${i}`,
    description: `Extra tool ${i}`,
    inputSchema: { type: "object" },
  })),
];

// --odd-schemas: two more tools whose schemas the border guard must drop.
const oddTools = [
  {
    name: "looping",
    description: "Its input schema is a $ref cycle",
    inputSchema: {
      type: "object",
      $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
      properties: { x: { $ref: "#/$defs/a" } },
    },
  },
  {
    name: "elsewhere",
    description: "Its input schema refers to another document",
    inputSchema: { type: "object", properties: { x: { $ref: "https://example.com/x.json" } } },
    outputSchema: { type: "string" },
  },
];
if (args.includes("--odd-schemas")) tools.push(...(oddTools as unknown as typeof tools));

async function handle(msg: Record<string, unknown>): Promise<void> {
  if (record) {
    await Deno.writeTextFile(record, JSON.stringify(msg) + "\n", { append: true });
  }
  const id = msg.id;
  const method = msg.method as string | undefined;
  const params = (msg.params ?? {}) as Record<string, unknown>;
  if (method === undefined) return;
  if (id === undefined) return; // notification
  if (method === "initialize") {
    if (mode === "never-init") return;
    if (mode === "oversize") {
      send({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { data: "x".repeat(2_000_000) },
      });
    }
    if (mode === "noisy") {
      Deno.stdout.writeSync(enc.encode("this is a log line, not JSON\n"));
    }
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: mode === "bad-version" ? "1999-01-01" : "2025-11-25",
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: "fixture", version: "1.0.0" },
      },
    });
    return;
  }
  if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools } });
    return;
  }
  if (method === "tools/call") {
    const name = params.name as string;
    const a = (params.arguments ?? {}) as Record<string, unknown>;
    if (mode === "hang-call") return;
    if (name === "echo") {
      send({
        jsonrpc: "2.0",
        id,
        result: { content: [{ type: "text", text: String(a.message) }] },
      });
    } else if (name === "add") {
      const sum = Number(a.a) + Number(a.b);
      send({
        jsonrpc: "2.0",
        id,
        result: { content: [{ type: "text", text: String(sum) }], structuredContent: { sum } },
      });
    } else if (name === "fail") {
      send({
        jsonrpc: "2.0",
        id,
        result: { isError: true, content: [{ type: "text", text: "it failed" }] },
      });
    } else if (name === "broken") {
      send({ jsonrpc: "2.0", id, error: { code: -32000, message: "database is down" } });
    } else if (name === "slow") {
      const ms = Number(a.ms ?? 1000);
      const token = (params._meta as Record<string, unknown> | undefined)?.progressToken;
      const steps = 5;
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, ms / steps));
        if (token !== undefined) {
          send({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } });
    } else if (name === "typed") {
      send({ jsonrpc: "2.0", id, result: { content: [], structuredContent: a } });
    } else {
      send({ jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${name}` } });
    }
    return;
  }
  if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
    return;
  }
  send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
}

const decoder = new TextDecoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line.trim()) void handle(JSON.parse(line));
  }
}
