import assert from "node:assert/strict";
import { cliCommand, fixture, runCli, tempConfig } from "../helpers/cli.ts";

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
  assert.match(r.stderr, /server 'fx' is declared in the project file .*\.mcp\.json/);
  assert.match(r.stderr, /mcpctl trust fx/);
  assert.match(r.stderr, /--trust-project/);
  assert.equal(await p.spawned(), false, "the server must not have been started");
  const list = await runCli(["list"], { cwd: p.cwd, env: p.env });
  assert.equal(list.code, 2);
  assert.match(list.stdout, /fx {2}failed/);
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
  assert.match(list.stdout, /command: .*deno/);
  assert.match(list.stdout, /status: {2}not approved/);
  const t = await runCli(["trust", "fx"], { cwd: p.cwd, env: p.env });
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /approved/);
  const mode = (await Deno.stat(`${p.home}/trust.json`)).mode! & 0o777;
  assert.equal(mode, 0o600);
  const ok = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(ok.code, 0, ok.stderr);
  await p.write(["--tools", "1"]);
  const edited = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(edited.code, 2, "an edited definition needs a new approval");
  await runCli(["trust", "fx"], { cwd: p.cwd, env: p.env });
  const revoked = await runCli(["trust", "fx", "--revoke"], { cwd: p.cwd, env: p.env });
  assert.match(revoked.stdout, /revoked: fx/);
  const after = await runCli(["call", "fx", "echo", "message=hi"], { cwd: p.cwd, env: p.env });
  assert.equal(after.code, 2);
});

Deno.test("trust: on a terminal the user is asked; yes is remembered, no refuses", async () => {
  const p = await project();
  await using _ = p.cfg;
  const run = async (answer: string) => {
    const line = cliCommand(["call", "fx", "echo", "message=hi"])
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const child = new Deno.Command("script", {
      args: ["-qec", line, "/dev/null"],
      cwd: p.cwd,
      env: { ...p.env, NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    // Give the prompt time to appear before answering, as a person would.
    await new Promise((r) => setTimeout(r, 1500));
    await w.write(new TextEncoder().encode(answer));
    await w.close();
    const out = await child.output();
    return { code: out.code, screen: new TextDecoder().decode(out.stdout) };
  };
  const no = await run("n\n");
  assert.notEqual(no.code, 0);
  assert.match(no.screen, /wants to run:/);
  assert.match(no.screen, /env: {5}\(none added\)/);
  assert.match(no.screen, /Trust and run it\? \[y\/N\]/);
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
