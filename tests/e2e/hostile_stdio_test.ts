/**
 * The reliability and security battery, stdio half: one careless or malicious server
 * behaviour per test (`testdata/hostile/stdio_server.ts --mode MODE`). Each test checks
 * the exit code, the message (naming the server and what went wrong, with the stderr
 * tail), a time bound, and that no process is left behind (`ProcessWatch`).
 */

import assert from "node:assert/strict";
import {
  type CliResult,
  runCli,
  type RunCliOptions,
  tempConfig,
  testdata,
} from "../helpers/cli.ts";
import { ProcessWatch, watchPeakRss } from "../helpers/processes.ts";
import type { Mode } from "../../testdata/hostile/stdio_server.ts";

/** A config with one hostile server, `h`, and the process watch of the test. */
async function scenario(mode: Mode, entry: Record<string, unknown> = {}, flags: string[] = []) {
  const watch = await ProcessWatch.create();
  const cfg = await tempConfig({
    servers: {
      h: {
        command: [
          Deno.execPath(),
          "run",
          "-A",
          "--no-config",
          testdata("hostile/stdio_server.ts"),
          "--mode",
          mode,
          "--pidfile",
          watch.pidfile,
          ...flags,
        ],
        ...entry,
      },
    },
  });
  return {
    watch,
    run(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
      return runCli([...args, "--config", cfg.path], {
        killAfterMs: 30_000,
        ...options,
        // Nothing of the user's (state, cache, credentials) is read or written.
        env: {
          ...watch.env,
          MCPCTL_HOME: `${cfg.dir}/home`,
          XDG_STATE_HOME: `${cfg.dir}/state`,
          XDG_CONFIG_HOME: `${cfg.dir}/xdg`,
          ...options.env,
        },
      });
    },
    async [Symbol.asyncDispose]() {
      try {
        await watch[Symbol.asyncDispose]();
      } finally {
        await cfg[Symbol.asyncDispose]();
      }
    },
  };
}

function within(r: CliResult, ms: number): void {
  assert.ok(r.ms < ms, `took ${Math.round(r.ms)} ms, over ${ms} ms`);
}

// ESC, BEL and the one-byte CSI and OSC: what a terminal would act on.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const ESCAPE_BYTES = /[\x1b\x07\x9b\x9d]/;

Deno.test("hostile stdio [exit-now]: dies at start → exit 3, exit code and stderr tail", async () => {
  await using s = await scenario("exit-now");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /server "h" exited \(exit code 9\); last stderr lines:/);
  assert.match(r.stderr, /hostile: fatal: cannot open \/etc\/hostile\.toml/);
  assert.equal(r.stdout, "");
  within(r, 10_000);
});

Deno.test("hostile stdio [exit-mid-call]: dies during tools/call → exit 3 at once", async () => {
  await using s = await scenario("exit-mid-call");
  // A long timeout: the failure must come from the exit, not from a timer.
  const r = await s.run(["call", "h", "echo", "text=hi", "--timeout", "30000"]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /server "h" exited \(exit code 1\)/);
  assert.match(r.stderr, /hostile: segmentation fault while calling echo/);
  within(r, 10_000);
});

Deno.test("hostile stdio [never-init]: silent server → exit 5 after --timeout", async () => {
  await using s = await scenario("never-init");
  const r = await s.run(["call", "h", "echo", "text=hi", "--timeout", "1500"]);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /server "h" did not answer initialize within 1\.5 s/);
  assert.match(r.stderr, /hostile: waiting for a license server/);
  assert.match(r.stderr, /hint: raise the limit with --timeout MS/);
  assert.ok(r.ms >= 1500, `gave up after ${r.ms} ms, before the timeout`);
  within(r, 10_000);
});

Deno.test("hostile stdio [bad-version]: unsupported protocol version → exit 3", async () => {
  await using s = await scenario("bad-version");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /server "h" answered protocol version "1999-01-01"/);
  assert.match(r.stderr, /supports 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05/);
  assert.match(r.stderr, /hostile: speaking protocol 1999-01-01 only/);
  within(r, 10_000);
});

Deno.test("hostile stdio [stdout-logs]: log lines among the messages are skipped", async () => {
  await using s = await scenario("stdout-logs");
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  assert.match(r.stderr, /\[h\] skipped a line that is not JSON: INFO hostile server/);
  assert.match(r.stderr, /\[h\] skipped a JSON value that is not a message/);
  within(r, 10_000);
});

Deno.test("hostile stdio [huge-line]: a 2 MiB line → exit 3 naming the limit, fast", async () => {
  await using s = await scenario("huge-line");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /server "h" sent a message larger than the frame limit of 1048576 bytes \(set maxMessageBytes to raise it\)/,
  );
  assert.match(r.stderr, /hostile: about to send a very long line/);
  // The server, blocked writing the rest of its line, must not hold up the close.
  within(r, 5_000);
  // maxMessageBytes in the entry raises the limit.
  await using big = await scenario("huge-line", { maxMessageBytes: 4 * 1024 * 1024 });
  const ok = await big.run(["call", "h", "echo", "--json"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).content[0].text.length, 2 * 1024 * 1024);
});

Deno.test("hostile stdio [stderr-flood]: 50 MB of stderr, the call works, memory bounded", async () => {
  await using s = await scenario("stderr-flood");
  let rss: { stop(): Promise<number> } | undefined;
  const r = await s.run(["call", "h", "echo", "text=hi"], {
    onSpawn: (child) => rss = watchPeakRss(child.pid),
  });
  const peak = await rss!.stop();
  assert.equal(r.code, 0, r.stderr);
  // The server writes all 50 MB (blocking) before it answers: the answer proves the
  // flood was drained.
  assert.equal(r.stdout, "echo: hi\n");
  if (Deno.build.os === "linux") {
    assert.ok(peak > 0, "no memory sample");
    assert.ok(peak < 150 * 1024 * 1024, `peak RSS ${Math.round(peak / 1048576)} MiB`);
  }
  within(r, 20_000);
});

Deno.test("hostile stdio [immortal]: ignores stdin close and SIGTERM → SIGKILL ends it", async () => {
  await using s = await scenario("immortal");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  // Two grace periods of 2 s (after stdin close, after SIGTERM), then SIGKILL.
  assert.ok(r.ms >= 4_000, `closed after ${r.ms} ms: the grace periods were skipped`);
  within(r, 12_000);
  const [server] = await s.watch.recordedPids();
  assert.ok(server !== undefined);
  assert.ok(!(await s.watch.live()).some((p) => p.pid === server), "server still alive");
});

Deno.test("hostile stdio [immortal-family]: a second Ctrl-C ends server and grandchild at once", async () => {
  const record = await Deno.makeTempFile({ prefix: "mcpctl-record-" });
  try {
    await using s = await scenario("immortal-family", {}, ["--record", record]);
    let signalled = 0;
    let firstAt = 0;
    const r = await s.run(["call", "h", "echo", "text=hi"], {
      onSpawn: (child) => {
        void (async () => {
          // Once the call reached the server: Ctrl-C, then Ctrl-C again.
          for (let i = 0; i < 200; i++) {
            if ((await Deno.readTextFile(record)).includes("tools/call")) break;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          firstAt = performance.now();
          child.kill("SIGINT");
          signalled++;
          await new Promise((resolve) => setTimeout(resolve, 300));
          try {
            child.kill("SIGINT");
            signalled++;
          } catch { /* already gone */ }
        })();
      },
    });
    assert.equal(signalled, 2, "both interrupts were sent");
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /interrupted again; exiting now/);
    // Without the second Ctrl-C the close would wait out two grace periods (4 s).
    const afterFirst = performance.now() - firstAt;
    assert.ok(afterFirst < 2_500, `exited ${Math.round(afterFirst)} ms after the first Ctrl-C`);
    assert.equal((await s.watch.recordedPids()).length, 2, "server and grandchild pids");
    // Server (immune to SIGTERM) and grandchild were SIGKILLed with their process group.
    await s.watch.assertNoneLeft(1_000);
  } finally {
    await Deno.remove(record);
  }
});

Deno.test("hostile stdio [grandchild]: a grandchild holding stdout is ended with the server", async () => {
  await using s = await scenario("grandchild");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  within(r, 8_000);
  const pids = await s.watch.recordedPids();
  assert.equal(pids.length, 2, "server and grandchild pids");
  // mcpctl ends the server's whole process group, grandchild included.
  await s.watch.assertNoneLeft();
});

Deno.test("hostile stdio [grandchild-escaped]: mcpctl finishes; the escaped grandchild is the server's", async () => {
  await using s = await scenario("grandchild-escaped");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  // It still holds the server's stdout and stderr open: mcpctl must not wait for it.
  within(r, 8_000);
  const [server, grandchild] = await s.watch.recordedPids();
  assert.ok(server !== undefined && grandchild !== undefined);
  // A process that left the process group (setsid) is beyond mcpctl's reach; the test
  // cleans it up itself, and the watch then checks nothing else is left.
  const live = await s.watch.live();
  if (Deno.build.os === "linux") {
    assert.deepEqual(live.map((p) => p.pid), [grandchild], JSON.stringify(live));
  }
  s.watch.kill([grandchild]);
});

Deno.test("hostile stdio [unknown-id]: responses to unknown ids are ignored", async () => {
  await using s = await scenario("unknown-id");
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  assert.match(r.stderr, /ignored a response to unknown or finished request 987654/);
  assert.match(r.stderr, /ignored a response to unknown or finished request "never-sent"/);
  within(r, 10_000);
});

Deno.test("hostile stdio [duplicate-id]: the first answer wins, repeats are ignored", async () => {
  await using s = await scenario("duplicate-id");
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  assert.match(r.stderr, /ignored a response to unknown or finished request 3/);
  within(r, 10_000);
});

Deno.test("hostile stdio [batch]: answers inside JSON-RPC batches are read", async () => {
  await using s = await scenario("batch");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  within(r, 10_000);
});

Deno.test("hostile stdio [invalid-utf8]: an answer that is not UTF-8 fails that call at once, not at the timeout", async () => {
  await using s = await scenario("invalid-utf8");
  // A long timeout: the failure must come from the answer, not from a timer.
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose", "--timeout", "30000"]);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /mcpctl: h\.echo failed: .*server "h" answered with bytes that are not valid UTF-8 and not JSON once decoded/,
  );
  // A log line with such bytes is no answer: skipped, and said so under --verbose.
  assert.match(r.stderr, /\[h\] skipped a line that is not valid UTF-8 nor JSON/);
  // The real answer that followed came too late: one answer per request.
  assert.match(r.stderr, /ignored a response to unknown or finished request 3/);
  within(r, 10_000);
});

Deno.test("hostile stdio [invalid-utf8-text]: bytes that are not UTF-8 inside a string are read as U+FFFD", async () => {
  await using s = await scenario("invalid-utf8-text");
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose", "--timeout", "30000"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi [\ufffd\ufffd(]\n");
  assert.match(r.stderr, /\[h\] read a message with bytes that are not UTF-8 \(shown as U\+FFFD\)/);
  const json = await s.run(["call", "h", "echo", "text=hi", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout).content[0].text, "echo: hi [\ufffd\ufffd(]");
  within(r, 10_000);
});

Deno.test("hostile stdio [hostile-log]: --verbose log lines show logger, level and data stripped", async () => {
  await using s = await scenario("hostile-log");
  const r = await s.run(["call", "h", "echo", "text=hi", "--verbose"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi\n");
  assert.doesNotMatch(r.stderr, ESCAPE_BYTES, JSON.stringify(r.stderr));
  assert.doesNotMatch(r.stderr, /[\u202a-\u202e\u2066-\u2069\r]/, JSON.stringify(r.stderr));
  // Nothing is lost but the controls: the words are still there to read.
  assert.match(r.stderr, /^\[h log error dbtxt\.exe\] data here$/m);
  assert.match(r.stderr, /^\[h log info x\] \{"nested":"/m);
  within(r, 10_000);
});

Deno.test("hostile stdio [many-tools]: 10,000 tools are listed in bounded time", async () => {
  await using s = await scenario("many-tools");
  const r = await s.run(["list", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const [h] = JSON.parse(r.stdout);
  assert.equal(h.status, "connected");
  assert.equal(h.tools.length, 10_000);
  assert.equal(h.tools[9_999].route, "mcp__h__tool_09999");
  within(r, 10_000);
  const call = await s.run(["call", "h", "tool_09999", "text=last"]);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(call.stdout, "echo: last\n");
});

Deno.test("hostile stdio [endless-pages]: tools/list paging forever stops at the cap", async () => {
  await using s = await scenario("endless-pages");
  const r = await s.run(["list", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const [h] = JSON.parse(r.stdout);
  assert.equal(h.status, "connected");
  assert.equal(h.tools.length, 100);
  assert.match(h.warnings.join("\n"), /stopped after 100 pages of tools\/list/);
  assert.match(
    r.stderr,
    /mcpctl: h: stopped after 100 pages of tools\/list: the server kept paging/,
  );
  within(r, 10_000);
  // A call still works: the cap applies there too.
  const call = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(call.stdout, "echo: hi\n");
});

Deno.test("hostile stdio [bad-names]: bad tool names not advertised, escapes stripped", async () => {
  await using s = await scenario("bad-names");
  const r = await s.run(["list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, ESCAPE_BYTES, JSON.stringify(r.stdout));
  assert.doesNotMatch(r.stdout, /[\u202a-\u202e\u2066-\u2069]/);
  assert.match(r.stdout, /^h {2}connected {2}\(stdio\) {2}1 tool$/m);
  assert.match(
    r.stdout,
    /^ {2}echo +Echo — Red alert, clear , link click, C1 , bell , bidi txt\.exe$/m,
  );
  assert.match(r.stdout, /\(not advertised: a__b: tool name contains '__'\)/);
  assert.match(r.stdout, /\(not advertised: x+…: route would be 78 bytes, over 64\)/);
  assert.match(r.stdout, /\(not advertised: dup: more than one tool has this name\)/);
  assert.match(r.stdout, /\(not advertised: evilname: tool name has characters outside/);
  const json = await s.run(["list", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  // --json keeps the server's text exactly, but written so that no terminal acts on it:
  // ESC and BEL as JSON escapes, and so the C1 controls and bidi overrides.
  assert.doesNotMatch(json.stdout, ESCAPE_BYTES);
  assert.doesNotMatch(json.stdout, /[\u202a-\u202e\u2066-\u2069]/);
  const [h] = JSON.parse(json.stdout);
  const description: string = h.tools[0].description;
  for (const raw of ["\x1b[31malert", "\x9b31m", "\u202etxt.exe"]) {
    assert.ok(description.includes(raw), `${JSON.stringify(raw)} kept in --json`);
  }
  assert.deepEqual(h.tools.map((t: { name: string }) => t.name), ["echo"]);
  assert.deepEqual(
    h.rejectedTools.map((t: { name: string }) => t.name),
    ["a__b", "x".repeat(70), "dup", "evil\x1b[2Jname"],
  );
  const call = await s.run(["call", "h", "a__b", "text=x"]);
  assert.equal(call.code, 2, call.stderr);
  assert.match(call.stderr, /tool 'a__b' of server 'h' cannot be addressed/);
  within(r, 10_000);
});

Deno.test("hostile stdio [ref-cycle]: a $ref cycle → exit 2; --no-validate sends as is", async () => {
  await using s = await scenario("ref-cycle");
  const r = await s.run(["call", "h", "loop", "node=1"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /inputSchema/);
  assert.match(r.stderr, /--no-validate/);
  assert.doesNotMatch(r.stderr, /unexpected/);
  within(r, 10_000);
  const sent = await s.run(["call", "h", "loop", "node=1", "--no-validate"]);
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(sent.stdout, 'echo: {"node":1}\n');
});

Deno.test("hostile stdio [server-requests]: unsupported server requests get -32601", async () => {
  await using s = await scenario("server-requests");
  const r = await s.run(["call", "h", "echo", "text=hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "echo: hi | srv-sampling=-32601 srv-bogus=-32601 srv-ping=ok\n");
  within(r, 10_000);
});
