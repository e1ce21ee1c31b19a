import assert from "node:assert/strict";
import { assertNoProcessLeft, fixture, runCli, tempConfig } from "../helpers/cli.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
const everything = { command: [Deno.execPath(), "run", "-A", EVERYTHING, "stdio"] };

async function starts(pidfile: string): Promise<number> {
  const text = await Deno.readTextFile(pidfile).catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

Deno.test("search: small budget, output within it, best match first, call line on top", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture(), ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["search", "sum", "numbers", "--budget", "150", "--config", cfg.path], {
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(tokens(r.stdout) <= 150, `${tokens(r.stdout)} tokens:\n${r.stdout}`);
  const lines = r.stdout.split("\n");
  assert.equal(
    lines[0],
    'Tools matching "sum numbers", best first. Call one with: mcpctl call SERVER TOOL key=value…',
  );
  assert.equal(lines[1], "");
  assert.equal(lines[2], "ev.get-sum — Get Sum Tool (score 101)");
  assert.equal(lines[3], "get-sum(a: number, b: number)");
  assert.match(r.stdout, /\ninput: \{"\$schema":"http:\/\/json-schema\.org\/draft-07\/schema#",/);
  // The next match does not fit in full: it is named, or counted.
  assert.match(r.stdout, /\n {2}fx\.add\(a: number, b: number\) \(score 1\)\n$/);
});

Deno.test("search: every budget is respected; tiny budgets name the matches", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture(), ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  for (const budget of [40, 60, 100, 250, 600, 2000]) {
    const r = await runCli(["search", "echo", "--budget", String(budget), "--config", cfg.path], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(tokens(r.stdout) <= budget, `budget ${budget}: ${tokens(r.stdout)}\n${r.stdout}`);
    assert.match(r.stdout, /^Tools matching "echo", best first\./);
  }
  const small = await runCli(["search", "echo", "--budget", "60", "--config", cfg.path], { env });
  assert.match(
    small.stdout,
    /More matches \(describe them for their schemas\):\n {2}ev\.echo\(message: string\) \(score 1100\)\n/,
  );
  const tooSmall = await runCli(["search", "echo", "--budget", "5", "--config", cfg.path], { env });
  assert.equal(tooSmall.code, 2);
  assert.match(tooSmall.stderr, /--budget 5 is too small/);
});

Deno.test("search --json: matches with server, tool, route, score and schema; --limit", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture(), ev: everything } });
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["search", "echo", "--json", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  const matches = JSON.parse(r.stdout);
  assert.ok(matches.length >= 2);
  assert.deepEqual(
    matches.slice(0, 2).map((m: { route: string; score: number }) => [m.route, m.score]),
    [["mcp__ev__echo", 1100], ["mcp__fx__echo", 1100]],
  );
  assert.equal(matches[1].server, "fx");
  assert.equal(matches[1].tool, "echo");
  assert.deepEqual(matches[1].inputSchema.required, ["message"]);
  for (let i = 1; i < matches.length; i++) assert.ok(matches[i - 1].score >= matches[i].score);
  const limited = await runCli(["search", "echo", "--json", "--limit", "1", "--config", cfg.path], {
    env,
  });
  assert.equal(JSON.parse(limited.stdout).length, 1);
  const budgeted = await runCli([
    "search",
    "echo",
    "--json",
    "--budget",
    "200",
    "--config",
    cfg.path,
  ], {
    env,
  });
  assert.ok(tokens(budgeted.stdout) <= 200);
  const fitted = JSON.parse(budgeted.stdout);
  assert.ok(fitted.length >= 1 && fitted.length < matches.length, String(fitted.length));
  assert.deepEqual(fitted, matches.slice(0, fitted.length));
  assert.match(budgeted.stderr, /more match(es)? not shown/);
});

Deno.test("search cache: a second search starts no server", async () => {
  await using cfg = await tempConfig({});
  const a = `${cfg.dir}/a.pids`;
  const b = `${cfg.dir}/b.pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({ servers: { a: fixture("--pidfile", a), b: fixture("--pidfile", b) } }),
  );
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const first = await runCli(["search", "add", "--config", cfg.path], { env });
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual([await starts(a), await starts(b)], [1, 1]);
  const second = await runCli(["search", "add", "--config", cfg.path], { env });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, first.stdout);
  assert.deepEqual([await starts(a), await starts(b)], [1, 1], "no server may start");
  const refreshed = await runCli(["search", "add", "--refresh", "--config", cfg.path], { env });
  assert.equal(refreshed.code, 0, refreshed.stderr);
  assert.deepEqual([await starts(a), await starts(b)], [2, 2]);
  await assertNoProcessLeft(a);
  await assertNoProcessLeft(b);
});

Deno.test("search cache: editing one server's command re-discovers that server only", async () => {
  await using cfg = await tempConfig({});
  const a = `${cfg.dir}/a.pids`;
  const b = `${cfg.dir}/b.pids`;
  const write = (bFlags: string[]) =>
    Deno.writeTextFile(
      cfg.path,
      JSON.stringify({
        servers: { a: fixture("--pidfile", a), b: fixture("--pidfile", b, ...bFlags) },
      }),
    );
  await write([]);
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const first = await runCli(["search", "extra", "--json", "--config", cfg.path], { env });
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(JSON.parse(first.stdout), []);
  await write(["--tools", "1"]);
  const second = await runCli(["search", "extra", "--json", "--config", cfg.path], { env });
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual([await starts(a), await starts(b)], [1, 2]);
  assert.deepEqual(
    JSON.parse(second.stdout).map((m: { route: string }) => m.route),
    ["mcp__b__tool_0"],
  );
  // A change of env invalidates too; the other server still is not started.
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: {
        a: fixture("--pidfile", a),
        b: { ...fixture("--pidfile", b, "--tools", "1"), env: { X: "1" } },
      },
    }),
  );
  await runCli(["search", "extra", "--config", cfg.path], { env });
  assert.deepEqual([await starts(a), await starts(b)], [1, 3]);
});

Deno.test("search cache: entries expire after the TTL", async () => {
  await using cfg = await tempConfig({});
  const a = `${cfg.dir}/a.pids`;
  await Deno.writeTextFile(cfg.path, JSON.stringify({ servers: { a: fixture("--pidfile", a) } }));
  const home = `${cfg.dir}/home`;
  const env = { MCPCTL_HOME: home };
  await runCli(["search", "echo", "--config", cfg.path], { env });
  await runCli(["search", "echo", "--config", cfg.path], { env });
  assert.equal(await starts(a), 1);
  // Age the entry past the default 24 hours.
  const file = `${home}/cache/a.json`;
  const entry = JSON.parse(await Deno.readTextFile(file));
  entry.fetchedAt -= 24 * 60 * 60 * 1000 + 1;
  await Deno.writeTextFile(file, JSON.stringify(entry));
  await runCli(["search", "echo", "--config", cfg.path], { env });
  assert.equal(await starts(a), 2);
  await runCli(["search", "echo", "--config", cfg.path], { env });
  assert.equal(await starts(a), 2, "the fresh entry is used again");
  // MCPCTL_CACHE_TTL in seconds: 1 s old is stale with a TTL of 1.
  await new Promise((r) => setTimeout(r, 1100));
  await runCli(["search", "echo", "--config", cfg.path], {
    env: { ...env, MCPCTL_CACHE_TTL: "1" },
  });
  assert.equal(await starts(a), 3);
  const bad = await runCli(["search", "echo", "--config", cfg.path], {
    env: { ...env, MCPCTL_CACHE_TTL: "soon" },
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /MCPCTL_CACHE_TTL must be a whole number of seconds/);
});

Deno.test("search: a failing server is reported once and not retried; the rest is searched", async () => {
  await using cfg = await tempConfig({});
  const dead = `${cfg.dir}/dead.pids`;
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: {
        fx: fixture(),
        dead: fixture("--mode", "exit-at-start", "--pidfile", dead),
        off: { ...fixture("--pidfile", dead), enabled: false },
      },
    }),
  );
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["search", "echo", "--config", cfg.path], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /fx\.echo — Echo \(score 1100\)/);
  assert.match(r.stderr, /^mcpctl: dead not searched: server "dead" exited/);
  assert.equal(await starts(dead), 1);
  const only = await runCli(["search", "echo", "--config", cfg.path], {
    env: { ...env, MCPCTL_CACHE_TTL: "0" },
  });
  assert.equal(only.code, 0);
  assert.equal(await starts(dead), 2, "tried again by a new command, never twice in one");
});

Deno.test("search over server-filesystem and server-everything: read file", async () => {
  await using cfg = await tempConfig({});
  await Deno.writeTextFile(
    cfg.path,
    JSON.stringify({
      servers: {
        ev: everything,
        fs: { command: [Deno.execPath(), "run", "-A", FILESYSTEM, cfg.dir] },
      },
    }),
  );
  const env = { MCPCTL_HOME: `${cfg.dir}/home` };
  const r = await runCli(["search", "read", "file", "--budget", "400", "--config", cfg.path], {
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(tokens(r.stdout) <= 400, r.stdout);
  const blocks = r.stdout.split("\n").filter((l) => /^\w+\.\S+ .*\(score \d+\)$/.test(l));
  assert.match(blocks[0] ?? "", /^fs\.read_file — Read File.* \(score 1200\)$/);
  assert.match(
    r.stdout,
    /\n {2}fs\.read_text_file\(path: string, \[tail: number\], \[head: number\]\) \(score 200\)\n/,
  );
});
