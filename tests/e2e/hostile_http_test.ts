/**
 * The reliability and security battery, HTTP half: one careless or malicious server
 * behaviour per test (`testdata/hostile/http_server.ts`, in this process, on
 * 127.0.0.1). Each test checks the exit code, the message (naming the server and what
 * went wrong), a time bound, that no secret got out, and that no process is left.
 */

import assert from "node:assert/strict";
import { type CliResult, runCli, tempConfig } from "../helpers/cli.ts";
import { ProcessWatch } from "../helpers/processes.ts";
import {
  type Behaviour,
  type HostileHttpOptions,
  type HostileHttpServer,
  startHostileHttp,
} from "../../testdata/hostile/http_server.ts";

const SECRET = "hostile-battery-secret-7f3a9c";

/**
 * A hostile server, a well-behaved one on another origin (`other`, to catch anything
 * that leaks there), a config whose entry `h` points at the hostile one with
 * `Authorization: Bearer SECRET`, and the process watch of the test.
 */
async function scenario(
  behaviour: Behaviour,
  options: (other: HostileHttpServer) => HostileHttpOptions = () => ({}),
  entry: Record<string, unknown> = {},
) {
  const watch = await ProcessWatch.create();
  const other = startHostileHttp("normal");
  const server = startHostileHttp(behaviour, options(other));
  const cfg = await tempConfig({
    servers: {
      h: { url: server.url, headers: { Authorization: `Bearer ${SECRET}` }, ...entry },
    },
  });
  return {
    server,
    other,
    async run(args: string[]): Promise<CliResult> {
      const r = await runCli([...args, "--config", cfg.path], {
        killAfterMs: 30_000,
        // Nothing of the user's (state, cache, credentials) is read or written.
        env: {
          ...watch.env,
          MCPCTL_HOME: `${cfg.dir}/home`,
          XDG_STATE_HOME: `${cfg.dir}/state`,
          XDG_CONFIG_HOME: `${cfg.dir}/xdg`,
        },
      });
      assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), "the secret got out");
      return r;
    },
    async [Symbol.asyncDispose]() {
      try {
        await watch[Symbol.asyncDispose]();
      } finally {
        await Promise.all([server.close(), other.close()]);
        await cfg[Symbol.asyncDispose]();
      }
    },
  };
}

function within(r: CliResult, ms: number): void {
  assert.ok(r.ms < ms, `took ${Math.round(r.ms)} ms, over ${ms} ms`);
}

const CALL = ["call", "h", "echo", "text=hi", "--timeout", "1500"];

Deno.test("hostile http [html-500]: HTTP 500 with an HTML page → exit 3, status and excerpt", async () => {
  await using s = await scenario("html-500");
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /POST http:\/\/127\.0\.0\.1:\d+\/mcp \(tools\/call\) failed: HTTP 500 Internal Server Error: /,
  );
  assert.match(r.stderr, /upstream exploded for <redacted>/);
  // A short excerpt, on one line: not the 10 kB page.
  const line = r.stderr.split("\n").find((l) => l.includes("HTTP 500"))!;
  assert.ok(line.length < 400, `${line.length} characters`);
  within(r, 10_000);
});

Deno.test("hostile http [wrong-content-type]: text/html answer → exit 3", async () => {
  await using s = await scenario("wrong-content-type");
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /the answer to tools\/call from http:\/\/127\.0\.0\.1:\d+\/mcp has Content-Type "text\/html", expected application\/json or text\/event-stream/,
  );
  within(r, 10_000);
});

Deno.test("hostile http [cut-mid-event]: a stream cut mid-event is resumed", async () => {
  await using s = await scenario("cut-mid-event");
  const r = await s.run(CALL);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  const resume = s.server.requests.find((q) => q.method === "GET" && q.headers["last-event-id"]);
  assert.equal(resume?.headers["last-event-id"], "c1", "resumed after the last whole event");
  within(r, 10_000);
});

Deno.test("hostile http [cut-mid-event-no-id]: a cut stream with nothing to resume → exit 3", async () => {
  await using s = await scenario("cut-mid-event-no-id");
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /the stream for tools\/call from http:\/\/127\.0\.0\.1:\d+\/mcp ended before its response \(no event id to resume from\)/,
  );
  within(r, 10_000);
});

Deno.test("hostile http [trickle]: a byte a second is bounded by --timeout → exit 5", async () => {
  await using s = await scenario("trickle");
  const r = await s.run(CALL);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /server "h" did not answer tools\/call within 1\.5 s/);
  assert.ok(r.ms >= 1500, `gave up after ${r.ms} ms, before the timeout`);
  within(r, 8_000);
});

Deno.test("hostile http [redirect]: a redirect to another origin is refused, Authorization stays", async () => {
  await using s = await scenario("redirect", (other) => ({ redirectTo: other.url }));
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /redirected to another origin \(http:\/\/127\.0\.0\.1:\d+ → http:\/\/127\.0\.0\.1:\d+\)/,
  );
  assert.match(r.stderr, /not following it, so no credentials leave the server's origin/);
  // The hostile origin got the credential (it is its own); the other origin got nothing.
  assert.equal(s.server.requests[0]?.headers["authorization"], `Bearer ${SECRET}`);
  assert.deepEqual(s.other.requests, []);
  within(r, 10_000);
});

Deno.test("hostile http [session-expires]: 404 on the session → re-initialize and succeed", async () => {
  await using s = await scenario("session-expires");
  const r = await s.run(CALL);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  const posts = s.server.requests.filter((q) => q.method === "POST");
  assert.equal(posts.filter((q) => q.rpcMethod === "initialize").length, 2);
  const calls = posts.filter((q) => q.rpcMethod === "tools/call");
  assert.deepEqual(calls.map((q) => q.headers["mcp-session-id"]), [
    "hostile-session-1",
    "hostile-session-2",
  ]);
  within(r, 10_000);
});

Deno.test("hostile http [legacy-endpoint]: an endpoint on another origin → exit 3", async () => {
  await using s = await scenario(
    "legacy-endpoint",
    (other) => ({ endpoint: `${other.origin}/messages` }),
    { type: "sse" },
  );
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /server http:\/\/127\.0\.0\.1:\d+\/sse named an endpoint on another origin \(http:\/\/127\.0\.0\.1:\d+ → http:\/\/127\.0\.0\.1:\d+\); refusing it/,
  );
  assert.deepEqual(s.other.requests, []);
  within(r, 10_000);
  // The same through the automatic fallback (no "type"): the POST gets 405, then SSE.
  await using auto = await scenario(
    "legacy-endpoint",
    (other) => ({ endpoint: `${other.origin}/messages` }),
  );
  const r2 = await auto.run(CALL);
  assert.equal(r2.code, 3, r2.stderr);
  assert.match(r2.stderr, /named an endpoint on another origin/);
  assert.deepEqual(auto.other.requests, []);
});

Deno.test("hostile http [unauthorized]: 401 with malformed WWW-Authenticate → exit 4, login hint", async () => {
  const challenges = [
    'Bearer realm="unterminated, scope=',
    'Bearer ,,,=,"=',
    'Bearer resource_metadata="::not a url::", error=',
    "Negotiate",
    undefined,
  ];
  for (const challenge of challenges) {
    await using s = await scenario(
      "unauthorized",
      () => challenge === undefined ? {} : { wwwAuthenticate: challenge },
      { headers: {} },
    );
    const r = await s.run(CALL);
    const what = `WWW-Authenticate ${JSON.stringify(challenge)}`;
    assert.equal(r.code, 4, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /server "h" needs sign-in/, what);
    assert.match(r.stderr, /hint: run: mcpctl login h/, what);
    assert.doesNotMatch(r.stderr, /unexpected/, what);
    within(r, 10_000);
  }
});

Deno.test("hostile http [huge-json]: an answer over maxMessageBytes → exit 3", async () => {
  await using s = await scenario("huge-json", () => ({}), { maxMessageBytes: 4096 });
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /the answer to tools\/call from http:\/\/127\.0\.0\.1:\d+\/mcp exceeds 4096 bytes/,
  );
  assert.match(r.stderr, /hint: raise maxMessageBytes for this server/);
  within(r, 10_000);
});

Deno.test("hostile http [huge-sse]: an event over maxMessageBytes → exit 3", async () => {
  await using s = await scenario("huge-sse", () => ({}), { maxMessageBytes: 4096 });
  const r = await s.run(CALL);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /an event from http:\/\/127\.0\.0\.1:\d+\/mcp: server-sent .* exceeds 4096 bytes/,
  );
  assert.match(r.stderr, /hint: raise maxMessageBytes for this server/);
  within(r, 10_000);
});
