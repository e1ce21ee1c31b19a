import assert from "node:assert/strict";
import {
  assertNoProcessLeft,
  cliCommand,
  fixture,
  ROOT,
  runCli,
  tempConfig,
} from "../helpers/cli.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const everything = { command: [Deno.execPath(), "run", "-A", EVERYTHING, "stdio"] };

async function readRecord(path: string): Promise<{ method?: string; params?: unknown }[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

Deno.test("call server-everything: echo keeps a numeric-looking string a string", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const r = await runCli(["call", "ev", "echo", "message=123", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Echo: 123\n");
  const dry = await runCli(["call", "ev.echo", "message=123", "--dry-run", "--config", cfg.path]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout).params, { name: "echo", arguments: { message: "123" } });
});

Deno.test("call server-everything: get-sum coerces numbers", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const r = await runCli(["call", "mcp__ev__get-sum", "a=2", "b=3.5", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /The sum of 2 and 3\.5 is 5\.5/);
});

Deno.test("call server-everything: get-tiny-image saves a valid PNG", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const dir = `${cfg.dir}/out`;
  const r = await runCli(["call", "ev", "get-tiny-image", "--save-dir", dir, "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const m = r.stdout.match(/\[image saved: (\S+\.png) \(image\/png, (\d+) bytes\)\]/);
  assert.ok(m, r.stdout);
  const bytes = await Deno.readFile(m[1]!);
  assert.equal(bytes.length, Number(m[2]));
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(m[1]!.startsWith(dir));
});

Deno.test("call server-everything: structured content, resource links, annotated message", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const sc = await runCli([
    "call",
    "ev",
    "get-structured-content",
    "location=Chicago",
    "--config",
    cfg.path,
  ]);
  assert.equal(sc.code, 0, sc.stderr);
  const scJson = await runCli([
    "call",
    "ev",
    "get-structured-content",
    "location=Chicago",
    "--json",
    "--config",
    cfg.path,
  ]);
  const result = JSON.parse(scJson.stdout);
  assert.equal(typeof result.structuredContent.temperature, "number");
  assert.match(sc.stdout, /temperature/);
  const links = await runCli(["call", "ev", "get-resource-links", "count=2", "--config", cfg.path]);
  assert.equal(links.code, 0, links.stderr);
  assert.equal((links.stdout.match(/\[resource link: demo:\/\/resource\//g) ?? []).length, 2);
  const ann = await runCli([
    "call",
    "ev",
    "get-annotated-message",
    "messageType=error",
    "includeImage=true",
    "--save-dir",
    `${cfg.dir}/img`,
    "--config",
    cfg.path,
  ]);
  assert.equal(ann.code, 0, ann.stderr);
  assert.match(ann.stdout, /Error: Operation failed/);
  assert.match(ann.stdout, /\[image saved: .*\.png/);
});

Deno.test("call server-everything: progress shown on a terminal, absent when piped", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const args = [
    "call",
    "ev",
    "trigger-long-running-operation",
    "duration=1",
    "steps=4",
    "--config",
    cfg.path,
  ];
  const piped = await runCli(args);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, "");
  assert.match(piped.stdout, /Long running operation completed/);
  // `script` gives the CLI a pseudo-terminal for stdout and stderr.
  const line = cliCommand(args).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const tty = await new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const screen = new TextDecoder().decode(tty.stdout);
  assert.equal(tty.code, 0, screen);
  assert.match(screen, /ev\.trigger-long-running-operation \[#+-*\] \d+%/);
  assert.match(screen, /Long running operation completed/);
});

Deno.test("call fixture: isError prints the content and exits 1", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli(["call", "fx", "fail", "--config", cfg.path]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "it failed\n");
  assert.match(r.stderr, /fx\.fail reported an error \(isError\)/);
});

Deno.test("call fixture: validation failure exits 2 and sends nothing", async () => {
  await using cfg = await tempConfig({});
  const record = `${cfg.dir}/record.jsonl`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({ servers: { fx: fixture("--record", record) } }),
  );
  const r = await runCli(["call", "fx", "add", "a=x", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /invalid arguments for fx\.add:/);
  assert.match(r.stderr, /missing required field "b"/);
  assert.match(r.stderr, /a: expected number, got string/);
  const methods = (await readRecord(record)).map((m) => m.method);
  assert.ok(methods.includes("tools/list"));
  assert.ok(!methods.includes("tools/call"), methods.join());
});

Deno.test("call fixture: unknown tool exits 2 with the closest names", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli(["call", "fx", "ecko", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown tool 'ecko' on server 'fx'; did you mean 'echo'\?/);
});

Deno.test("call fixture: --json output equals what the server sent", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli([
    "call",
    "fx",
    "typed",
    "text=5",
    "count=3",
    "flag=true",
    "list=a",
    "list=b",
    'obj:={"k":[1]}',
    "--json",
    "--config",
    cfg.path,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(JSON.parse(r.stdout), {
    content: [],
    structuredContent: { text: "5", count: 3, flag: true, list: ["a", "b"], obj: { k: [1] } },
  });
});

Deno.test("call fixture: --args from stdin, @file values, key=value wins", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  await Deno.writeTextFile(`${cfg.dir}/msg.txt`, "from a file");
  const r = await runCli(
    [
      "call",
      "fx",
      "typed",
      "--args",
      "-",
      `text=@${cfg.dir}/msg.txt`,
      "--json",
      "--config",
      cfg.path,
    ],
    { stdin: '{"text": "overridden", "count": 7}' },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).structuredContent, { text: "from a file", count: 7 });
});

Deno.test("call fixture: a JSON-RPC error exits 3 with its code and message", async () => {
  const adhoc = fixture().command.map((a) => `'${a}'`).join(" ");
  const r = await runCli(["call", "--stdio", adhoc, "broken"]);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /adhoc\.broken failed: JSON-RPC error -32000: database is down/);
});

Deno.test("call fixture: timeout exits 5 and leaves no process", async () => {
  await using cfg = await tempConfig({});
  const pidfile = `${cfg.dir}/pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({ servers: { fx: fixture("--mode", "hang-call", "--pidfile", pidfile) } }),
  );
  const r = await runCli([
    "call",
    "fx",
    "echo",
    "message=hi",
    "--timeout",
    "1000",
    "--config",
    cfg.path,
  ]);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /did not answer tools\/call within 1 s/);
  await assertNoProcessLeft(pidfile);
});

Deno.test("call fixture: SIGINT cancels the request, exit 130, no process left", async () => {
  await using cfg = await tempConfig({});
  const pidfile = `${cfg.dir}/pids`;
  const record = `${cfg.dir}/record.jsonl`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: { fx: fixture("--mode", "hang-call", "--pidfile", pidfile, "--record", record) },
    }),
  );
  let child: Deno.ChildProcess | undefined;
  const pending = runCli(["call", "fx", "echo", "message=hi", "--config", cfg.path], {
    onSpawn: (c) => child = c,
  });
  // Wait until the call reached the server.
  for (let i = 0; i < 200; i++) {
    if ((await readRecord(record)).some((m) => m.method === "tools/call")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child!.kill("SIGINT");
  const r = await pending;
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /interrupted/);
  const cancelled = (await readRecord(record)).find((m) => m.method === "notifications/cancelled");
  assert.ok(cancelled, "the server observed notifications/cancelled");
  assert.equal((cancelled.params as { requestId: number }).requestId, 3);
  await assertNoProcessLeft(pidfile);
});

Deno.test("call: piping into head ends quietly", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture("--tools", "1") } });
  const line = cliCommand([
    "call",
    "fx",
    "echo",
    `message=${"line\n".repeat(20000)}`,
    "--config",
    cfg.path,
  ]).map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const out = await new Deno.Command("bash", {
    args: ["-c", `set -o pipefail; ${line} | head -n 1; echo "rc=\${PIPESTATUS[0]}" >&2`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(new TextDecoder().decode(out.stdout), "line\n");
  assert.doesNotMatch(stderr, /error|Error|stack|at /);
  assert.match(stderr, /rc=0/);
});

Deno.test("call: usage errors", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli(["call", "fx", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /missing TOOL after server 'fx'/);
  const bad = await runCli(["call", "fx", "echo", "novalue", "--config", cfg.path]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /is not key=value/);
});
