/**
 * A small legacy HTTP+SSE (MCP 2024-11-05) server for tests (loopback only).
 *
 * `GET /sse` opens the event stream; its first event, `endpoint`, names
 * `/messages?sessionId=…`; POSTs there are answered 202 and their replies sent on the
 * stream as `message` events. A POST to `/sse` (a Streamable HTTP attempt) gets 405, so
 * clients can exercise their fallback.
 *
 * Run standalone: `deno run -A testdata/http/legacy_sse_server.ts [--port N]
 * [--endpoint URL]`; the first line on stdout is the SSE URL.
 *
 * @module
 */

import { answerRpc, type Id, type RecordedRequest } from "./streamable_server.ts";

/** Options of {@linkcode startLegacySseServer}. */
export interface LegacySseServerOptions {
  /** Data of the `endpoint` event (default `/messages?sessionId=<id>`). Use an absolute
   * URL on another origin (e.g. `http://localhost:…`) to test the origin check. */
  endpoint?: string;
  /** Send no endpoint event at all (to test the timeout). */
  noEndpoint?: boolean;
  /** End the event stream this many ms after the endpoint event. */
  closeStreamAfterMs?: number;
  /** Port to listen on (default 0). */
  port?: number;
}

/** A running legacy server. */
export interface LegacySseServer {
  /** The SSE URL. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Closes every stream and stops the server. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** Starts the server on 127.0.0.1. */
export function startLegacySseServer(
  options: LegacySseServerOptions = {},
): Promise<LegacySseServer> {
  const requests: RecordedRequest[] = [];
  const streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  let counter = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();

  // setTimeout that close() can cancel, so no timer outlives the server.
  function later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  function push(session: string, text: string): void {
    try {
      streams.get(session)?.enqueue(encoder.encode(text));
    } catch { /* cancelled */ }
  }

  function end(session: string): void {
    const controller = streams.get(session);
    streams.delete(session);
    try {
      controller?.close();
    } catch { /* cancelled */ }
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

    if (url.pathname === "/sse" && request.method === "GET") {
      const session = `s${++counter}`;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          streams.set(session, controller);
        },
        cancel() {
          streams.delete(session);
        },
      });
      if (!options.noEndpoint) {
        const data = options.endpoint ?? `/messages?sessionId=${session}`;
        queueMicrotask(() => push(session, `event: endpoint\ndata: ${data}\n\n`));
      }
      if (options.closeStreamAfterMs !== undefined) {
        later(() => end(session), options.closeStreamAfterMs);
      }
      return new Response(stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    if (url.pathname === "/sse") return new Response("Method Not Allowed", { status: 405 });

    if (url.pathname === "/messages" && request.method === "POST") {
      const session = url.searchParams.get("sessionId") ?? "";
      if (!streams.has(session)) return new Response("unknown session", { status: 404 });
      const message = body as { method?: string; id?: Id; params?: Record<string, unknown> };
      if (message.method !== undefined && message.id !== undefined) {
        const answer = answerRpc(
          message as { method: string; id: Id; params?: Record<string, unknown> },
          "2024-11-05",
        );
        later(() => push(session, `event: message\ndata: ${JSON.stringify(answer)}\n\n`), 5);
      }
      return new Response("Accepted", { status: 202 });
    }
    return new Response("not found", { status: 404 });
  }

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen() {},
    }, handle);
    resolve({
      url: `http://127.0.0.1:${server.addr.port}/sse`,
      requests,
      async close() {
        for (const timer of timers) clearTimeout(timer);
        for (const session of [...streams.keys()]) end(session);
        await server.shutdown();
      },
    });
  });
}

if (import.meta.main) {
  const options: LegacySseServerOptions = {};
  for (let i = 0; i < Deno.args.length; i++) {
    if (Deno.args[i] === "--port") options.port = Number(Deno.args[++i]);
    else if (Deno.args[i] === "--endpoint") options.endpoint = Deno.args[++i] ?? "";
  }
  const server = await startLegacySseServer(options);
  console.log(server.url);
  const stop = () => server.close().then(() => Deno.exit(0));
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}
