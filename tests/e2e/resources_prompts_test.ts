import assert from "node:assert/strict";
import { assertNoProcessLeft, fixture, runCli, tempConfig } from "../helpers/cli.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
const everything = { command: [Deno.execPath(), "run", "-A", EVERYTHING, "stdio"] };

Deno.test("resources server-everything: list resources and templates (all pages)", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["resources", "ev", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Resources \(\d+\):\n/);
  assert.match(
    r.stdout,
    /\n {2}demo:\/\/resource\/static\/document\/architecture\.md {2}architecture\.md \(text\/markdown\)/,
  );
  assert.match(
    r.stdout,
    /\nResource templates \(2\):\n {2}demo:\/\/resource\/dynamic\/text\/\{resourceId\}/,
  );
  const json = await runCli(["resources", "ev", "--json", "--config", cfg.path], { env });
  const listing = JSON.parse(json.stdout);
  assert.ok(listing.resources.length >= 1);
  assert.equal(listing.resourceTemplates.length, 2);
});

Deno.test("resources server-everything: read text, and a blob saved as a file", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const text = await runCli([
    "resources",
    "ev",
    "demo://resource/dynamic/text/7",
    "--config",
    cfg.path,
  ], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Resource 7: This is a plaintext resource/);
  const doc = await runCli([
    "resources",
    "ev",
    "demo://resource/static/document/architecture.md",
    "--config",
    cfg.path,
  ], { env });
  assert.match(doc.stdout, /^# Everything Server/);
  const dir = `${cfg.dir}/saved`;
  const blob = await runCli([
    "resources",
    "ev",
    "demo://resource/dynamic/blob/3",
    "--save-dir",
    dir,
    "--config",
    cfg.path,
  ], { env });
  assert.equal(blob.code, 0, blob.stderr);
  const m = blob.stdout.match(
    /^\[resource: demo:\/\/resource\/dynamic\/blob\/3 saved: (\S+) \(([^,]+), (\d+) bytes\)\]\n$/,
  );
  assert.ok(m, blob.stdout);
  assert.ok(m[1]!.startsWith(`${dir}/blob-3`), m[1]);
  const bytes = await Deno.readFile(m[1]!);
  assert.equal(bytes.length, Number(m[3]));
  const json = await runCli([
    "resources",
    "ev",
    "demo://resource/dynamic/blob/3",
    "--json",
    "--config",
    cfg.path,
  ], { env });
  const [content] = JSON.parse(json.stdout).contents;
  assert.equal(typeof content.blob, "string");
  // The blob is fabricated anew on every read; its shape stays the same.
  assert.match(atob(content.blob), /^Resource 3: /);
  assert.match(new TextDecoder().decode(bytes), /^Resource 3: /);
});

Deno.test("resources: a server without resources", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["resources", "fx", "--config", cfg.path], { env });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /server 'fx' does not offer resources/);
  const read = await runCli(["resources", "fx", "x://y", "--config", cfg.path], { env });
  assert.equal(read.code, 2);
});

Deno.test("prompts server-everything: list, get with arguments, argument checks", async () => {
  await using cfg = await tempConfig({ servers: { ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const list = await runCli(["prompts", "ev", "--config", cfg.path], { env });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^args-prompt\(city, \[state\]\) {2}Arguments Prompt — /m);
  assert.match(list.stdout, /^ {2}city: Name of the city$/m);
  const get = await runCli([
    "prompts",
    "ev",
    "args-prompt",
    "city=Paris",
    "state=Texas",
    "--config",
    cfg.path,
  ], { env });
  assert.equal(get.code, 0, get.stderr);
  assert.equal(get.stdout, "[user]\nWhat's weather in Paris, Texas?\n");
  const json = await runCli([
    "prompts",
    "ev",
    "args-prompt",
    "city=Oslo",
    "--json",
    "--config",
    cfg.path,
  ], { env });
  assert.equal(JSON.parse(json.stdout).messages[0].content.text, "What's weather in Oslo?");
  const missing = await runCli(["prompts", "ev", "args-prompt", "--config", cfg.path], { env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /prompt 'args-prompt' needs city=…/);
  const unknown = await runCli([
    "prompts",
    "ev",
    "args-prompt",
    "city=x",
    "town=y",
    "--config",
    cfg.path,
  ], { env });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /has no argument 'town'/);
  const noPrompt = await runCli(["prompts", "ev", "arg-prompt", "--config", cfg.path], { env });
  assert.equal(noPrompt.code, 2);
  assert.match(
    noPrompt.stderr,
    /unknown prompt 'arg-prompt' on server 'ev'; did you mean 'args-prompt'/,
  );
  const embedded = await runCli([
    "prompts",
    "ev",
    "resource-prompt",
    "resourceType=Text",
    "resourceId=2",
    "--config",
    cfg.path,
  ], { env });
  assert.equal(embedded.code, 0, embedded.stderr);
  assert.match(embedded.stdout, /\[resource: demo:\/\/resource\/dynamic\/text\/2\]/);
});

Deno.test("ping: round-trip ms; --json; exit 5 on timeout", async () => {
  await using cfg = await tempConfig({});
  const pids = `${cfg.dir}/pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: {
        ev: everything,
        fx: fixture(),
        mute: fixture("--mode", "never-init", "--pidfile", pids),
      },
    }),
  );
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["ping", "ev", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ev: \d+(\.\d)? ms\n$/);
  const json = await runCli(["ping", "fx", "--json", "--config", cfg.path], { env });
  assert.equal(json.code, 0, json.stderr);
  const answer = JSON.parse(json.stdout);
  assert.equal(answer.server, "fx");
  assert.equal(typeof answer.ms, "number");
  const slow = await runCli(["ping", "mute", "--timeout", "500", "--config", cfg.path], { env });
  assert.equal(slow.code, 5, slow.stderr);
  assert.equal(slow.stdout, "");
  await assertNoProcessLeft(pids);
});

Deno.test("roots: server-filesystem works in the working directory and every --root", async () => {
  await using cfg = await tempConfig({
    servers: { fs: { command: [Deno.execPath(), "run", "-A", FILESYSTEM] } },
  });
  const work = await Deno.realPath(await Deno.makeTempDir({ dir: cfg.dir, prefix: "work" }));
  const data = await Deno.realPath(await Deno.makeTempDir({ dir: cfg.dir, prefix: "data" }));
  await Deno.writeTextFile(`${data}/note.txt`, "hello from a root\n");
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const dirs = await runCli([
    "call",
    "fs",
    "list_allowed_directories",
    "--root",
    `../${data.split("/").pop()}`,
    "--config",
    cfg.path,
  ], { env, cwd: work });
  assert.equal(dirs.code, 0, dirs.stderr);
  assert.match(dirs.stdout, new RegExp(`^${work}$`, "m"));
  assert.match(dirs.stdout, new RegExp(`^${data}$`, "m"));
  const read = await runCli([
    "call",
    "fs",
    "read_text_file",
    `path=${data}/note.txt`,
    "--root",
    data,
    "--config",
    cfg.path,
  ], { env, cwd: work });
  assert.equal(read.code, 0, read.stderr);
  assert.equal(read.stdout, "hello from a root\n");
  const outside = await runCli([
    "call",
    "fs",
    "read_text_file",
    `path=${data}/note.txt`,
    "--config",
    cfg.path,
  ], { env, cwd: work });
  assert.notEqual(outside.code, 0, "without --root the data directory is not offered");
  const describe = await runCli(["describe", "fs", "read_text_file", "--config", cfg.path], {
    env,
    cwd: work,
  });
  assert.equal(describe.code, 0, describe.stderr);
  assert.match(
    describe.stdout,
    /read_text_file\(path: string, \[tail: number\], \[head: number\]\)/,
  );
  const noDir = await runCli(["ping", "fs", "--root", "nowhere", "--config", cfg.path], {
    env,
    cwd: work,
  });
  assert.equal(noDir.code, 2);
  assert.match(noDir.stderr, /--root nowhere: not an existing directory/);
});

Deno.test("config: servers with their files; secrets, headers and env redacted", async () => {
  await using cfg = await tempConfig({
    servers: {
      api: {
        url: "https://user:pa55@api.example.com/mcp",
        headers: { Authorization: "Bearer tok-123", "X-Team": "blue" },
      },
      local: {
        command: ["srv", "--port", "1"],
        env: { API_KEY: "k-456" },
        oauth: { clientId: "cid" },
      },
      off: { command: "x", enabled: false },
    },
  });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["config", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  for (const secret of ["pa55", "tok-123", "blue", "k-456"]) {
    assert.ok(!r.stdout.includes(secret), `${secret} leaked:\n${r.stdout}`);
  }
  assert.match(r.stdout, new RegExp(`^ {2}api {2}http {2}from ${cfg.path}$`, "m"));
  assert.match(r.stdout, /^ {4}url: https:\/\/user:<redacted>@api\.example\.com\/mcp$/m);
  assert.match(r.stdout, /^ {4}header: Authorization: <redacted>$/m);
  assert.match(r.stdout, /^ {4}env: API_KEY=<redacted>$/m);
  assert.match(r.stdout, /^ {4}command: srv --port 1$/m);
  assert.match(r.stdout, /^ {2}off {2}stdio {2}disabled {2}from /m);
  assert.match(
    r.stdout,
    new RegExp(`^Tool cache: ${cfg.dir}/home/cache \\(entries kept 24 h\\)$`, "m"),
  );
  const json = await runCli(["config", "--json", "--config", cfg.path], { env });
  const shown = JSON.parse(json.stdout);
  assert.deepEqual(shown.files, [{ path: cfg.path, origin: "explicit" }]);
  const api = shown.servers.find((s: { name: string }) => s.name === "api");
  assert.deepEqual(api.headers, { Authorization: "<redacted>", "X-Team": "<redacted>" });
  assert.equal(api.source, cfg.path);
  assert.ok(!json.stdout.includes("tok-123") && !json.stdout.includes("k-456"));
});
