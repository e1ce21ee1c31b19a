/**
 * A small scripted Streamable HTTP MCP server for tests (loopback only).
 *
 * Behaviour is chosen per server (options) and per call: `tools/call` of these tools
 * triggers a scenario:
 * - `echo` `{text}`: plain answer (JSON or SSE according to `mode`).
 * - `notify`: SSE answer with a server request (`ping`, id `srv-1`) and a
 *   `notifications/message` before the response.
 * - `batch`: JSON array answer `[notification, response]`.
 * - `cut`: SSE priming event (`id`, `retry: retryMs`), stream closed 50 ms later; a GET
 *   with that `Last-Event-ID` then receives the response (and stays open).
 * - `cut_forever`: like `cut` but resumed streams never deliver the response.
 * - `cut_no_id`: SSE stream closed without any event id.
 * - `never`: never answers (the request is held until the client goes away).
 * - `html500`: HTTP 500 with an HTML page.
 * - `leak500`: HTTP 500 whose body repeats every request header, values included.
 * - `wrong_type`: HTTP 200 `text/plain`.
 * - `huge` `{bytes}`: JSON answer of about that size; `huge_sse` the same as SSE.
 * - `echo_headers`: answers with the request headers it saw (names only).
 * - `elicit` `{schema?, message?}`: SSE answer that first sends `elicitation/create` (id
 *   `elicit-N`, a form with defaults unless `schema` is given), waits for the client's
 *   reply POST, then answers with that reply's `result` as JSON text.
 *
 * Session expiry mid-command: with `expireAfterRequests: N` the first session serves N
 * POSTs after `initialize`; the next POST carrying it gets 404 (later sessions live on).
 *
 * A stream the client cancels (e.g. `never` in SSE mode) is recorded in `events` as
 * `stream-cancelled`. (Held JSON requests are not watched: any use of `request.signal`
 * makes Deno.serve print a legacy-abort warning.)
 *
 * Run standalone: `deno run -A testdata/http/streamable_server.ts [--mode sse]
 * [--get-stream sse|405|...] [--no-sessions] [--bearer TOKEN] [--expire-after N]
 * [--port N]`; the first line on stdout is the endpoint URL.
 *
 * @module
 */

/** A JSON-RPC id. */
export type Id = string | number;

/** Options of {@linkcode startStreamableServer}. */
export interface StreamableServerOptions {
  /** How requests are answered: one JSON object (default) or an SSE stream. */
  mode?: "json" | "sse";
  /** Issue `Mcp-Session-Id` on initialize and require it afterwards (default true). */
  sessions?: boolean;
  /** The GET stream: an HTTP status to refuse with (default 405) or `"sse"` to serve one. */
  getStream?: number | "sse";
  /** Require `Authorization: Bearer <token>`; anything else gets 401. */
  bearerToken?: string;
  /** The `WWW-Authenticate` value sent with 401 (default a Bearer challenge). */
  wwwAuthenticate?: string;
  /** The `retry` value of the cut scenarios, in ms (default 500). */
  retryMs?: number;
  /** Path of the MCP endpoint (default `/mcp`). */
  path?: string;
  /** Extra paths answered with a 307 redirect: path → Location. */
  redirects?: Record<string, string>;
  /** Status answered to DELETE (default 200 with sessions, 405 without). */
  deleteStatus?: number;
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Expire the first session once it has served this many POSTs after initialize. */
  expireAfterRequests?: number;
}

/** One request the server received. */
export interface RecordedRequest {
  /** HTTP method. */
  method: string;
  /** Request path (no query). */
  path: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body (POST), if any. */
  body: unknown;
  /** The JSON-RPC method, if the body had one. */
  rpcMethod: string | undefined;
  /** `performance.now()` at arrival. */
  at: number;
}

/** A running fixture server. */
export interface StreamableServer {
  /** The MCP endpoint URL. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Named moments (e.g. `cut-closed`) with `performance.now()` times. */
  events: { name: string; at: number }[];
  /** Makes every current session unknown: later requests carrying it get 404. */
  expireSessions(): void;
  /** Changes the accepted bearer token. */
  setBearerToken(token: string): void;
  /** Closes every open stream and held request, then stops the server. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** `tools/list` of this server: `echo` and every scenario tool (any arguments). */
export const SCENARIO_TOOLS: { name: string; inputSchema: Record<string, unknown> }[] = [
  { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  ...[
    "notify",
    "batch",
    "cut",
    "cut_forever",
    "cut_no_id",
    "never",
    "html500",
    "leak500",
    "wrong_type",
    "huge",
    "huge_sse",
    "echo_headers",
    "elicit",
  ].map((name) => ({ name, inputSchema: { type: "object" } })),
];

/**
 * Answers the plain MCP methods the fixtures share (unknown ones get -32601).
 * `initialize` answers `fixedVersion` when given, else the version asked for.
 */
export function answerRpc(
  message: { method: string; id?: Id; params?: Record<string, unknown> },
  fixedVersion?: string,
): unknown {
  const id = message.id;
  switch (message.method) {
    case "initialize": {
      const asked = message.params?.["protocolVersion"];
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: fixedVersion ?? (typeof asked === "string" ? asked : "2025-11-25"),
          capabilities: { tools: {} },
          serverInfo: { name: "fixture", version: "1.0.0" },
        },
      };
    }
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          tools: [{
            name: "echo",
            inputSchema: { type: "object", properties: { text: { type: "string" } } },
          }],
        },
      };
    case "tools/call": {
      const args = (message.params?.["arguments"] ?? {}) as Record<string, unknown>;
      return {
        jsonrpc: "2.0",
        id,
        result: { content: [{ type: "text", text: String(args["text"] ?? "") }] },
      };
    }
    default:
      return {
        jsonrpc: "2.0",
        id,
        error: { code: -32601, message: `Method not found: ${message.method}` },
      };
  }
}

function sseEvent(data: unknown, id?: string): string {
  return `${id !== undefined ? `id: ${id}\n` : ""}event: message\ndata: ${
    JSON.stringify(data)
  }\n\n`;
}

/** Starts the server on 127.0.0.1. */
export function startStreamableServer(
  options: StreamableServerOptions = {},
): Promise<StreamableServer> {
  const mode = options.mode ?? "json";
  const useSessions = options.sessions ?? true;
  const path = options.path ?? "/mcp";
  const retryMs = options.retryMs ?? 500;
  let token = options.bearerToken;
  const requests: RecordedRequest[] = [];
  const events: { name: string; at: number }[] = [];
  const liveSessions = new Set<string>();
  let sessionCounter = 0;
  let eventCounter = 0;
  // Open streams and held requests, ended on close().
  const closers = new Set<() => void>();
  // Responses waiting for a resuming GET, by the last event id they follow.
  const resumable = new Map<string, { response: unknown; deliver: boolean }>();
  // Server requests (elicitation) waiting for the client's reply, by id.
  const awaitingReply = new Map<Id, (reply: Record<string, unknown>) => void>();
  let elicitCounter = 0;
  // Requests served by the first session, for expireAfterRequests.
  let servedByFirst = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();

  // setTimeout that close() can cancel, so no timer outlives the server.
  function later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function stream(
    start: (push: (text: string) => void, end: () => void) => void,
    headers: Record<string, string> = {},
  ): Response {
    let closer: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          if (closer) closers.delete(closer);
          try {
            controller.close();
          } catch { /* cancelled */ }
        };
        closer = end;
        closers.add(end);
        start((text) => {
          if (ended) return;
          try {
            controller.enqueue(encoder.encode(text));
          } catch { /* cancelled */ }
        }, end);
      },
      cancel() {
        if (closer) closers.delete(closer);
        events.push({ name: "stream-cancelled", at: performance.now() });
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers },
    });
  }

  function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
    return new Response(JSON.stringify(data), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });
  }

  // Holds a request until close(); the client will have given up long before.
  function hold(): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        closers.delete(done);
        resolve(new Response("gone", { status: 503 }));
      };
      closers.add(done);
    });
  }

  function cut(response: unknown, deliver: boolean, withId: boolean): Response {
    return stream((push, end) => {
      if (withId) {
        const id = `e${++eventCounter}`;
        resumable.set(id, { response, deliver });
        push(`id: ${id}\nretry: ${retryMs}\ndata:\n\n`);
      } else {
        push(`: no id here\n\n`);
      }
      later(() => {
        events.push({ name: "cut-closed", at: performance.now() });
        end();
      }, 50);
    });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => headers[name] = value);
    let body: unknown = undefined;
    if (request.method === "POST") {
      const text = await request.text();
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const rpcMethod = body !== null && typeof body === "object" && "method" in body
      ? String(body.method)
      : undefined;
    requests.push({
      method: request.method,
      path: url.pathname,
      headers,
      body,
      rpcMethod,
      at: performance.now(),
    });

    const redirect = options.redirects?.[url.pathname];
    if (redirect !== undefined) {
      return new Response(null, { status: 307, headers: { location: redirect } });
    }
    if (url.pathname !== path) return new Response("not found", { status: 404 });

    if (token !== undefined && headers["authorization"] !== `Bearer ${token}`) {
      return new Response("unauthorized", {
        status: 401,
        headers: {
          "www-authenticate": options.wwwAuthenticate ??
            `Bearer realm="fixture", resource_metadata="${url.origin}/.well-known/oauth-protected-resource", scope="mcp:tools"`,
        },
      });
    }

    const session = headers["mcp-session-id"];
    const isInit = rpcMethod === "initialize";
    if (useSessions && !isInit) {
      if (session === undefined) return new Response("missing session", { status: 400 });
      if (
        options.expireAfterRequests !== undefined && request.method === "POST" &&
        session === "session-1" &&
        liveSessions.has(session) && servedByFirst++ >= options.expireAfterRequests
      ) {
        liveSessions.delete(session);
        events.push({ name: "expired", at: performance.now() });
      }
      if (!liveSessions.has(session)) return new Response("session not found", { status: 404 });
    }

    if (request.method === "DELETE") {
      if (session !== undefined) liveSessions.delete(session);
      return new Response(null, { status: options.deleteStatus ?? (useSessions ? 200 : 405) });
    }

    if (request.method === "GET") {
      const last = headers["last-event-id"];
      if (last !== undefined) {
        const pending = resumable.get(last);
        if (pending === undefined) return new Response("unknown event id", { status: 404 });
        resumable.delete(last);
        return stream((push, end) => {
          const id = `e${++eventCounter}`;
          if (pending.deliver) {
            push(sseEvent(pending.response, id));
          } else {
            resumable.set(id, pending);
            push(`id: ${id}\nretry: ${retryMs}\ndata:\n\n`);
            later(end, 20);
          }
        });
      }
      if (options.getStream !== "sse") {
        return new Response("no stream", { status: options.getStream ?? 405 });
      }
      return stream((push) => {
        push(`id: g${++eventCounter}\ndata:\n\n`);
        push(sseEvent({
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "hello from the GET stream" },
        }));
      });
    }

    if (request.method !== "POST") return new Response("no", { status: 405 });
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      return json(
        { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
        400,
      );
    }
    const message = body as { method?: string; id?: Id; params?: Record<string, unknown> };
    if (message.method === undefined && message.id !== undefined) {
      awaitingReply.get(message.id)?.(body as Record<string, unknown>);
      awaitingReply.delete(message.id);
    }
    if (message.method === undefined || message.id === undefined) {
      return new Response(null, { status: 202 }); // notification or response
    }
    const extra: Record<string, string> = {};
    if (isInit && useSessions) {
      const id = `session-${++sessionCounter}`;
      liveSessions.add(id);
      extra["mcp-session-id"] = id;
    }
    const rpc = message as { method: string; id: Id; params?: Record<string, unknown> };
    const answer = rpc.method === "tools/list"
      ? { jsonrpc: "2.0", id: rpc.id, result: { tools: SCENARIO_TOOLS } }
      : answerRpc(rpc);
    const tool = rpc.method === "tools/call" ? String(rpc.params?.["name"]) : "";
    const args = (rpc.params?.["arguments"] ?? {}) as Record<string, unknown>;
    switch (tool) {
      case "notify":
        return stream((push, end) => {
          push(sseEvent({ jsonrpc: "2.0", id: "srv-1", method: "ping" }));
          push(sseEvent({
            jsonrpc: "2.0",
            method: "notifications/message",
            params: { level: "info", data: "working" },
          }));
          push(sseEvent(answer));
          end();
        }, extra);
      case "batch":
        return json([{
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "batched" },
        }, answer]);
      case "cut":
        return cut(answer, true, true);
      case "cut_forever":
        return cut(answer, false, true);
      case "cut_no_id":
        return cut(answer, true, false);
      case "never":
        if (mode === "sse") {
          return stream((push) => push(`id: n${++eventCounter}\ndata:\n\n`));
        }
        return await hold();
      case "html500":
        return new Response(
          "<html>\n<head><title>500 Internal Server Error</title></head>\n" +
            "<body><h1>Internal Server Error</h1>\n</body></html>",
          { status: 500, headers: { "content-type": "text/html" } },
        );
      case "leak500":
        // A careless server that repeats every request header in its error page.
        return new Response(
          Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\n"),
          { status: 500, headers: { "content-type": "text/plain" } },
        );
      case "wrong_type":
        return new Response("hello", { headers: { "content-type": "text/plain" } });
      case "huge":
      case "huge_sse": {
        const big = {
          jsonrpc: "2.0",
          id: rpc.id,
          result: { content: [{ type: "text", text: "x".repeat(Number(args["bytes"] ?? 0)) }] },
        };
        if (tool === "huge") return json(big);
        return stream((push, end) => {
          push(sseEvent(big));
          end();
        });
      }
      case "elicit": {
        const id = `elicit-${++elicitCounter}`;
        const replied = new Promise<Record<string, unknown>>((resolve) =>
          awaitingReply.set(id, resolve)
        );
        return stream((push, end) => {
          push(sseEvent({
            jsonrpc: "2.0",
            id,
            method: "elicitation/create",
            params: {
              message: typeof args["message"] === "string" ? args["message"] : "Who are you?",
              requestedSchema: args["schema"] ?? {
                type: "object",
                properties: {
                  name: { type: "string", default: "Ada" },
                  age: { type: "integer", minimum: 0, default: 36 },
                },
                required: ["name"],
              },
            },
          }));
          replied.then((reply) => {
            push(sseEvent({
              jsonrpc: "2.0",
              id: rpc.id,
              result: {
                content: [{ type: "text", text: JSON.stringify(reply["result"] ?? reply) }],
              },
            }));
            end();
          });
        }, extra);
      }
      case "echo_headers":
        return json({
          jsonrpc: "2.0",
          id: rpc.id,
          result: { content: [{ type: "text", text: Object.keys(headers).sort().join(",") }] },
        });
    }
    if (mode === "sse") {
      return stream((push, end) => {
        push(sseEvent(answer, `e${++eventCounter}`));
        end();
      }, extra);
    }
    return json(answer, 200, extra);
  }

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen() {},
    }, handle);
    const url = `http://127.0.0.1:${server.addr.port}${path}`;
    resolve({
      url,
      requests,
      events,
      expireSessions() {
        liveSessions.clear();
      },
      setBearerToken(value) {
        token = value;
      },
      async close() {
        for (const timer of timers) clearTimeout(timer);
        for (const close of [...closers]) close();
        await server.shutdown();
      },
    });
  });
}

function parseCli(args: string[]): StreamableServerOptions {
  const options: StreamableServerOptions = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const next = () => args[++i] ?? "";
    if (arg === "--mode") options.mode = next() === "sse" ? "sse" : "json";
    else if (arg === "--get-stream") {
      const v = next();
      options.getStream = v === "sse" ? "sse" : Number(v);
    } else if (arg === "--no-sessions") options.sessions = false;
    else if (arg === "--bearer") options.bearerToken = next();
    else if (arg === "--retry-ms") options.retryMs = Number(next());
    else if (arg === "--port") options.port = Number(next());
    else if (arg === "--expire-after") options.expireAfterRequests = Number(next());
  }
  return options;
}

if (import.meta.main) {
  const server = await startStreamableServer(parseCli(Deno.args));
  console.log(server.url);
  const stop = () => server.close().then(() => Deno.exit(0));
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}
