/**
 * The build proof: `deno bundle` makes one JS file, and that file runs with exactly the
 * compile permission set through real commands, so a missing grant shows up here and
 * not on a user's machine. `deno compile` itself needs its runtime from the internet;
 * that test runs only where a runtime is available (DENORT_BIN set).
 */
import assert from "node:assert/strict";
import { fixture, ROOT, tempConfig, testdata } from "../helpers/cli.ts";

async function run(cmd: string, args: string[], cwd = ROOT) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("bundle: builds and runs list and call under the compile permission set", async () => {
  await using cfg = await tempConfig({ servers: { fx: fixture() } });
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
    run(Deno.execPath(), [
      "run",
      "-q",
      "-P=mcpctl",
      "--config",
      `${ROOT}/deno.json`,
      bundle,
      ...args,
    ], cfg.dir);
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
