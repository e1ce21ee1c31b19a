import assert from "node:assert/strict";
import { fixture, runCli, tempConfig } from "../helpers/cli.ts";
import { runInTerminal } from "../helpers/pty.ts";

/** A project directory with a .mcp.json declaring a stdio fixture, and a state dir. */
async function project(extraArgs: string[] = []) {
  const cfg = await tempConfig({});
  const home = `${cfg.dir}/home`;
  const pidfile = `${cfg.dir}/pids`;
  const write = (args: string[]) =>
    Deno.writeTextFile(
      `${cfg.dir}/.mcp.json`,
      JSON.stringify({ mcpServers: { fx: fixture("--pidfile", pidfile, ...args) } }),
    );
  await Deno.remove(cfg.path);
  await write(extraArgs);
  await Deno.mkdir(`${cfg.dir}/sub`);
  return {
    cfg,
    home,
    pidfile,
    write,
    env: { MCPCTL_HOME: home, XDG_CONFIG_HOME: `${cfg.dir}/xdg` },
    cwd: `${cfg.dir}/sub`,
    spawned: () => Deno.stat(pidfile).then(() => true, () => false),
  };
}

Deno.test("trust: a project stdio server is refused off a terminal, nothing runs", async () => {
  const p = await project();
  await using _ = p.cfg;
  const r = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /server 'fx' from the project file ".*\.mcp\.json" is not approved: it runs the program/,
  );
  assert.match(r.stderr, /mcpctl trust fx/);
  assert.match(r.stderr, /--trust-project/);
  assert.equal(await p.spawned(), false, "the server must not have been started");
  // list still runs (exit 0): the server has its own status, and the hint says how.
  const list = await runCli(["list"], { cwd: p.cwd, env: p.env });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^fx {2}blocked {2}\(stdio\)$/m);
  assert.match(
    list.stderr,
    /hint: fx is declared in project files and not approved; 'mcpctl trust fx'/,
  );
  const json = await runCli(["list", "--json"], { cwd: p.cwd, env: p.env });
  assert.equal(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout)[0].status, "blocked");
  const strict = await runCli(["list", "--strict"], { cwd: p.cwd, env: p.env });
  assert.equal(strict.code, 2, "--strict: every failure is a missing approval");
  assert.equal(await p.spawned(), false);
});

Deno.test("trust: the CI switch runs it without storing an approval", async () => {
  const p = await project();
  await using _ = p.cfg;
  const flag = await runCli(["call", "fx", "echo", "message=hi", "--trust-project"], {
    cwd: p.cwd,
    env: p.env,
  });
  assert.equal(flag.code, 0, flag.stderr);
  assert.equal(flag.stdout, "hi\n");
  const env = await runCli(["call", "fx", "echo", "message=hi"], {
    cwd: p.cwd,
    env: { ...p.env, MCPCTL_TRUST_PROJECT: "1" },
  });
  assert.equal(env.code, 0, env.stderr);
  const again = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(again.code, 2, "the switch stores nothing");
});

Deno.test("trust: `mcpctl trust` approves; an edited command asks again", async () => {
  const p = await project();
  await using _ = p.cfg;
  const list = await runCli(["trust", "--list"], { cwd: p.cwd, env: p.env });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /command: +".*deno"/);
  assert.match(list.stdout, /status: not approved/);
  // Off a terminal, approving needs --yes: it shows what it would approve and stops.
  const asked = await runCli(["trust", "fx"], { cwd: p.cwd, env: p.env });
  assert.equal(asked.code, 2, asked.stderr);
  assert.match(asked.stdout, /command: +".*deno"/);
  assert.match(asked.stderr, /mcpctl trust fx --yes/);
  await assert.rejects(Deno.stat(`${p.home}/trust.json`), Deno.errors.NotFound);
  const t = await runCli(["trust", "fx", "--yes"], { cwd: p.cwd, env: p.env });
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /args: +\[/);
  assert.match(t.stdout, /^approved: fx \(.*\.mcp\.json\)$/m);
  assert.match(
    (await runCli(["trust", "--list"], { cwd: p.cwd, env: p.env })).stdout,
    /status: approved/,
  );
  const mode = (await Deno.stat(`${p.home}/trust.json`)).mode! & 0o777;
  assert.equal(mode, 0o600);
  const ok = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(ok.code, 0, ok.stderr);
  await p.write(["--tools", "1"]);
  const edited = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(edited.code, 2, "an edited definition needs a new approval");
  await runCli(["trust", "fx", "--yes"], { cwd: p.cwd, env: p.env });
  const revoked = await runCli(["trust", "fx", "--revoke"], { cwd: p.cwd, env: p.env });
  assert.match(revoked.stdout, /revoked: fx/);
  const after = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(after.code, 2);
});

Deno.test("trust: on a terminal the user is asked; yes is remembered, no refuses", async () => {
  const p = await project();
  await using _ = p.cfg;
  const run = (answer: string) =>
    runInTerminal(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env }, [
      { waitFor: "[y/N] ", answer },
    ]);
  const no = await run("n\n");
  assert.notEqual(no.code, 0);
  assert.match(no.screen, /needs approval: it runs the program ".*deno"/);
  assert.match(no.screen, /env: +\(none added\)/);
  assert.match(no.screen, /Approve 'fx'\? \[y\/N\]/);
  assert.match(no.screen, /server 'fx' .* was not approved/);
  assert.match(no.screen, /hint: 'mcpctl trust fx'/);
  assert.equal(await p.spawned(), false);
  const yes = await run("y\n");
  assert.equal(yes.code, 0, yes.screen);
  assert.match(yes.screen, /hi/);
  const later = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(later.code, 0, "the approval was stored");
});

Deno.test("trust: --config files and the global file are trusted", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
  const r = await runCli(["call", "fx", "echo", "message=hi", "--config", cfg.path], {
    env: { MCPCTL_HOME: `${cfg.dir}/home` },
  });
  assert.equal(r.code, 0, r.stderr);
  const xdg = `${cfg.dir}/xdg`;
  await Deno.mkdir(`${xdg}/mcpctl`, { recursive: true });
  await Deno.writeTextFile(
    `${xdg}/mcpctl/config.json`,
    JSON.stringify({ servers: { g: fixture() } }),
  );
  const g = await runCli(["call", "g", "echo", "message=hi"], {
    cwd: cfg.dir.replace(/\/[^/]+$/, ""),
    env: { MCPCTL_HOME: `${cfg.dir}/home`, XDG_CONFIG_HOME: xdg },
  });
  assert.equal(g.code, 0, g.stderr);
});

Deno.test("trust: on a terminal `mcpctl trust` shows what it approves and asks", async () => {
  const p = await project();
  await using _ = p.cfg;
  const yes = await runInTerminal(["trust"], { cwd: p.cwd, env: p.env }, [
    { waitFor: "Approve 'fx'? [y/N] ", answer: "y\n" },
  ]);
  assert.equal(yes.code, 0, yes.screen);
  assert.match(yes.screen, /server "fx" from the project file ".*\.mcp\.json"\r\n/);
  assert.match(yes.screen, /command: +".*deno"\r\n/);
  assert.match(yes.screen, /^approved: fx \(.*\.mcp\.json\)\r$/m);
  const ok = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(ok.code, 0, ok.stderr);
  const again = await runCli(["trust"], { cwd: p.cwd, env: p.env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /Every project server that needs approval is approved/);
});
