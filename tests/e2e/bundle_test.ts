/**
 * The build proof: `deno bundle` makes one JS file, and that file runs with exactly the
 * compile permission set through real commands, so a missing grant shows up here and
 * not on a user's machine. `deno compile` itself needs its runtime from the internet;
 * that test runs only where a runtime is available (DENORT_BIN set).
 */
import assert from "node:assert/strict";
import { fixture, ROOT, tempConfig, testdata } from "../helpers/cli.ts";
import { startProtectedServer } from "../../testdata/auth/protected_server.ts";

async function run(cmd: string, args: string[], cwd = ROOT, env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("bundle: builds and runs list, call and login under the compile permission set", async () => {
  const started = startProtectedServer();
  await using srv = Object.assign(started, { [Symbol.asyncDispose]: () => started.close() });
  await using cfg = await tempConfig({ servers: { fx: fixture(), svc: { url: srv.url } } });
  // Sign-in state goes to a temp dir; the "browser" just follows redirects.
  const env = {
    MCPCTL_HOME: `${cfg.dir}/home`,
    BROWSER: `sh ${testdata("auth/follow_redirects.sh")}`,
  };
  const bundle = `${cfg.dir}/mcpctl.js`;
  const built = await run(Deno.execPath(), [
    "bundle",
    "--quiet",
    "--platform",
    "deno",
    "-o",
    bundle,
    `${ROOT}/main.ts`,
  ]);
  assert.equal(built.code, 0, built.stderr);
  // -P=mcpctl with deno.json: the named set and nothing else. Run from another
  // directory, as a user would.
  const mcpctl = (...args: string[]) =>
    run(
      Deno.execPath(),
      [
        "run",
        "-q",
        "-P=mcpctl",
        "--config",
        `${ROOT}/deno.json`,
        bundle,
        ...args,
      ],
      cfg.dir,
      env,
    );
  const version = await mcpctl("--version");
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^mcpctl \d+\.\d+\.\d+ \(deno 2\.9\.6, /);
  const list = await mcpctl("list", "--json", "--config", cfg.path);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(JSON.parse(list.stdout)[0].status, "connected");
  const call = await mcpctl("call", "fx", "add", "a=1", "b=2", "--config", cfg.path);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(call.stdout, "3\n");
  const demo = await mcpctl(
    "--config",
    testdata("demo/mcpctl.json"),
    "call",
    "demo",
    "greet",
    "name=x",
  );
  assert.equal(demo.stdout, "Hello, x!\n", demo.stderr);
  // The whole sign-in: discovery, registration, loopback listener, browser, token file.
  const login = await mcpctl("login", "svc", "--config", cfg.path);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, /Signed in to svc/);
  assert.equal(srv.grants("authorization_code"), 1);
  const signedIn = await mcpctl("call", "svc", "echo", "text=hi", "--config", cfg.path);
  assert.equal(signedIn.code, 0, signedIn.stderr);
  assert.equal(signedIn.stdout, "hi\n");
  const logout = await mcpctl("logout", "svc", "--config", cfg.path);
  assert.equal(logout.code, 0, logout.stderr);
  const after = await mcpctl("call", "svc", "echo", "text=hi", "--config", cfg.path);
  assert.equal(after.code, 4, after.stderr);
});

Deno.test({
  name: "compile: the binary runs --version and list (needs DENORT_BIN)",
  ignore: !Deno.env.get("DENORT_BIN"),
  async fn() {
    await using cfg = await tempConfig({ servers: { fx: fixture() } });
    const bin = `${cfg.dir}/mcpctl`;
    const built = await run(Deno.execPath(), [
      "compile",
      "-P=mcpctl",
      "--exclude-unused-npm",
      "-o",
      bin,
      `${ROOT}/main.ts`,
    ]);
    assert.equal(built.code, 0, built.stderr);
    const version = await run(bin, ["--version"], cfg.dir);
    assert.match(version.stdout, /^mcpctl /);
    const list = await run(bin, ["list", "--json", "--config", cfg.path], cfg.dir);
    assert.equal(JSON.parse(list.stdout)[0].status, "connected", list.stderr);
  },
});

if (!Deno.env.get("DENORT_BIN")) {
  console.error("compile test skipped: deno compile needs its runtime (set DENORT_BIN)");
}
