/**
 * A deliberately careless or malicious stdio MCP server, one behaviour per `--mode`, for
 * the reliability and security battery (`tests/e2e/hostile_stdio_test.ts`). No SDK: every
 * byte it writes is chosen here.
 *
 *   --mode MODE      the behaviour (see MODES below); `normal` behaves
 *   --pidfile FILE   append this process's pid (and any grandchild's) to FILE
 *   --record FILE    append the method of every message received to FILE, one a line
 *
 * Outside its misbehaviour every mode answers `initialize`, `tools/list` (one tool,
 * `echo(text: string)`) and `tools/call` of `echo`, with the text `echo: <text>`.
 *
 * @module
 */

/** Every behaviour, with what it does. */
export const MODES = {
  "normal": "behaves",
  "exit-now": "writes a fatal line to stderr and exits with code 9 before reading anything",
  "exit-mid-call": "answers initialize and tools/list, then dies (exit code 1) on tools/call",
  "never-init": "reads initialize and never answers",
  "bad-version": "answers initialize with protocol version 1999-01-01",
  "stdout-logs": "writes plain log lines and non-message JSON to stdout among the messages",
  "huge-line": "answers tools/call with a single 2 MiB line",
  "stderr-flood": "writes 50 MB to stderr (one line of 1 MiB among them) before answering a call",
  "immortal": "ignores the end of stdin and SIGTERM; only SIGKILL ends it",
  "immortal-family": "like immortal, with a grandchild in its process group, and never " +
    "answers tools/call",
  "grandchild": "starts a grandchild (same process group) that keeps stdout open after it exits",
  "grandchild-escaped": "starts a grandchild in its own session that keeps stdout open",
  "unknown-id": "sends responses to ids that were never used before the real one",
  "duplicate-id": "answers tools/call twice with the same id (different texts)",
  "batch": "answers every request inside a JSON-RPC batch (an array) with a notification",
  "invalid-utf8": "sends a log line and then an answer to tools/call whose bytes are not " +
    "UTF-8 where JSON needs structure (the real answer comes after it)",
  "invalid-utf8-text": "answers tools/call with bytes that are not UTF-8 inside the text",
  "hostile-log": "sends log notifications whose logger, level and data hold escape " +
    "sequences, C1 controls and a bidi override before answering a call",
  "many-tools": "lists 10,000 tools in one page",
  "endless-pages": "pages tools/list forever, one tool and a fresh cursor per page",
  "bad-names": "lists tools with '__', overlong and duplicate names, and escape sequences",
  "ref-cycle": "lists a tool whose inputSchema has a $ref cycle",
  "server-requests": "sends requests mcpctl does not support before answering a call",
} as const;

/** A behaviour name. */
export type Mode = keyof typeof MODES;

const args = Deno.args;
function flag(name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
const mode = (flag("mode") ?? "normal") as Mode;
if (!(mode in MODES)) {
  console.error(`hostile: unknown mode ${mode}`);
  Deno.exit(64);
}
const pidfile = flag("pidfile");
const record = flag("record");
const enc = new TextEncoder();

function recordPid(pid: number): void {
  if (pidfile) Deno.writeTextFileSync(pidfile, `${pid}\n`, { append: true });
}
recordPid(Deno.pid);

function writeOut(bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}
function writeErr(text: string | Uint8Array): void {
  const bytes = typeof text === "string" ? enc.encode(text) : text;
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}
function send(message: unknown): void {
  writeOut(enc.encode(JSON.stringify(message) + "\n"));
}
function line(text: string): void {
  writeOut(enc.encode(text + "\n"));
}

if (mode === "exit-now") {
  writeErr("hostile: fatal: cannot open /etc/hostile.toml\n");
  Deno.exit(9);
}

if (mode === "never-init") writeErr("hostile: waiting for a license server that never answers\n");
if (mode === "bad-version") writeErr("hostile: speaking protocol 1999-01-01 only\n");
if (mode === "huge-line") writeErr("hostile: about to send a very long line\n");

if (mode === "immortal" || mode === "immortal-family") {
  // Neither SIGTERM nor the end of stdin ends this process.
  Deno.addSignalListener("SIGTERM", () => writeErr("hostile: ignoring SIGTERM\n"));
  setInterval(() => {}, 60_000);
}

if (mode === "grandchild" || mode === "grandchild-escaped" || mode === "immortal-family") {
  // The grandchild inherits stdout and stderr, so the pipes stay open after we exit.
  const grandchild = new Deno.Command("sleep", {
    args: ["60"],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
    detached: mode === "grandchild-escaped",
  }).spawn();
  recordPid(grandchild.pid);
  grandchild.unref();
}

const echoTool = {
  name: "echo",
  description: "Echoes its text",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
};

function toolsFor(params: Record<string, unknown>): Record<string, unknown> {
  switch (mode) {
    case "many-tools":
      // Compact, so that the page fits the default 1 MiB message limit.
      return {
        tools: Array.from({ length: 10_000 }, (_, i) => ({
          name: `tool_${String(i).padStart(5, "0")}`,
          description: `Generated tool ${i}`,
          inputSchema: { type: "object" },
        })),
      };
    case "endless-pages": {
      const page = Number(String(params.cursor ?? "page-0").slice(5));
      return {
        tools: [{ ...echoTool, name: page === 0 ? "echo" : `page_${page}` }],
        nextCursor: `page-${page + 1}`,
      };
    }
    case "bad-names":
      return {
        tools: [
          {
            ...echoTool,
            title: "\x1b]0;pwned window title\x07Echo",
            description: "Red \x1b[31malert\x1b[0m, clear \x1b[2J, link " +
              "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07, C1 \x9b31m, bell \x07, " +
              "bidi \u202etxt.exe\u202c",
          },
          { ...echoTool, name: "a__b", description: "double underscore" },
          { ...echoTool, name: "x".repeat(70), description: "too long for a route" },
          { ...echoTool, name: "dup", description: "first of two" },
          { ...echoTool, name: "dup", description: "second of two" },
          { ...echoTool, name: "evil\x1b[2Jname", description: "escape in the name" },
        ],
      };
    case "ref-cycle":
      return {
        tools: [echoTool, {
          name: "loop",
          description: "Its schema refers to itself without end",
          inputSchema: {
            type: "object",
            properties: { node: { $ref: "#/$defs/a" } },
            $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } },
          },
        }],
      };
    default:
      return { tools: [echoTool] };
  }
}

// Requests this server sent, waiting for the client's answer.
const waiting = new Map<string, (reply: Record<string, unknown>) => void>();

function ask(id: string, method: string, params: Record<string, unknown> = {}) {
  return new Promise<Record<string, unknown>>((resolve) => {
    waiting.set(id, resolve);
    send({ jsonrpc: "2.0", id, method, params });
  });
}

function answer(id: unknown, result: unknown): void {
  if (mode === "batch") {
    send([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "b" } },
      { jsonrpc: "2.0", id, result },
    ]);
  } else {
    send({ jsonrpc: "2.0", id, result });
  }
}

function text(value: string) {
  return { content: [{ type: "text", text: value }] };
}

async function handle(msg: Record<string, unknown>): Promise<void> {
  const id = msg.id;
  const method = msg.method;
  if (record) Deno.writeTextFileSync(record, `${String(method)}\n`, { append: true });
  if (typeof method !== "string") {
    // A response to one of our own requests.
    if (typeof id === "string") waiting.get(id)?.(msg);
    return;
  }
  if (id === undefined) return; // a notification
  const params = (msg.params ?? {}) as Record<string, unknown>;
  if (mode === "stdout-logs") {
    line("INFO hostile server handling " + method);
    line("42");
    line('"a JSON string"');
    line('{"level":"debug","msg":"a structured log line, not JSON-RPC"}');
    line("");
    line("[WARN] almost done\r");
  }
  switch (method) {
    case "initialize":
      if (mode === "never-init") return;
      answer(id, {
        protocolVersion: mode === "bad-version" ? "1999-01-01" : "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "6.6.6" },
      });
      return;
    case "tools/list":
      answer(id, toolsFor(params));
      return;
    case "ping":
      answer(id, {});
      return;
    case "tools/call":
      return await call(id, params);
    default:
      send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no ${method}` } });
  }
}

async function call(id: unknown, params: Record<string, unknown>): Promise<void> {
  const argsIn = (params.arguments ?? {}) as Record<string, unknown>;
  const reply = `echo: ${String(argsIn.text ?? JSON.stringify(argsIn))}`;
  switch (mode) {
    case "immortal-family":
      writeErr("hostile: hanging in tools/call\n");
      return;
    case "exit-mid-call":
      writeErr("hostile: segmentation fault while calling echo\n");
      Deno.exit(1);
      break;
    case "huge-line":
      answer(id, text("y".repeat(2 * 1024 * 1024)));
      return;
    case "stderr-flood": {
      const row = enc.encode("hostile: noise " + "n".repeat(1000) + "\n");
      const block = new Uint8Array(row.length * 64);
      for (let i = 0; i < 64; i++) block.set(row, i * row.length);
      let written = 0;
      for (; written < 25_000_000; written += block.length) writeErr(block);
      // One line of 1 MiB, far over the stderr line limit, in the middle of the flood.
      writeErr("z".repeat(1024 * 1024) + "\n");
      for (; written < 50_000_000; written += block.length) writeErr(block);
      writeErr("hostile: flood over\n");
      answer(id, text(reply));
      return;
    }
    case "unknown-id":
      send({ jsonrpc: "2.0", id: 987654, result: text("answer to nothing") });
      send({ jsonrpc: "2.0", id: "never-sent", error: { code: -32000, message: "nope" } });
      send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      answer(id, text(reply));
      return;
    case "duplicate-id":
      answer(id, text(reply));
      answer(id, text("a second answer that must be ignored"));
      send({ jsonrpc: "2.0", id, error: { code: -32000, message: "and a late error" } });
      return;
    case "invalid-utf8": {
      const bad = [0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80];
      writeOut(new Uint8Array([...enc.encode("LOG "), ...bad, 0x0a]));
      writeOut(
        new Uint8Array([
          ...enc.encode(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`),
          ...bad,
          ...enc.encode(`{"content":[{"type":"text","text":"bad"}]}}\n`),
        ]),
      );
      answer(id, text(reply));
      return;
    }
    case "invalid-utf8-text": {
      const [head, tail] = JSON.stringify({ jsonrpc: "2.0", id, result: text(`${reply} [@]`) })
        .split("@") as [string, string];
      writeOut(
        new Uint8Array([...enc.encode(head), 0xff, 0xc3, 0x28, ...enc.encode(tail), 0x0a]),
      );
      return;
    }
    case "hostile-log":
      send({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: {
          level: "error\x1b]0;pwned-title\x07\x1b[2J",
          logger: "db\x9b31m\u202etxt.exe\x1b[3A\r",
          data: "data\x1b[1A\x07 here",
        },
      });
      send({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", logger: "x", data: { nested: "\x1b[31mred\x9b2J" } },
      });
      answer(id, text(reply));
      return;
    case "server-requests": {
      const replies = await Promise.all([
        ask("srv-sampling", "sampling/createMessage", { messages: [], maxTokens: 5 }),
        ask("srv-bogus", "hostile/doSomethingOdd", { x: 1 }),
        ask("srv-ping", "ping"),
      ]);
      const summary = replies.map((r) => {
        const error = r.error as { code?: number } | undefined;
        return `${String(r.id)}=${error ? String(error.code) : "ok"}`;
      });
      answer(id, text(`${reply} | ${summary.join(" ")}`));
      return;
    }
  }
  answer(id, text(reply));
}

const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
    const text = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (text.trim()) void handle(JSON.parse(text));
  }
}
// stdin ended: a well-behaved server stops here; the immortal one does not.
if (mode !== "immortal" && mode !== "immortal-family") Deno.exit(0);
writeErr("hostile: stdin closed, staying alive\n");
