/**
 * End-to-end tests of the HTTP transports through the real CLI: server-everything in
 * Streamable HTTP and legacy SSE mode, and the scripted fixture server for session
 * expiry, stream resumption, HTTP failures, timeouts and secret redaction.
 */

import assert from "node:assert/strict";
import { cliCommand, ROOT, runCli, tempConfig } from "../helpers/cli.ts";
import {
  startStreamableServer,
  type StreamableServer,
} from "../../testdata/http/streamable_server.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";

/** A server-everything child process listening on a loopback port. */
interface Everything {
  /** `http://127.0.0.1:PORT` */
  base: string;
  close(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts server-everything in `mode` (it reads PORT) and waits until the port answers. */
async function startEverything(mode: "streamableHttp" | "sse"): Promise<Everything> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", EVERYTHING, mode],
    cwd: ROOT,
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  const status = child.status.finally(() => exited = true);
  const close = async () => {
    if (!exited) child.kill("SIGTERM");
    await status;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return { base: `http://127.0.0.1:${port}`, close };
    } catch {
      if (exited || Date.now() > deadline) {
        await close();
        throw new Error(`server-everything (${mode}) did not start on port ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Runs the CLI under `script`, so stdout and stderr are a terminal; returns the screen. */
async function runOnTerminal(args: string[]): Promise<{ code: number; screen: string }> {
  const line = cliCommand(args).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const out = await new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, screen: new TextDecoder().decode(out.stdout) };
}

/** list, call and progress against one server-everything, by --url and by config. */
async function exerciseEverything(
  t: Deno.TestContext,
  url: string,
  transport: "http" | "sse",
): Promise<void> {
  await t.step("list --url", async () => {
    const r = await runCli(["list", "--url", url, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const [server] = JSON.parse(r.stdout);
    assert.equal(server.status, "connected", r.stdout);
    assert.equal(server.transport, transport);
    const names = server.tools.map((t: { name: string }) => t.name);
    for (const name of ["echo", "get-sum", "trigger-long-running-operation"]) {
      assert.ok(names.includes(name), names.join());
    }
    const human = await runCli(["list", "--url", url]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stdout,
      new RegExp(`^adhoc {2}connected {2}\\(${transport}\\) {2}\\d+ tools`),
    );
  });

  await t.step("call --url: echo and get-sum", async () => {
    const echo = await runCli(["call", "--url", url, "echo", "message=123"]);
    assert.equal(echo.code, 0, echo.stderr);
    assert.equal(echo.stdout, "Echo: 123\n");
    const sum = await runCli(["call", "--url", url, "get-sum", "a=2", "b=3.5"]);
    assert.equal(sum.code, 0, sum.stderr);
    assert.match(sum.stdout, /The sum of 2 and 3\.5 is 5\.5/);
  });

  await t.step("a config entry without type", async () => {
    await using cfg = await tempConfig({ servers: { ev: { url } } });
    const list = await runCli(["list", "ev", "--json", "--config", cfg.path]);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout)[0].transport, transport);
    const call = await runCli(["call", "ev.get-sum", "a=1", "b=2", "--config", cfg.path]);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /The sum of 1 and 2 is 3/);
  });

  await t.step("progress of a long operation arrives (drawn on a terminal)", async () => {
    await using cfg = await tempConfig({ servers: { ev: { url } } });
    const args = [
      "call",
      "ev",
      "trigger-long-running-operation",
      "duration=1",
      "steps=4",
      "--config",
      cfg.path,
    ];
    const { code, screen } = await runOnTerminal(args);
    assert.equal(code, 0, screen);
    // Each notification redraws the bar; at least two distinct steps were seen.
    const steps = new Set(screen.match(/\[#+-*\] \d+%/g) ?? []);
    assert.ok(steps.size >= 2, screen);
    assert.match(screen, /ev\.trigger-long-running-operation \[#+-*\] \d+%/);
    assert.match(screen, /Long running operation completed/);
  });
}

Deno.test("http e2e: server-everything over Streamable HTTP", async (t) => {
  const ev = await startEverything("streamableHttp");
  try {
    await exerciseEverything(t, `${ev.base}/mcp`, "http");
  } finally {
    await ev.close();
  }
});

Deno.test("http e2e: server-everything over legacy SSE (fallback from Streamable HTTP)", async (t) => {
  const ev = await startEverything("sse");
  try {
    await exerciseEverything(t, `${ev.base}/sse`, "sse");
  } finally {
    await ev.close();
  }
});

/** Waits until `check` holds (the server may see a disconnect after the CLI exited). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(check(), what);
}

async function withFixture(
  options: Parameters<typeof startStreamableServer>[0],
  body: (server: StreamableServer) => Promise<void>,
): Promise<void> {
  const server = await startStreamableServer(options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

Deno.test("http e2e: a session that expires mid-command is re-initialized", async () => {
  // initialize, then the session serves notifications/initialized and tools/list; the
  // tools/call gets 404 and must be replayed in a new session.
  await withFixture({ expireAfterRequests: 2 }, async (server) => {
    const r = await runCli(["call", "--url", server.url, "echo", "text=still here", "--verbose"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "still here\n");
    assert.ok(server.events.some((e) => e.name === "expired"));
    assert.match(r.stderr, /expired \(HTTP 404\); starting a new one/);
    const inits = server.requests.filter((q) => q.rpcMethod === "initialize");
    assert.equal(inits.length, 2);
    assert.equal(inits[1]!.headers["mcp-session-id"], undefined);
    const calls = server.requests.filter((q) => q.rpcMethod === "tools/call");
    assert.deepEqual(calls.map((q) => q.headers["mcp-session-id"]), ["session-1", "session-2"]);
  });
});

Deno.test("http e2e: an SSE answer cut before the response resumes with Last-Event-ID", async () => {
  await withFixture({ retryMs: 300 }, async (server) => {
    const r = await runCli(["call", "--url", server.url, "cut", "text=resumed"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "resumed\n");
    const resume = server.requests.find((q) => q.method === "GET" && q.headers["last-event-id"]);
    assert.ok(resume, "a GET with Last-Event-ID");
    const primed = server.requests.find((q) => q.rpcMethod === "tools/call");
    assert.ok(primed);
    assert.match(resume.headers["last-event-id"]!, /^e\d+$/);
    const closed = server.events.find((e) => e.name === "cut-closed")!;
    // The server's retry value (300 ms) is waited before reconnecting.
    assert.ok(resume.at - closed.at >= 250, `reconnected after ${resume.at - closed.at} ms`);
  });
});

Deno.test("http e2e: HTTP 500 with an HTML page exits 3 with status and a short excerpt", async () => {
  await withFixture({}, async (server) => {
    const r = await runCli(["call", "--url", server.url, "html500"]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, "");
    // The page is read as text: no tags, one line.
    assert.match(
      r.stderr,
      /HTTP 500 Internal Server Error: 500 Internal Server Error Internal Server Error\n/,
    );
    const first = r.stderr.split("\n")[0]!;
    assert.ok(first.length < 400, first);
    assert.doesNotMatch(r.stderr, /\n<body>/, "the page is folded onto one line");
  });
});

for (const mode of ["json", "sse"] as const) {
  Deno.test(`http e2e: no answer (${mode}) exits 5 and closes the connection`, async () => {
    await withFixture({ mode }, async (server) => {
      const r = await runCli(["call", "--url", server.url, "never", "--timeout", "1000"]);
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /did not answer tools\/call within 1 s/);
      if (mode === "sse") {
        await eventually(
          () => server.events.some((e) => e.name === "stream-cancelled"),
          "the server saw its answer stream cancelled",
        );
      }
      await eventually(
        () => server.requests.some((q) => q.method === "DELETE"),
        "the session was ended with DELETE",
      );
      const cancelled = server.requests.find((q) => q.rpcMethod === "notifications/cancelled");
      assert.ok(cancelled, "notifications/cancelled was sent");
    });
  });
}

Deno.test("http e2e: header values never appear in any output", async () => {
  const fromEnv = "env-secret-7f3a9c";
  const bearer = "bearer-secret-41d0e2";
  const fromFlag = "flag-secret-c0ffee";
  const flagBearer = "flag-bearer-5b5b5b";
  const secrets = [fromEnv, bearer, fromFlag, flagBearer];
  await withFixture({ bearerToken: bearer, mode: "sse" }, async (server) => {
    await using cfg = await tempConfig({
      servers: {
        fx: {
          url: server.url,
          headers: { "Authorization": "Bearer ${FX_TOKEN}", "X-Api-Key": "${FX_KEY}" },
        },
        wrong: { url: server.url, headers: { "Authorization": "Bearer ${FX_KEY}" } },
      },
    });
    const env = { FX_TOKEN: bearer, FX_KEY: fromEnv };
    const config = ["--config", cfg.path];
    const flags = [
      "--url",
      server.url,
      "--header",
      `X-Api-Key: ${fromFlag}`,
      "--header",
      `Authorization: Bearer ${flagBearer}`,
    ];
    const runs: { args: string[]; code: number }[] = [
      { args: ["list", "--verbose", ...config], code: 0 },
      { args: ["list", "--json", "--verbose", ...config], code: 0 },
      { args: ["call", "fx", "echo", "text=hi", "--verbose", ...config], code: 0 },
      { args: ["call", "fx", "echo", "text=hi", "--json", "--verbose", ...config], code: 0 },
      { args: ["call", "fx", "echo_headers", "--verbose", ...config], code: 0 },
      { args: ["call", "fx", "html500", "--verbose", ...config], code: 3 },
      { args: ["call", "fx", "leak500", "--verbose", ...config], code: 3 },
      { args: ["call", "fx", "leak500", "--json", ...config], code: 3 },
      { args: ["call", "fx", "never", "--timeout", "500", "--verbose", ...config], code: 5 },
      { args: ["call", "wrong", "echo", "--verbose", ...config], code: 4 },
      { args: ["list", "wrong", "--json", "--strict", ...config], code: 4 },
      // The flag's bearer is wrong for this server: 401.
      { args: ["call", ...flags, "echo", "text=hi", "--verbose"], code: 4 },
      { args: ["list", ...flags, "--json", "--verbose"], code: 0 },
    ];
    for (const run of runs) {
      const r = await runCli(run.args, { env });
      const label = run.args.join(" ");
      assert.equal(r.code, run.code, `${label}\n${r.stderr}`);
      for (const secret of secrets) {
        for (const form of [secret, encodeURIComponent(secret)]) {
          assert.ok(!r.stdout.includes(form), `${label}: stdout shows a secret`);
          assert.ok(!r.stderr.includes(form), `${label}: stderr shows a secret:\n${r.stderr}`);
        }
      }
    }
    // The secrets did reach the server: the redaction was not vacuous.
    const keys = server.requests.map((q) => q.headers["x-api-key"]);
    assert.ok(keys.includes(fromEnv) && keys.includes(fromFlag));
    assert.ok(server.requests.some((q) => q.headers["authorization"] === `Bearer ${bearer}`));
  });
});
