import assert from "node:assert/strict";
import { fixture, runCli, tempConfig } from "../helpers/cli.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const everything = { command: [Deno.execPath(), "run", "-A", EVERYTHING, "stdio"] };

async function starts(pidfile: string): Promise<number> {
  const text = await Deno.readTextFile(pidfile).catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

Deno.test("describe fixture: signature, title, call line and schema; three selector forms", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["describe", "fx", "echo", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.equal(lines[0], "fx.echo: Echo");
  assert.equal(lines[1], "  echo(message: string)");
  assert.equal(lines[2], "  call: mcpctl call fx echo message=…");
  assert.ok(lines.includes("Echoes the message back"));
  assert.match(r.stdout, /input schema:\n\{\n {2}"type": "object",/);
  assert.doesNotMatch(r.stdout, /hints from the server/);
  const dotted = await runCli(["describe", "fx.add", "--json", "--config", cfg.path], { env });
  const routed = await runCli(["describe", "mcp__fx__add", "--json", "--config", cfg.path], {
    env,
  });
  assert.equal(dotted.code, 0, dotted.stderr);
  assert.equal(dotted.stdout, routed.stdout);
  assert.deepEqual(JSON.parse(dotted.stdout), {
    server: "fx",
    tool: "add",
    route: "mcp__fx__add",
    description: "Adds two numbers",
    signature: "add(a: number, b: number)",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  });
});

Deno.test("describe server-everything: hints marked unverified, output schema shown", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["describe", "ev", "get-structured-content", "--config", cfg.path], {
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ev\.get-structured-content: Get Structured Content Tool\n/);
  assert.match(
    r.stdout,
    /\n {2}get-structured-content\(location: "New York"\|"Chicago"\|"Los Angeles"\)\n/,
  );
  assert.match(
    r.stdout,
    /\n {2}hints from the server, not verified: read-only, not destructive, idempotent, closed world\n/,
  );
  assert.match(r.stdout, /\noutput schema:\n\{\n/);
  assert.match(r.stdout, /"temperature"/);
  const json = await runCli(["describe", "ev.get-sum", "--json", "--config", cfg.path], { env });
  assert.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout);
  assert.equal(view.signature, "get-sum(a: number, b: number)");
  assert.equal(view.annotations.readOnlyHint, true);
  assert.equal(view.inputSchema.properties.a.type, "number");
});

Deno.test("describe: unknown tool exits 2 with the closest names", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["describe", "fx", "ecko", "--config", cfg.path], { env });
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /unknown tool 'ecko' on server 'fx'; did you mean 'echo'/);
  const missing = await runCli(["describe", "fx", "--config", cfg.path], { env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing TOOL after server 'fx'/);
});

Deno.test("describe: cache first; a tool missing from the cache asks the server once", async () => {
  await using cfg = await tempConfig({});
  const pids = `${cfg.dir}/pids`;
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const write = (...flags: string[]) =>
    Deno.writeTextFile(
      cfg.path,
      JSON.stringify({ servers: { fx: fixture("--pidfile", pids, ...flags) } }),
    );
  await write();
  const first = await runCli(["describe", "fx", "echo", "--config", cfg.path], { env });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(await starts(pids), 1);
  const second = await runCli(["describe", "fx", "add", "--config", cfg.path], { env });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(await starts(pids), 1, "the second describe must come from the cache");
  const unknown = await runCli(["describe", "fx", "nope", "--config", cfg.path], { env });
  assert.equal(unknown.code, 2);
  assert.equal(await starts(pids), 2, "an unknown tool is checked with the server once");
  const refreshed = await runCli(["describe", "fx", "add", "--refresh", "--config", cfg.path], {
    env,
  });
  assert.equal(refreshed.code, 0, refreshed.stderr);
  assert.equal(await starts(pids), 3);
});

Deno.test("describe: schemas that cannot be validated are dropped and said", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture("--odd-schemas") } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["describe", "fx", "looping", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /\ninput schema dropped: \$ref cycle \(#\/\$defs\/b → #\/\$defs\/a → #\/\$defs\/b\)\n/,
  );
  assert.match(r.stdout, /\ninput schema:\n {2}\(none shown\)\n/);
  assert.equal(r.stdout.split("\n")[1], "  looping(…)");
  const json = await runCli(["describe", "fx", "elsewhere", "--json", "--config", cfg.path], {
    env,
  });
  assert.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout);
  assert.equal(view.inputSchema, undefined);
  assert.equal(view.outputSchema, undefined);
  assert.deepEqual(view.notes, [
    "input schema dropped: $ref to an external document (https://example.com/x.json)",
    'output schema dropped: not an object schema (type "string")',
  ]);
});

Deno.test("list --schema: every tool of one server in full; --json views", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture(), other: fixture() } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["list", "fx", "--schema", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  const heads = r.stdout.split("\n").filter((l) => /^fx\.\S+/.test(l));
  assert.deepEqual(heads, [
    "fx.echo: Echo",
    "fx.add",
    "fx.fail",
    "fx.broken",
    "fx.slow",
    "fx.typed",
  ]);
  assert.match(
    r.stdout,
    /\n {2}typed\(\[text: string\], \[count: integer\], \[flag: boolean\], \[list: string\[\]\], \[obj: object\]\)\n/,
  );
  assert.doesNotMatch(r.stdout, /^other\./m);
  const json = await runCli(["list", "--schema", "--json", "--config", cfg.path], { env });
  assert.equal(json.code, 0, json.stderr);
  const views = JSON.parse(json.stdout);
  assert.equal(views.length, 12);
  assert.deepEqual(Object.keys(views[0]).slice(0, 4), ["server", "tool", "route", "signature"]);
});
