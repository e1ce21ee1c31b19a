import assert from "node:assert/strict";
import {
  AuthRequiredError,
  ConnectionClosedError,
  ExitCode,
  ProtocolError,
  ServerError,
  TimeoutError,
} from "../../src/errors.ts";
import { HttpTransport, type HttpTransportOptions } from "../../src/mcp/transport/http.ts";
import { HttpStatusError, NetworkError } from "../../src/mcp/transport/http_errors.ts";
import { displayUrl, sameOrigin } from "../../src/mcp/transport/http_url.ts";
import type {
  AuthProvider,
  BearerChallenge,
  JsonRpcMessage,
  JsonRpcRequest,
} from "../../src/mcp/transport/types.ts";
import {
  startStreamableServer,
  type StreamableServer,
  type StreamableServerOptions,
} from "../../testdata/http/streamable_server.ts";

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
const VERSION = "2025-11-25";

function call(id: number, name: string, args: Record<string, unknown> = {}): JsonRpcRequest {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

interface Harness {
  transport: HttpTransport;
  messages: Record<string, unknown>[];
  logs: string[];
  closes: (Error | undefined)[];
}

async function open(
  url: string,
  options: Omit<HttpTransportOptions, "url"> = {},
): Promise<Harness> {
  const messages: Record<string, unknown>[] = [];
  const logs: string[] = [];
  const closes: (Error | undefined)[] = [];
  const transport = new HttpTransport({ url, log: (l) => logs.push(l), ...options });
  await transport.start({
    onMessage: (m) => messages.push(m as Record<string, unknown>),
    onClose: (e) => closes.push(e),
  });
  return { transport, messages, logs, closes };
}

async function handshake(t: HttpTransport): Promise<void> {
  await t.send(INIT);
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" }, {
    protocolVersion: VERSION,
  });
}

/** Runs `fn` against a fixture server, closing both ends afterwards. */
async function withServer(
  options: StreamableServerOptions,
  fn: (server: StreamableServer) => Promise<void>,
): Promise<void> {
  const server = await startStreamableServer(options);
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

function responseIds(messages: Record<string, unknown>[]): unknown[] {
  return messages.filter((m) => !("method" in m)).map((m) => m["id"]);
}

Deno.test("http: JSON answers, session id and protocol version on later requests", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    assert.equal(h.transport.sessionId, "session-1");
    await h.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      protocolVersion: VERSION,
    });
    assert.deepEqual(responseIds(h.messages), [1, 2]);
    await h.transport.close();

    const [init, initialized, ...rest] = server.requests;
    assert.equal(init!.rpcMethod, "initialize");
    assert.equal(init!.headers["content-type"], "application/json");
    assert.equal(init!.headers["accept"], "application/json, text/event-stream");
    assert.equal(init!.headers["mcp-session-id"], undefined);
    assert.equal(init!.headers["mcp-protocol-version"], undefined);
    assert.equal(initialized!.rpcMethod, "notifications/initialized");
    assert.equal(initialized!.headers["mcp-session-id"], "session-1");
    assert.equal(initialized!.headers["mcp-protocol-version"], VERSION);
    for (const r of rest) {
      assert.equal(r.headers["mcp-session-id"], "session-1", `${r.method} ${r.rpcMethod}`);
      assert.equal(r.headers["mcp-protocol-version"], VERSION);
    }
    // The GET stream was tried (405: harmless) and the session was ended with DELETE.
    const get = rest.find((r) => r.method === "GET");
    assert.equal(get?.headers["accept"], "text/event-stream");
    assert.ok(rest.some((r) => r.method === "DELETE"));
    assert.ok(h.logs.some((l) => l.includes("no server stream") && l.includes("405")));
    assert.deepEqual(h.closes, [undefined]);
  });
});

Deno.test("http: SSE answer dispatches a server request and a notification first", async () => {
  await withServer({ mode: "sse" }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    h.messages.length = 0;
    await h.transport.send(call(2, "notify"), { protocolVersion: VERSION });
    assert.deepEqual(h.messages.map((m) => m["method"] ?? `response ${m["id"]}`), [
      "ping",
      "notifications/message",
      "response 2",
    ]);
    await h.transport.send(call(3, "echo", { text: "hi" }), { protocolVersion: VERSION });
    assert.deepEqual(h.messages.at(-1)?.["result"], { content: [{ type: "text", text: "hi" }] });
    await h.transport.close();
  });
});

Deno.test("http: notifications and responses accept 202; a JSON batch is split", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    await h.transport.send({ jsonrpc: "2.0", id: "srv-1", result: {} }, {
      protocolVersion: VERSION,
    });
    await h.transport.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 9 },
    }, { protocolVersion: VERSION });
    h.messages.length = 0;
    await h.transport.send(call(2, "batch"), { protocolVersion: VERSION });
    assert.deepEqual(h.messages.map((m) => m["method"] ?? m["id"]), ["notifications/message", 2]);
    await h.transport.close();
    assert.ok(server.requests.some((r) => r.rpcMethod === "notifications/cancelled"));
  });
});

Deno.test("http: the optional GET stream delivers server messages", async () => {
  await withServer({ getStream: "sse" }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    for (let i = 0; i < 100 && !h.messages.some((m) => m["method"]); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(h.messages.some((m) => m["method"] === "notifications/message"));
    await h.transport.close();
  });
});

Deno.test("http: GET stream refused with 400 or 404 never breaks POSTs", async () => {
  for (const status of [400, 404]) {
    await withServer({ getStream: status, sessions: false }, async (server) => {
      const h = await open(server.url);
      await handshake(h.transport);
      await h.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {
        protocolVersion: VERSION,
      });
      await h.transport.close();
      assert.deepEqual(responseIds(h.messages), [1, 2]);
      // No session: no DELETE either.
      assert.ok(!server.requests.some((r) => r.method === "DELETE"));
    });
  }
});

Deno.test("http: 404 on an expired session re-initializes and retries once", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    server.expireSessions();
    h.messages.length = 0;
    server.requests.length = 0;
    await h.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      protocolVersion: VERSION,
    });
    assert.deepEqual(responseIds(h.messages), [2], "the reinit response is swallowed");
    assert.equal(h.transport.sessionId, "session-2");
    const posts = server.requests.filter((r) => r.method === "POST");
    assert.deepEqual(posts.map((r) => r.rpcMethod), [
      "tools/list",
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    assert.equal(posts[0]!.headers["mcp-session-id"], "session-1");
    const reinit = posts[1]!;
    assert.equal(reinit.headers["mcp-session-id"], undefined);
    assert.equal((reinit.body as { id: unknown }).id, "reinit-1");
    assert.deepEqual((reinit.body as { params: unknown }).params, INIT.params);
    assert.equal(posts[2]!.headers["mcp-session-id"], "session-2");
    assert.equal(posts[3]!.headers["mcp-session-id"], "session-2");
    await h.transport.close();
  });
});

Deno.test("http: a second 404 after re-initializing is a ServerError", async () => {
  let sessions = 0;
  const fakeFetch: typeof fetch = (_input, init) => {
    const body = JSON.parse(String(init?.body)) as { id?: unknown; method?: string };
    if (body.method === "initialize") {
      return Promise.resolve(
        Response.json({ jsonrpc: "2.0", id: body.id, result: {} }, {
          headers: { "mcp-session-id": `s${++sessions}` },
        }),
      );
    }
    if (body.id === undefined) return Promise.resolve(new Response(null, { status: 202 }));
    return Promise.resolve(new Response("gone", { status: 404 }));
  };
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  await h.transport.send(INIT);
  const e = await rejectsAs(
    h.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    HttpStatusError,
  );
  assert.ok(e instanceof ServerError);
  assert.equal(e.status, 404);
  assert.equal(sessions, 2);
  assert.deepEqual(responseIds(h.messages), [1]);
  await h.transport.close();
});

Deno.test("http: a stream cut before the response resumes with Last-Event-ID after retry", async () => {
  await withServer({ mode: "sse", retryMs: 500 }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    await h.transport.send(call(2, "cut"), { protocolVersion: VERSION });
    assert.deepEqual(responseIds(h.messages), [1, 2]);
    const closed = server.events.find((e) => e.name === "cut-closed");
    const resume = server.requests.find((r) => r.method === "GET" && r.headers["last-event-id"]);
    assert.ok(closed && resume);
    assert.equal(resume.headers["mcp-session-id"], "session-1");
    assert.equal(resume.headers["accept"], "text/event-stream");
    const delay = resume.at - closed.at;
    assert.ok(delay >= 450 && delay <= 700, `reconnected after ${delay.toFixed(0)} ms`);
    // The resumed stream stays open; close() must still release it.
    await h.transport.close();
  });
});

Deno.test("http: resumption gives up after maxReconnects without progress", async () => {
  await withServer({ mode: "sse", retryMs: 10 }, async (server) => {
    const h = await open(server.url, { maxReconnects: 2 });
    await handshake(h.transport);
    const e = await rejectsAs(
      h.transport.send(call(2, "cut_forever"), { protocolVersion: VERSION }),
      ConnectionClosedError,
    );
    assert.match(e.message, /2 reconnection attempts/);
    const resumes = server.requests.filter((r) => r.headers["last-event-id"]);
    assert.equal(resumes.length, 2);
    await h.transport.close();
  });
});

Deno.test("http: a stream that ends without an event id fails the request at once", async () => {
  await withServer({ mode: "sse" }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    const e = await rejectsAs(
      h.transport.send(call(2, "cut_no_id"), { protocolVersion: VERSION }),
      ConnectionClosedError,
    );
    assert.match(e.message, /ended before its response/);
    assert.ok(!server.requests.some((r) => r.headers["last-event-id"]));
    await h.transport.close();
  });
});

Deno.test("http: HTTP 500 with an HTML page is a ServerError with status and excerpt", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    const e = await rejectsAs(
      h.transport.send(call(2, "html500"), { protocolVersion: VERSION }),
      HttpStatusError,
    );
    assert.equal(e.status, 500);
    assert.equal(e.exitCode, ExitCode.server);
    assert.match(
      e.message,
      /HTTP 500 Internal Server Error: 500 Internal Server Error Internal Server Error$/,
    );
    assert.ok(e.message.includes(server.url));
    assert.ok(!/[\r\n]/.test(e.message));
    await h.transport.close();
  });
});

Deno.test("http: the excerpt of an error body is cut to about 200 characters", async () => {
  const fakeFetch: typeof fetch = () =>
    Promise.resolve(new Response("E".repeat(5000) + "\u0007\u001b[31m", { status: 502 }));
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  const e = await rejectsAs(h.transport.send(INIT), HttpStatusError);
  assert.equal(e.status, 502);
  assert.ok(e.message.endsWith("E…"), e.message);
  assert.ok(e.message.length < 320);
  await h.transport.close();
});

Deno.test("http: an HTML error page is excerpted as text, secrets redacted before the cut", async () => {
  const page = (text: string) =>
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>\n" +
    "<style>\nbody { color: red }\n</style></head>\n<body>\n" +
    "<!-- upstream header-secret-value -->\n<script>var k = 'header-secret-value';</script>\n" +
    '<h1>Bad   Gateway</h1>\n<p class="x" data-k="header-secret-value">' + text +
    "</p>\n</body></html>";
  let body = "";
  const fakeFetch: typeof fetch = () =>
    Promise.resolve(
      new Response(body, { status: 502, headers: { "content-type": "text/html; charset=utf-8" } }),
    );
  const h = await open("http://127.0.0.1:9/mcp", {
    fetch: fakeFetch,
    headers: { "X-Api-Key": "header-secret-value", "X-Words": "alpha beta gamma" },
  });

  body = page("Tom &amp; Jerry &lt;3 &#8230; key\n\t header-secret-value");
  let e = await rejectsAs(h.transport.send(INIT), HttpStatusError);
  assert.ok(
    e.message.endsWith(
      "HTTP 502 Bad Gateway: 502 Bad Gateway Bad Gateway Tom & Jerry <3 \u2026 key <redacted>",
    ),
    e.message,
  );

  // A secret that only becomes whole when whitespace is folded, right where the cut
  // falls: redacted before the cut, so no prefix of it shows.
  body = page("x".repeat(166) + " alpha beta\n   gamma and more text after it");
  e = await rejectsAs(h.transport.send(INIT), HttpStatusError);
  assert.ok(!e.message.includes("alpha"), e.message);
  assert.ok(e.message.endsWith(`Bad Gateway ${"x".repeat(166)} <reda…`), e.message);
  await h.transport.close();
});

Deno.test("http: a non-HTML error body keeps its angle brackets", async () => {
  const fakeFetch: typeof fetch = () =>
    Promise.resolve(
      new Response('{"error": "expected <string>, got a < b"}', {
        status: 400,
        headers: { "content-type": "application/json" },
      }),
    );
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  const e = await rejectsAs(h.transport.send(INIT), HttpStatusError);
  assert.ok(e.message.endsWith(': {"error": "expected <string>, got a < b"}'), e.message);
  await h.transport.close();
});

Deno.test("http: a never-answering request is aborted by its signal, nothing leaks", async () => {
  for (const mode of ["json", "sse"] as const) {
    await withServer({ mode }, async (server) => {
      const h = await open(server.url);
      await handshake(h.transport);
      const controller = new AbortController();
      const sent = h.transport.send(call(2, "never"), {
        protocolVersion: VERSION,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(new TimeoutError("gave up")), 100);
      const e = await rejectsAs(sent, TimeoutError);
      assert.equal(e.message, "gave up");
      await h.transport.close();
    });
  }
});

Deno.test("http: close() aborts a request in flight", async () => {
  await withServer({ mode: "sse" }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    const sent = rejectsAs(
      h.transport.send(call(2, "never"), { protocolVersion: VERSION }),
      ConnectionClosedError,
    );
    await new Promise((r) => setTimeout(r, 50));
    await h.transport.close();
    await sent;
    await rejectsAs(h.transport.send(call(3, "echo")), ConnectionClosedError);
    await h.transport.close(); // idempotent
    assert.deepEqual(h.closes, [undefined]);
  });
});

Deno.test("http: a wrong content type for a request's answer is a ProtocolError", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    const e = await rejectsAs(
      h.transport.send(call(2, "wrong_type"), { protocolVersion: VERSION }),
      ProtocolError,
    );
    assert.match(e.message, /text\/plain/);
    await h.transport.close();
  });
});

Deno.test("http: media types are compared without parameters and case", async () => {
  const fakeFetch: typeof fetch = (_input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number };
    return Promise.resolve(
      new Response(JSON.stringify({ jsonrpc: "2.0", id: body.id, result: {} }), {
        headers: { "content-type": "Application/JSON; charset=utf-8" },
      }),
    );
  };
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  await h.transport.send(INIT);
  assert.deepEqual(responseIds(h.messages), [1]);
  await h.transport.close();
});

Deno.test("http: bodies and events over maxMessageBytes are ProtocolErrors", async () => {
  await withServer({}, async (server) => {
    const h = await open(server.url, { maxMessageBytes: 4096 });
    await handshake(h.transport);
    await h.transport.send(call(2, "huge", { bytes: 1000 }), { protocolVersion: VERSION });
    for (const tool of ["huge", "huge_sse"]) {
      const e = await rejectsAs(
        h.transport.send(call(3, tool, { bytes: 10_000 }), { protocolVersion: VERSION }),
        ProtocolError,
      );
      assert.match(e.message, /exceeds 4096 bytes/);
      assert.ok(e.hint?.includes("maxMessageBytes"));
    }
    await h.transport.close();
  });
});

Deno.test("http: an invalid Mcp-Session-Id is a ProtocolError", async () => {
  const fakeFetch: typeof fetch = () =>
    Promise.resolve(
      Response.json({ jsonrpc: "2.0", id: 1, result: {} }, {
        headers: { "mcp-session-id": "has space" },
      }),
    );
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  const e = await rejectsAs(h.transport.send(INIT), ProtocolError);
  assert.match(e.message, /Mcp-Session-Id/);
  assert.ok(!e.message.includes("has space"));
  await h.transport.close();
});

Deno.test("http: an unreachable server is a NetworkError naming the URL only", async () => {
  const server = await startStreamableServer();
  const url = server.url + "?key=query-secret-value";
  await server.close();
  const h = await open(url);
  const e = await rejectsAs(h.transport.send(INIT), NetworkError);
  assert.ok(e.message.includes(displayUrl(url)), e.message);
  assert.ok(!e.message.includes("query-secret-value"), e.message);
  await h.transport.close();
});

Deno.test("http: secrets from headers, auth and URL never reach errors or logs", async () => {
  const secrets = ["header-secret-value", "bearer-secret-token", "url-secret", "sess-secret-id"];
  // A hostile server echoing everything it got into its error pages.
  const fakeFetch: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    const echo = [String(input), ...[...headers.entries()].map(([k, v]) => `${k}: ${v}`)].join(
      "\n",
    );
    const body = JSON.parse(String(init?.body)) as { id?: number; method?: string };
    if (body.method === "initialize") {
      return Promise.resolve(
        Response.json({ jsonrpc: "2.0", id: body.id, result: {} }, {
          headers: { "mcp-session-id": "sess-secret-id" },
        }),
      );
    }
    return Promise.resolve(new Response(`bad request\n${echo}`, { status: 400 }));
  };
  const auth: AuthProvider = {
    authorization: () => Promise.resolve("Bearer bearer-secret-token"),
    unauthorized: () => Promise.resolve(false),
  };
  const h = await open("https://user:url-secret@mcp.example.test/mcp?token=url-secret", {
    fetch: fakeFetch,
    headers: { "X-Api-Key": "header-secret-value" },
    auth,
  });
  const messages: string[] = [h.transport.description];
  await h.transport.send(INIT);
  const e = await rejectsAs(
    h.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    HttpStatusError,
  );
  messages.push(e.message);
  assert.match(e.message, /authorization: <redacted>/);
  await h.transport.close();
  for (const text of [...messages, ...h.logs]) {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} in: ${text}`);
  }
});

Deno.test("http: a cross-origin redirect is refused and never sees Authorization", async () => {
  await withServer({}, async (target) => {
    await withServer({ path: "/elsewhere", redirects: { "/mcp": target.url } }, async (origin) => {
      const auth: AuthProvider = {
        authorization: () => Promise.resolve("Bearer redirect-secret"),
        unauthorized: () => Promise.resolve(false),
      };
      const url = origin.url.replace("/elsewhere", "/mcp");
      const h = await open(url, { auth, headers: { Cookie: "c=cookie-secret" } });
      const e = await rejectsAs(h.transport.send(INIT), ServerError);
      assert.ok(e.message.includes(new URL(url).origin), e.message);
      assert.ok(e.message.includes(new URL(target.url).origin), e.message);
      assert.equal(target.requests.length, 0);
      await h.transport.close();
    });
  });
});

Deno.test("http: same-origin redirects are followed with the body kept", async () => {
  await withServer({ redirects: { "/old": "/mcp" } }, async (server) => {
    const h = await open(server.url.replace("/mcp", "/old"));
    await handshake(h.transport);
    assert.deepEqual(responseIds(h.messages), [1]);
    const init = server.requests.filter((r) => r.path === "/mcp" && r.rpcMethod === "initialize");
    assert.equal(init.length, 1);
    await h.transport.close();
  });
});

Deno.test("http: 401 asks the auth provider and retries once with new credentials", async () => {
  await withServer({ bearerToken: "new-token" }, async (server) => {
    let token = "old-token";
    const challenges: BearerChallenge[] = [];
    const auth: AuthProvider = {
      authorization: () => Promise.resolve(`Bearer ${token}`),
      unauthorized: (challenge) => {
        challenges.push(challenge);
        token = "new-token";
        return Promise.resolve(true);
      },
    };
    const h = await open(server.url, { auth });
    await handshake(h.transport);
    assert.deepEqual(responseIds(h.messages), [1]);
    assert.equal(challenges.length, 1);
    assert.equal(challenges[0]!.status, 401);
    assert.equal(challenges[0]!.params["scope"], "mcp:tools");
    assert.match(challenges[0]!.params["resource_metadata"] ?? "", /oauth-protected-resource$/);
    await h.transport.close();
  });
});

Deno.test("http: 401 without a way to authorize is AuthRequiredError (exit 4)", async () => {
  await withServer({ bearerToken: "t" }, async (server) => {
    const none = await open(server.url);
    const e1 = await rejectsAs(none.transport.send(INIT), AuthRequiredError);
    assert.equal(e1.exitCode, ExitCode.auth);
    assert.ok(e1.message.includes(server.url));
    await none.transport.close();

    const refused = await open(server.url, {
      auth: {
        authorization: () => Promise.resolve(undefined),
        unauthorized: () => Promise.resolve(false),
      },
    });
    const e2 = await rejectsAs(refused.transport.send(INIT), AuthRequiredError);
    assert.ok(e2.message.includes(server.url));
    await refused.transport.close();

    const configured = await open(server.url, { headers: { Authorization: "Bearer wrong-one" } });
    const e3 = await rejectsAs(configured.transport.send(INIT), AuthRequiredError);
    assert.match(e3.message, /configured Authorization header/);
    assert.ok(!e3.message.includes("wrong-one"));
    await configured.transport.close();
  });
});

Deno.test("http: 403 insufficient_scope goes to the auth provider; plain 403 does not", async () => {
  let calls = 0;
  const challenges: BearerChallenge[] = [];
  let scoped = false;
  const fakeFetch: typeof fetch = () => {
    calls++;
    if (!scoped) {
      return Promise.resolve(
        new Response("forbidden", {
          status: 403,
          headers: { "www-authenticate": 'Bearer error="insufficient_scope", scope="a b"' },
        }),
      );
    }
    return Promise.resolve(Response.json({ jsonrpc: "2.0", id: 1, result: {} }));
  };
  const auth: AuthProvider = {
    authorization: () => Promise.resolve("Bearer x-token"),
    unauthorized: (c) => {
      challenges.push(c);
      scoped = true;
      return Promise.resolve(true);
    },
  };
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch, auth });
  await h.transport.send(INIT);
  assert.equal(calls, 2);
  assert.deepEqual(challenges, [{
    status: 403,
    params: { error: "insufficient_scope", scope: "a b" },
  }]);
  await h.transport.close();

  const plain = await open("http://127.0.0.1:9/mcp", {
    fetch: () => Promise.resolve(new Response("no", { status: 403 })),
    auth,
  });
  const e = await rejectsAs(plain.transport.send(INIT), HttpStatusError);
  assert.equal(e.status, 403);
  assert.equal(challenges.length, 1);
  await plain.transport.close();
});

Deno.test("http: close() sends DELETE with the session and tolerates 405", async () => {
  await withServer({ deleteStatus: 405 }, async (server) => {
    const h = await open(server.url);
    await handshake(h.transport);
    await h.transport.close();
    const del = server.requests.find((r) => r.method === "DELETE");
    assert.equal(del?.headers["mcp-session-id"], "session-1");
    assert.ok(h.logs.some((l) => l.includes("DELETE") && l.includes("405")));
    assert.deepEqual(h.closes, [undefined]);
  });
});

Deno.test("http: a DELETE that never answers is bounded by closeTimeoutMs", async () => {
  const fakeFetch: typeof fetch = (_input, init) => {
    if (init?.method === "DELETE") {
      return new Promise((_resolve, reject) => {
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    }
    return Promise.resolve(
      Response.json({ jsonrpc: "2.0", id: 1, result: {} }, { headers: { "mcp-session-id": "s" } }),
    );
  };
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch, closeTimeoutMs: 50 });
  await h.transport.send(INIT);
  const started = performance.now();
  await h.transport.close();
  assert.ok(performance.now() - started < 1000);
  assert.ok(h.logs.some((l) => l.includes("ending the session failed")));
});

Deno.test("http: constructor validates the URL and headers", () => {
  assert.throws(() => new HttpTransport({ url: "ftp://x.test/" }), /http or https/);
  assert.throws(() => new HttpTransport({ url: "not a url" }), /invalid server URL/);
  assert.throws(
    () => new HttpTransport({ url: "http://x.test/", headers: { "X-A": "v\r\nInjected: 1" } }),
    (e: Error) => e.message.includes("X-A") && !e.message.includes("Injected"),
  );
  const t = new HttpTransport({ url: "http://u:pw-secret@x.test/mcp?k=v-secret" });
  assert.equal(t.description, "http: http://x.test/mcp");
  assert.equal(t.kind, "http");
});

Deno.test("http: sameOrigin and displayUrl", () => {
  assert.ok(sameOrigin(new URL("http://a.test/x"), new URL("http://a.test:80/y?q")));
  assert.ok(!sameOrigin(new URL("http://a.test/"), new URL("https://a.test/")));
  assert.ok(!sameOrigin(new URL("http://a.test/"), new URL("http://a.test:81/")));
  assert.ok(!sameOrigin(new URL("http://127.0.0.1/"), new URL("http://localhost/")));
  assert.ok(!sameOrigin(new URL("data:text/plain,x"), new URL("data:text/plain,x")));
  assert.equal(displayUrl("https://u:p@h.test:8443/a/b?key=1#frag"), "https://h.test:8443/a/b");
  assert.equal(displayUrl("::"), "<invalid URL>");
});

Deno.test("http: send() of a message without a server answer body is tolerated", async () => {
  const sent: JsonRpcMessage[] = [];
  const fakeFetch: typeof fetch = (_input, init) => {
    sent.push(JSON.parse(String(init?.body)));
    return Promise.resolve(new Response(null, { status: 202 }));
  };
  const h = await open("http://127.0.0.1:9/mcp", { fetch: fakeFetch });
  await h.transport.send({ jsonrpc: "2.0", id: 5, method: "tools/list" });
  assert.equal(sent.length, 1);
  assert.ok(h.logs.some((l) => l.includes("no body")));
  await h.transport.close();
});

Deno.test("http: a secret split by the excerpt's read limit leaves no prefix behind", async () => {
  const enc = new TextEncoder();
  const fakeFetch: typeof fetch = () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(enc.encode("oops" + " ".repeat(4086) + "header"));
        controller.enqueue(enc.encode("-secret-value and more"));
        controller.close();
      },
    });
    return Promise.resolve(new Response(body, { status: 500 }));
  };
  const h = await open("http://127.0.0.1:9/mcp", {
    fetch: fakeFetch,
    headers: { "X-Api-Key": "header-secret-value" },
  });
  const e = await rejectsAs(h.transport.send(INIT), HttpStatusError);
  assert.ok(e.message.endsWith("HTTP 500 Internal Server Error: oops"), e.message);
  await h.transport.close();
});
