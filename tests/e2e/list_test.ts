import assert from "node:assert/strict";
import { assertNoProcessLeft, fixture, runCli, tempConfig, testdata } from "../helpers/cli.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";

Deno.test("list: fixture server, human output", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli(["list", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^fx {2}connected {2}\(stdio\) {2}6 tools$/m);
  assert.match(r.stdout, /^ {2}echo +Echo — Echoes the message back$/m);
});

Deno.test("list --json: documented shape on stdout, nothing else there", async () => {
  await using cfg = await tempConfig({
    servers: { fx: fixture(), off: { ...fixture(), enabled: false } },
  });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout);
  assert.equal(list.length, 2);
  const [fx, off] = list;
  assert.deepEqual(Object.keys(fx).slice(0, 3), ["name", "status", "transport"]);
  assert.equal(fx.name, "fx");
  assert.equal(fx.status, "connected");
  assert.equal(fx.transport, "stdio");
  assert.equal(fx.tools.length, 6);
  assert.deepEqual(fx.tools[0], {
    name: "echo",
    route: "mcp__fx__echo",
    title: "Echo",
    description: "Echoes the message back",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
  });
  assert.deepEqual(off, { name: "off", status: "disabled", transport: "stdio", tools: [] });
});

Deno.test("list: the real server-everything over stdio", async () => {
  await using cfg = await tempConfig({
    servers: { everything: { command: [Deno.execPath(), "run", "-A", EVERYTHING, "stdio"] } },
  });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const [s] = JSON.parse(r.stdout);
  assert.equal(s.status, "connected", s.error);
  const names = s.tools.map((t: { name: string }) => t.name);
  for (const n of ["echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"]) {
    assert.ok(names.includes(n), `missing ${n} in ${names}`);
  }
  const echo = s.tools.find((t: { name: string }) => t.name === "echo");
  assert.equal(echo.route, "mcp__everything__echo");
  assert.equal(echo.inputSchema.properties.message.type, "string");
  assert.equal(s.server.name, "mcp-servers/everything");
  assert.equal(s.server.protocolVersion, "2025-11-25");
});

Deno.test("list: ad-hoc --stdio server with --env", async () => {
  const cmd = fixture("--mode", "normal").command.map((a) => `'${a}'`).join(" ");
  const r = await runCli(["list", "--stdio", cmd, "--env", "A=1", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const [s] = JSON.parse(r.stdout);
  assert.equal(s.name, "adhoc");
  assert.equal(s.status, "connected");
});

Deno.test("malformed JSONC names file:line:column, exit 2", async () => {
  await using cfg = await tempConfig(
    '{\n  // servers\n  "servers": {\n    "a": { "command": "x" } oops\n  }\n}',
    "mcpctl.jsonc",
  );
  const r = await runCli(["list", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`${cfg.path}:4:29: invalid symbol`));
  assert.equal(r.stdout, "");
});

Deno.test("JSONC comments and trailing commas are accepted", async () => {
  await using cfg = await tempConfig(
    `{ /* c */ "servers": { "fx": ${JSON.stringify(fixture())}, }, // end\n }`,
    "mcpctl.jsonc",
  );
  const r = await runCli(["list", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /fx {2}connected/);
});

Deno.test("schema error names the file, the server and the field", async () => {
  await using cfg = await tempConfig({ servers: { a: { command: "x", args: "not-a-list" } } });
  const r = await runCli(["list", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /mcpctl\.json: server "a": field "args" must be an array of strings/);
});

Deno.test("unknown server name: exit 2 and the known names", async () => {
  await using cfg = await tempConfig({ servers: { alpha: fixture(), beta: fixture() } });
  const r = await runCli(["list", "alpah", "--config", cfg.path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown server 'alpah'; did you mean 'alpha'\?/);
  assert.match(r.stderr, /known servers: alpha, beta/);
});

Deno.test("command not found: failed with the reason; --strict exits 3", async () => {
  await using cfg = await tempConfig({
    servers: { ghost: { command: "mcpctl-no-such-command-xyz" }, fx: fixture() },
  });
  const r = await runCli(["list", "--config", cfg.path]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /ghost {2}failed/);
  assert.match(r.stdout, /command not found: mcpctl-no-such-command-xyz/);
  assert.match(r.stdout, /fx {2}connected/);
  const strict = await runCli(["list", "--strict", "--config", cfg.path]);
  assert.equal(strict.code, 3);
});

Deno.test("server exiting at start: its stderr tail is shown", async () => {
  await using cfg = await tempConfig({ servers: { crash: fixture("--mode", "exit-at-start") } });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(r.code, 0);
  const [s] = JSON.parse(r.stdout);
  assert.equal(s.status, "failed");
  assert.match(s.error, /exit code 7/);
  assert.match(s.error, /fixture: fatal: cannot open database/);
});

Deno.test("server never answers initialize: timeout, exit 5 with --strict, no process left", async () => {
  await using cfg = await tempConfig({});
  const pidfile = `${cfg.dir}/pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({ servers: { mute: fixture("--mode", "never-init", "--pidfile", pidfile) } }),
  );
  const r = await runCli(["list", "--strict", "--timeout", "1500", "--config", cfg.path]);
  assert.equal(r.code, 5, r.stderr + r.stdout);
  assert.match(r.stdout, /mute {2}failed/);
  assert.match(r.stdout, /did not answer initialize within 1\.5 s/);
  assert.ok(r.ms < 10_000, `took ${r.ms} ms`);
  await assertNoProcessLeft(pidfile);
});

Deno.test("oversized line fails the connection with a clear error", async () => {
  await using cfg = await tempConfig({ servers: { big: fixture("--mode", "oversize") } });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  const [s] = JSON.parse(r.stdout);
  assert.equal(s.status, "failed");
  assert.match(s.error, /larger than the frame limit of 1048576 bytes/);
  // A per-server limit raises it.
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: { big: { ...fixture("--mode", "oversize"), maxMessageBytes: 4e6 } },
    }),
  );
  const r2 = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(JSON.parse(r2.stdout)[0].status, "connected", r2.stdout);
});

Deno.test("non-JSON lines on stdout are skipped and counted in --verbose", async () => {
  await using cfg = await tempConfig({ servers: { noisy: fixture("--mode", "noisy") } });
  const r = await runCli(["list", "--verbose", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /noisy {2}connected/);
  assert.match(r.stderr, /\[noisy\] skipped a line that is not JSON: this is a log line/);
});

Deno.test("missing variable: enabled entry fails naming it, disabled entry blocks nothing", async () => {
  await using cfg = await tempConfig({
    servers: {
      needs: { ...fixture(), env: { TOKEN: "${MCPCTL_TEST_UNSET_VAR}" } },
      off: { ...fixture(), enabled: false, env: { TOKEN: "${MCPCTL_TEST_OTHER_UNSET}" } },
      ok: { ...fixture(), env: { X: "${MCPCTL_TEST_SET:-fallback}" } },
    },
  });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const byName = Object.fromEntries(
    JSON.parse(r.stdout).map((s: { name: string }) => [s.name, s]),
  );
  assert.equal(byName.needs.status, "failed");
  assert.match(byName.needs.error, /environment variable MCPCTL_TEST_UNSET_VAR is not set/);
  assert.match(byName.needs.error, /"env.TOKEN"/);
  assert.equal(byName.off.status, "disabled");
  assert.equal(byName.off.error, undefined);
  assert.equal(byName.ok.status, "connected");
});

Deno.test("10 servers, one never answers: about one timeout, not ten", async () => {
  await using cfg = await tempConfig({});
  const pidfile = `${cfg.dir}/pids`;
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < 9; i++) servers[`s${i}`] = fixture("--pidfile", pidfile);
  servers.mute = fixture("--mode", "never-init", "--pidfile", pidfile);
  await Deno.writeTextFile(cfg.path, JSON.stringify({ servers }));
  const r = await runCli(["list", "--json", "--timeout", "2000", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const list = JSON.parse(r.stdout);
  assert.equal(list.filter((s: { status: string }) => s.status === "connected").length, 9);
  assert.equal(list.find((s: { name: string }) => s.name === "mute").status, "failed");
  // One 2 s timeout plus start-up and a graceful close; ten in a row would be 20 s.
  assert.ok(r.ms < 8_000, `took ${r.ms} ms`);
  await assertNoProcessLeft(pidfile);
});

Deno.test("project config found by walking up; project entry overrides global", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture(), gl: fixture() } });
  const xdg = `${cfg.dir}/xdg`;
  await Deno.mkdir(`${xdg}/mcpctl`, { recursive: true });
  await Deno.writeTextFile(
    `${xdg}/mcpctl/config.json`,
    JSON.stringify({ servers: { fx: { command: "mcpctl-no-such-command-xyz" }, g: fixture() } }),
  );
  await Deno.mkdir(`${cfg.dir}/a/b`, { recursive: true });
  await Deno.writeTextFile(
    `${cfg.dir}/a/.mcp.json`,
    JSON.stringify({ mcpServers: { claude: { ...fixture(), disabled: true } } }),
  );
  const r = await runCli(["list", "--json"], {
    cwd: `${cfg.dir}/a/b`,
    env: { XDG_CONFIG_HOME: xdg, MCPCTL_HOME: `${cfg.dir}/home`, MCPCTL_TRUST_PROJECT: "1" },
  });
  assert.equal(r.code, 0, r.stderr);
  const byName = Object.fromEntries(
    JSON.parse(r.stdout).map((s: { name: string }) => [s.name, s]),
  );
  assert.deepEqual(Object.keys(byName).sort(), ["claude", "fx", "g", "gl"]);
  assert.equal(byName.fx.status, "connected"); // the project's fx won
  assert.equal(byName.claude.status, "disabled");
});

Deno.test("demo config from the README works", async () => {
  const r = await runCli(["--config", testdata("demo/mcpctl.json"), "list"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /demo {2}connected/);
});

Deno.test("list --json: schemas the border guard drops are absent, with a note", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture("--odd-schemas") } });
  const r = await runCli(["list", "--json", "--config", cfg.path]);
  assert.equal(r.code, 0, r.stderr);
  const tools = JSON.parse(r.stdout)[0].tools as Record<string, unknown>[];
  const looping = tools.find((t) => t.name === "looping")!;
  assert.equal(looping.inputSchema, undefined);
  assert.match((looping.schemaNotes as string[])[0]!, /^input schema dropped: \$ref cycle/);
  const elsewhere = tools.find((t) => t.name === "elsewhere")!;
  assert.match((elsewhere.schemaNotes as string[])[0]!, /external/);
  const echo = tools.find((t) => t.name === "echo")!;
  assert.equal(echo.schemaNotes, undefined);
  assert.equal((echo.inputSchema as { type: string }).type, "object");
  // A call to a tool whose schema was dropped says so, and --no-validate still sends it.
  const call = await runCli(["call", "fx", "looping", "--config", cfg.path]);
  assert.equal(call.code, 2);
  assert.match(call.stderr, /inputSchema was dropped \(\$ref cycle/);
  assert.match(call.stderr, /--no-validate/);
});
