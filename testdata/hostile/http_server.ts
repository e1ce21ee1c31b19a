/**
 * Careless or malicious HTTP MCP servers for the reliability and security battery
 * (`tests/e2e/hostile_http_test.ts`), loopback only, one behaviour per server.
 *
 * Outside its misbehaviour a server is a plain Streamable HTTP server at `/mcp`: it
 * issues `Mcp-Session-Id` on `initialize`, answers `tools/list` with one tool,
 * `echo(text)`, and `tools/call` with the text `echo: <text>`; notifications get 202, GET
 * gets 405 (no server stream), DELETE 200. The misbehaviour is applied to `tools/call`
 * unless said otherwise.
 *
 * @module
 */

/** Every behaviour, with what it does. */
export const BEHAVIOURS = {
  "normal": "behaves",
  "html-500": "answers tools/call with HTTP 500 and an HTML error page that echoes the " +
    "request's Authorization header",
  "wrong-content-type": "answers tools/call with HTTP 200 text/html",
  "cut-mid-event": "sends a priming event (id c1, retry 100), then half an event, and cuts the " +
    "stream; a GET with Last-Event-ID c1 gets the response",
  "cut-mid-event-no-id": "sends half an event and cuts the stream, with no event id to resume",
  "trickle": "answers tools/call with an SSE stream that sends one byte a second, forever",
  "redirect": "answers tools/call with a 307 to `redirectTo` (another origin)",
  "session-expires": "answers the first tools/call with 404, as for a session it forgot",
  "legacy-endpoint": "a legacy HTTP+SSE server at /sse whose endpoint event is `endpoint`",
  "unauthorized": "answers every request with 401 and `wwwAuthenticate` as WWW-Authenticate",
  "huge-json": "answers tools/call with a JSON body of `hugeBytes` bytes",
  "huge-sse": "answers tools/call with one SSE event of `hugeBytes` bytes",
} as const;

/** A behaviour name. */
export type Behaviour = keyof typeof BEHAVIOURS;

/** Options of {@linkcode startHostileHttp}. */
export interface HostileHttpOptions {
  /** Where `redirect` sends the client. */
  redirectTo?: string;
  /** The data of the `endpoint` event of `legacy-endpoint`. */
  endpoint?: string;
  /** The WWW-Authenticate value of `unauthorized` (omitted when undefined). */
  wwwAuthenticate?: string;
  /** Size of the `huge-*` answers (default 100,000). */
  hugeBytes?: number;
}

/** One request the server saw. */
export interface SeenRequest {
  method: string;
  path: string;
  /** The query string, `?` included (empty when none). */
  search: string;
  /** The body of a POST, as text (empty otherwise). */
  body: string;
  /** Headers, lower-case names. */
  headers: Record<string, string>;
  /** The JSON-RPC method of a POST, if any. */
  rpcMethod: string | undefined;
}

/** A running hostile server. */
export interface HostileHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:1234`. */
  origin: string;
  /** The MCP endpoint (`/mcp`, or `/sse` for `legacy-endpoint`). */
  url: string;
  /** Every request seen, in order. */
  requests: SeenRequest[];
  /** Ends every open stream and timer, then stops the server. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function event(message: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Starts one server on 127.0.0.1 with a free port. */
export function startHostileHttp(
  behaviour: Behaviour,
  options: HostileHttpOptions = {},
): HostileHttpServer {
  const requests: SeenRequest[] = [];
  // Open streams and timers, all ended by close().
  const closers = new Set<() => void>();
  let sessions = 0;
  const live = new Set<string>();
  let expired = false;
  // The response a resuming GET gets (cut-mid-event).
  let resumable: { lastEventId: string; message: unknown } | undefined;

  function stream(start: (push: (text: string) => void, end: () => void) => void): Response {
    let stop = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          closers.delete(end);
          try {
            controller.close();
          } catch { /* cancelled by the client */ }
        };
        stop = end;
        closers.add(end);
        start((text) => {
          if (ended) return;
          try {
            controller.enqueue(encoder.encode(text));
          } catch { /* cancelled by the client */ }
        }, end);
      },
      cancel() {
        stop();
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }

  function every(ms: number, fn: () => void): () => void {
    const timer = setInterval(fn, ms);
    const clear = () => {
      clearInterval(timer);
      closers.delete(clear);
    };
    closers.add(clear);
    return clear;
  }

  function legacy(request: Request, url: URL): Response {
    if (url.pathname === "/sse" && request.method === "GET") {
      return stream((push) =>
        push(`event: endpoint\ndata: ${options.endpoint ?? "/messages"}\n\n`)
      );
    }
    // A Streamable HTTP attempt, or anything else: the 2024-11-05 server does not know it.
    return new Response("Method Not Allowed", { status: 405 });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => headers[name] = value);
    let body: Record<string, unknown> | undefined;
    const bodyText = request.method === "POST" ? await request.text() : "";
    if (request.method === "POST") {
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
    }
    const rpcMethod = typeof body?.method === "string" ? body.method : undefined;
    requests.push({
      method: request.method,
      path: url.pathname,
      search: url.search,
      headers,
      body: bodyText,
      rpcMethod,
    });

    if (behaviour === "legacy-endpoint") return legacy(request, url);
    if (behaviour === "unauthorized") {
      const challenge: Record<string, string> = options.wwwAuthenticate === undefined
        ? {}
        : { "www-authenticate": options.wwwAuthenticate };
      return new Response("unauthorized", { status: 401, headers: challenge });
    }
    if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });

    if (request.method === "GET") {
      const last = headers["last-event-id"];
      if (resumable !== undefined && last === resumable.lastEventId) {
        const message = resumable.message;
        resumable = undefined;
        return stream((push, end) => {
          push(event(message, "c3"));
          end();
        });
      }
      return new Response("no server stream", { status: 405 });
    }
    if (request.method === "DELETE") return new Response(null, { status: 200 });
    if (body === undefined) return new Response("bad JSON", { status: 400 });

    const id = body.id;
    if (rpcMethod === undefined || id === undefined) return new Response(null, { status: 202 });
    if (rpcMethod === "initialize") {
      const session = `hostile-session-${++sessions}`;
      live.add(session);
      return json(
        {
          jsonrpc: "2.0",
          id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "hostile-http", version: "6.6.6" },
          },
        },
        200,
        { "mcp-session-id": session },
      );
    }
    const session = headers["mcp-session-id"];
    if (session === undefined || !live.has(session)) {
      return new Response("unknown session", { status: 404 });
    }
    if (rpcMethod === "tools/list") {
      return json({
        jsonrpc: "2.0",
        id,
        result: {
          tools: [{
            name: "echo",
            inputSchema: { type: "object", properties: { text: { type: "string" } } },
          }],
        },
      });
    }
    if (rpcMethod !== "tools/call") {
      return json({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
    }
    const params = (body.params ?? {}) as { arguments?: { text?: unknown } };
    const text = `echo: ${String(params.arguments?.text ?? "")}`;
    const answer = { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } };
    return toolsCall(id, answer, session, headers);
  }

  function toolsCall(
    id: unknown,
    answer: unknown,
    session: string,
    headers: Record<string, string>,
  ): Response {
    const huge = () => ({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "text", text: "h".repeat(options.hugeBytes ?? 100_000) }] },
    });
    switch (behaviour) {
      case "html-500":
        return new Response(
          "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n" +
            "<body><h1>Internal Server Error</h1><p>upstream exploded for " +
            `${headers["authorization"] ?? "nobody"}</p>` + "x".repeat(10_000) + "</body></html>",
          { status: 500, headers: { "content-type": "text/html; charset=utf-8" } },
        );
      case "wrong-content-type":
        return new Response("<html><body>hello</body></html>", {
          headers: { "content-type": "text/html" },
        });
      case "cut-mid-event":
        resumable = { lastEventId: "c1", message: answer };
        return stream((push, end) => {
          push("id: c1\nretry: 100\ndata:\n\n");
          push(`id: c2\nevent: message\ndata: ${JSON.stringify(answer).slice(0, 20)}`);
          end();
        });
      case "cut-mid-event-no-id":
        return stream((push, end) => {
          push(`event: message\ndata: ${JSON.stringify(answer).slice(0, 20)}`);
          end();
        });
      case "trickle": {
        const bytes = `event: message\ndata: ${JSON.stringify(answer)}\n\n`;
        let at = 0;
        return stream((push) => {
          push(bytes[at++]!);
          every(1000, () => push(at < bytes.length - 2 ? bytes[at++]! : ""));
        });
      }
      case "redirect":
        return new Response(null, {
          status: 307,
          headers: { location: options.redirectTo ?? "http://127.0.0.1:9/mcp" },
        });
      case "session-expires":
        if (!expired) {
          expired = true;
          live.delete(session);
          return new Response("session not found", { status: 404 });
        }
        return json(answer);
      case "huge-json":
        return json(huge());
      case "huge-sse":
        return stream((push, end) => {
          push(event(huge()));
          end();
        });
      default:
        return json(answer);
    }
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    url: `${origin}${behaviour === "legacy-endpoint" ? "/sse" : "/mcp"}`,
    requests,
    async close() {
      for (const close of [...closers]) close();
      await server.shutdown();
    },
  };
}
