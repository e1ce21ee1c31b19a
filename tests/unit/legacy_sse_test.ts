import assert from "node:assert/strict";
import {
  AuthRequiredError,
  ConnectionClosedError,
  ProtocolError,
  ServerError,
  TimeoutError,
} from "../../src/errors.ts";
import { HttpTransport } from "../../src/mcp/transport/http.ts";
import { HttpStatusError, NetworkError } from "../../src/mcp/transport/http_errors.ts";
import {
  LegacySseTransport,
  type LegacySseTransportOptions,
  shouldFallBackToSse,
} from "../../src/mcp/transport/legacy_sse.ts";
import type { JsonRpcRequest } from "../../src/mcp/transport/types.ts";
import {
  type LegacySseServer,
  type LegacySseServerOptions,
  startLegacySseServer,
} from "../../testdata/http/legacy_sse_server.ts";

const INIT: JsonRpcRequest = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "test", version: "0" },
  },
};

interface Harness {
  transport: LegacySseTransport;
  messages: Record<string, unknown>[];
  logs: string[];
  closes: (Error | undefined)[];
  /** Starts the transport with handlers recording into this harness. */
  start(): Promise<void>;
  /** Resolves when `n` messages have arrived. */
  waitMessages(n: number): Promise<void>;
}

function harness(url: string, options: Omit<LegacySseTransportOptions, "url"> = {}): Harness {
  const messages: Record<string, unknown>[] = [];
  const logs: string[] = [];
  const closes: (Error | undefined)[] = [];
  const transport = new LegacySseTransport({ url, log: (l) => logs.push(l), ...options });
  const waiters: { n: number; resolve(): void }[] = [];
  return {
    transport,
    messages,
    logs,
    closes,
    start: () =>
      transport.start({
        onMessage(m) {
          messages.push(m as Record<string, unknown>);
          for (const w of [...waiters]) {
            if (messages.length < w.n) continue;
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        },
        onClose: (e) => closes.push(e),
      }),
    waitMessages(n) {
      if (messages.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}

async function withServer(
  options: LegacySseServerOptions,
  fn: (server: LegacySseServer) => Promise<void>,
): Promise<void> {
  const server = await startLegacySseServer(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

async function rejectsAs<E extends Error>(
  promise: Promise<unknown>,
  cls: new (...args: never[]) => E,
): Promise<E> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e}`);
    return e;
  }
  throw new assert.AssertionError({ message: `expected ${cls.name} to be thrown` });
}

Deno.test("legacy sse: endpoint, POSTs and message events", async () => {
  await withServer({}, async (server) => {
    const h = harness(server.url, { headers: { "X-Api-Key": "k-secret-1" } });
    await h.start();
    assert.equal(h.transport.kind, "sse");
    await h.transport.send(INIT);
    await h.waitMessages(1);
    assert.equal(
      (h.messages[0]!["result"] as { protocolVersion: string }).protocolVersion,
      "2024-11-05",
    );
    await h.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await h.transport.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    });
    await h.waitMessages(2);
    assert.deepEqual(h.messages[1], {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "hi" }] },
    });
    await h.transport.close();
    await h.transport.close();
    assert.deepEqual(h.closes, [undefined]);

    const [get, ...posts] = server.requests;
    assert.equal(get!.method, "GET");
    assert.equal(get!.headers["accept"], "text/event-stream");
    assert.equal(get!.headers["x-api-key"], "k-secret-1");
    assert.deepEqual(posts.map((p) => `${p.method} ${p.path} ${p.rpcMethod}`), [
      "POST /messages initialize",
      "POST /messages notifications/initialized",
      "POST /messages tools/call",
    ]);
    assert.equal(posts[0]!.headers["content-type"], "application/json");
    assert.equal(posts[0]!.headers["x-api-key"], "k-secret-1");
    for (const line of h.logs) assert.ok(!line.includes("sessionId"), line);
  });
});

Deno.test("legacy sse: a cross-origin endpoint is refused", async () => {
  await withServer({ endpoint: "http://localhost:1/messages" }, async (server) => {
    const h = harness(server.url, { headers: { Authorization: "Bearer cross-secret" } });
    const e = await rejectsAs(h.start(), ProtocolError);
    assert.ok(e.message.includes(new URL(server.url).origin), e.message);
    assert.ok(e.message.includes("http://localhost:1"), e.message);
    await rejectsAs(h.transport.send(INIT), ConnectionClosedError);
    await h.transport.close();
    assert.deepEqual(h.closes, []);
    assert.equal(server.requests.length, 1);
  });
});

Deno.test("legacy sse: no endpoint event within the timeout is a TimeoutError", async () => {
  await withServer({ noEndpoint: true }, async (server) => {
    const h = harness(server.url, { endpointTimeoutMs: 100 });
    const e = await rejectsAs(h.start(), TimeoutError);
    assert.match(e.message, /no endpoint event within 100 ms/);
    await h.transport.close();
  });
});

Deno.test("legacy sse: the end of the event stream reports onClose(ConnectionClosedError)", async () => {
  await withServer({ closeStreamAfterMs: 50 }, async (server) => {
    const h = harness(server.url);
    await h.start();
    for (let i = 0; i < 100 && h.closes.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(h.closes.length, 1);
    assert.ok(h.closes[0] instanceof ConnectionClosedError);
    await rejectsAs(h.transport.send(INIT), ConnectionClosedError);
    await h.transport.close();
    assert.equal(h.closes.length, 1);
  });
});

Deno.test("legacy sse: GET answered with another content type is a ProtocolError", async () => {
  const h = harness("http://127.0.0.1:9/sse", {
    fetch: () =>
      Promise.resolve(new Response("<html>", { headers: { "content-type": "text/html" } })),
  });
  const e = await rejectsAs(h.start(), ProtocolError);
  assert.match(e.message, /text\/html/);
  await h.transport.close();
});

Deno.test("legacy sse: GET answered 401 without auth is AuthRequiredError", async () => {
  const h = harness("http://127.0.0.1:9/sse", {
    fetch: () => Promise.resolve(new Response("no", { status: 401 })),
  });
  await rejectsAs(h.start(), AuthRequiredError);
  await h.transport.close();
});

Deno.test("legacy sse: fallback from a Streamable HTTP initialize answered 405", async () => {
  await withServer({}, async (server) => {
    const http = new HttpTransport({ url: server.url });
    await http.start({ onMessage: () => {}, onClose: () => {} });
    const e = await rejectsAs(http.send(INIT), HttpStatusError);
    assert.equal(e.status, 405);
    assert.ok(shouldFallBackToSse(e));
    await http.close();

    const h = harness(server.url);
    await h.start();
    await h.transport.send(INIT);
    await h.waitMessages(1);
    assert.equal(h.messages[0]!["id"], 1);
    await h.transport.close();
  });
});

Deno.test("shouldFallBackToSse: only a POST initialize answered 400, 404 or 405", () => {
  const status = (s: number, rpcMethod = "initialize", httpMethod = "POST") =>
    new HttpStatusError("x", { status: s, httpMethod, rpcMethod });
  assert.ok(shouldFallBackToSse(status(400)));
  assert.ok(shouldFallBackToSse(status(404)));
  assert.ok(shouldFallBackToSse(status(405)));
  assert.ok(!shouldFallBackToSse(status(401)));
  assert.ok(!shouldFallBackToSse(status(403)));
  assert.ok(!shouldFallBackToSse(status(500)));
  assert.ok(!shouldFallBackToSse(status(405, "tools/list")));
  assert.ok(!shouldFallBackToSse(status(405, "initialize", "GET")));
  assert.ok(!shouldFallBackToSse(new AuthRequiredError("401")));
  assert.ok(!shouldFallBackToSse(new NetworkError("down")));
  assert.ok(!shouldFallBackToSse(new ServerError("x")));
  assert.ok(!shouldFallBackToSse(new Error("x")));
  assert.ok(!shouldFallBackToSse(undefined));
});
