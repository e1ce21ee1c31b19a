/**
 * The hostile battery, secrets and credentials half: one attack per test, each against
 * the real CLI. Secrets must not show in any form (`tests/helpers/secrets.ts` computes
 * the forms independently of the redactor), redaction must not shred ordinary text,
 * and the credentials lock must give up in bounded time whatever sits at its path.
 */

import assert from "node:assert/strict";
import { pkcs8Pem } from "../../testdata/auth/fake_as.ts";
import { startProtectedServer } from "../../testdata/auth/protected_server.ts";
import { cliCommand, type CliResult, ROOT, runCli, type RunCliOptions } from "../helpers/cli.ts";
import { assertTaggedGone, TAG_VARIABLE } from "../helpers/processes.ts";
import { basicForms, findLeaks, secretForms } from "../helpers/secrets.ts";

/** A sandbox: a temp dir for config, data, state and cache; nothing of the user's. */
async function sandbox() {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-hostile-secrets-" });
  const env = {
    MCPCTL_HOME: `${dir}/home`,
    XDG_CONFIG_HOME: `${dir}/xdg-config`,
    XDG_STATE_HOME: `${dir}/xdg-state`,
    XDG_DATA_HOME: `${dir}/xdg-data`,
    MCPCTL_CREDENTIAL_HELPER: "",
    MCPCTL_OAUTH_CLIENT_SECRET: "",
  };
  return {
    dir,
    env,
    async config(servers: Record<string, unknown>): Promise<string> {
      const path = `${dir}/mcpctl.json`;
      await Deno.writeTextFile(path, JSON.stringify({ servers }));
      return path;
    },
    run(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
      return runCli([...args, "--config", `${dir}/mcpctl.json`], {
        killAfterMs: 30_000,
        ...options,
        env: { ...env, ...options.env },
      });
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Every stream of every run, checked for every form of every secret. */
function assertNoLeaks(
  runs: Array<{ args: string[]; result: CliResult }>,
  secrets: Map<string, string[]>,
): void {
  const leaks = runs.flatMap(({ args, result }) => [
    ...findLeaks(`stdout of ${args.join(" ")}`, result.stdout, secrets),
    ...findLeaks(`stderr of ${args.join(" ")}`, result.stderr, secrets),
  ]);
  assert.deepEqual(leaks, []);
}

// Characters that every encoding changes: space, slash, plus, ampersand, equals, quote,
// backslash, and a non-ASCII letter.
const CI_SECRET = 'ci/se cret+&="q"\\ü-Zx81';

Deno.test("hostile secrets [config-expands-variables]: `config` shows ${CI_SECRET}, never its value", async () => {
  await using s = await sandbox();
  await s.config({
    sse: {
      url: "http://127.0.0.1:9/sse?apiKey=${CI_SECRET}&v=2",
      headers: { Authorization: "Bearer ${CI_SECRET}", "X-Literal": "literal-header-Kq2" },
    },
    remote: {
      command: "npx",
      args: ["mcp-remote", "https://x.test/mcp", "--header", "Authorization: Bearer ${CI_SECRET}"],
      env: { REMOTE_TOKEN: "${CI_SECRET}", DEBUG: "1" },
    },
    tc: {
      url: "https://user:${CI_SECRET}@x.test/mcp",
      tokenCommand: ["print-token", "--key=${CI_SECRET}"],
      oauth: { clientId: "tc-client", clientSecret: "${CI_SECRET}" },
    },
  });
  const runs: Array<{ args: string[]; result: CliResult }> = [];
  for (const args of [["config"], ["config", "--json"], ["config", "--verbose"]]) {
    const result = await s.run(args, { env: { CI_SECRET } });
    assert.equal(result.code, 0, result.stderr);
    runs.push({ args, result });
  }
  assertNoLeaks(
    runs,
    new Map([
      ["CI_SECRET", secretForms(CI_SECRET)],
      ["literal header", ["literal-header-Kq2"]],
    ]),
  );
  const human = runs[0]!.result.stdout;
  assert.match(human, /url: http:\/\/127\.0\.0\.1:9\/sse\?apiKey=\$\{CI_SECRET\}&v=<redacted>/);
  assert.match(
    human,
    /command: npx mcp-remote https:\/\/x\.test\/mcp --header 'Authorization: Bearer \$\{CI_SECRET\}'/,
  );
  assert.match(human, /tokenCommand: print-token '--key=\$\{CI_SECRET\}'/);
  assert.match(human, /header: Authorization: Bearer \$\{CI_SECRET\}/);
  assert.match(human, /header: X-Literal: <redacted>/);
  assert.match(human, /env: REMOTE_TOKEN=\$\{CI_SECRET\}/);
  assert.match(human, /env: DEBUG=<redacted>/);
  assert.match(human, /url: https:\/\/user:\$\{CI_SECRET\}@x\.test\/mcp/);
  assert.match(human, /clientSecret=\$\{CI_SECRET\}/);
  const [remote, sse, tc] = JSON.parse(runs[1]!.result.stdout).servers;
  assert.deepEqual(remote.args, [
    "mcp-remote",
    "https://x.test/mcp",
    "--header",
    "Authorization: Bearer ${CI_SECRET}",
  ]);
  assert.equal(sse.url, "http://127.0.0.1:9/sse?apiKey=${CI_SECRET}&v=<redacted>");
  assert.deepEqual(tc.tokenCommand, ["print-token", "--key=${CI_SECRET}"]);
});

Deno.test("hostile secrets [token-endpoint-echoes-credentials]: a client secret or assertion never shows, in any form", async () => {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const srv = startProtectedServer({
    as: {
      clients: [
        { id: "ci-basic", method: "client_secret_basic", secret: CI_SECRET },
        { id: "ci-post", method: "client_secret_post", secret: CI_SECRET },
        {
          id: "ci-jwt",
          method: "private_key_jwt",
          publicKey: keys.publicKey,
          verify: { name: "ECDSA", hash: "SHA-256" },
        },
      ],
    },
  });
  srv.as.controls.echoTokenRequests = true;
  await using s = await sandbox();
  try {
    const grant = "client_credentials";
    await s.config({
      ci: { url: srv.url, oauth: { grant, clientId: "ci-basic", clientSecret: "${CI_SECRET}" } },
      cipost: {
        url: srv.url,
        oauth: {
          grant,
          clientId: "ci-post",
          clientSecret: "${CI_SECRET}",
          tokenEndpointAuthMethod: "client_secret_post",
        },
      },
      cijwt: {
        url: srv.url,
        oauth: { grant, clientId: "ci-jwt", privateKey: "${KEY_PEM}", signingAlgorithm: "ES256" },
      },
    });
    const env = { CI_SECRET, KEY_PEM: await pkcs8Pem(keys.privateKey) };
    const runs: Array<{ args: string[]; result: CliResult }> = [];
    const run = async (...args: string[]) => {
      const result = await s.run(args, { env });
      runs.push({ args, result });
      return result;
    };
    const calls = await Promise.all([
      run("call", "ci", "echo", "text=a"),
      run("call", "cipost", "echo", "text=a", "--json"),
      run("call", "cijwt", "echo", "text=a", "--verbose"),
    ]);
    for (const r of calls) {
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /refused the token request: invalid_client: bad client; you sent/);
    }
    // The echo was there, and redaction (not luck) kept it out.
    assert.match(calls[0]!.stderr, /authorization=<redacted> body=/);
    assert.match(calls[1]!.stderr, /client_secret=<redacted>/);
    assert.match(calls[2]!.stderr, /client_assertion=<redacted>/);
    const list = await run("list");
    const listJson = await run("list", "--json", "--verbose");
    assert.equal(list.code, 0, list.stderr);
    assert.equal(listJson.code, 0, listJson.stderr);
    // list shows each failure on stdout, human and JSON.
    assert.match(list.stdout, /authorization=<redacted> body=/);
    const shown = JSON.parse(listJson.stdout) as Array<{ name: string; error?: string }>;
    assert.match(shown.find((e) => e.name === "ci")?.error ?? "", /authorization=<redacted>/);
    assert.match(shown.find((e) => e.name === "cipost")?.error ?? "", /client_secret=<redacted>/);

    const assertions = srv.as.requests
      .map((r) => new URLSearchParams(r.body).get("client_assertion"))
      .filter((a): a is string => a !== null);
    assert.ok(assertions.length >= 2, "the JWT client was tried");
    const secrets = new Map<string, string[]>([
      ["client secret", secretForms(CI_SECRET)],
      ["Basic ci-basic:secret", basicForms("ci-basic", CI_SECRET)],
      ...assertions.map((a, i) => [`assertion ${i}`, secretForms(a)] as [string, string[]]),
    ]);
    // The echo carried the secret URL-encoded (client_secret_post's body): a real test
    // of the derived forms.
    assert.ok(srv.as.requests.some((r) =>
      r.body.includes(encodeURIComponent("ci/se")) ||
      r.body.includes("ci%2Fse")
    ));
    assertNoLeaks(runs, secrets);
  } finally {
    await srv.close();
  }
});

Deno.test("hostile secrets [short-header-values]: `X-Api-Version: 1` and `User-Agent: mcpctl` shred nothing", async () => {
  // A port nobody listens on.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = probe.addr.port;
  probe.close();
  // A careless server that answers 500 quoting the request's headers.
  const leaky = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    const seen = ["x-api-version", "user-agent"].map((h) => `${h}: ${req.headers.get(h)}`);
    return new Response(`boom at 127.0.0.1; you sent ${seen.join("; ")}`, { status: 500 });
  });
  await using s = await sandbox();
  try {
    const headers = { "X-Api-Version": "1", "User-Agent": "mcpctl" };
    await s.config({
      down: { url: `http://127.0.0.1:${closedPort}/mcp`, headers },
      leaky: { url: `http://127.0.0.1:${leaky.addr.port}/mcp`, headers },
    });
    const down = await s.run(["call", "down", "echo", "text=1"]);
    assert.equal(down.code, 3, down.stderr);
    assert.match(
      down.stderr,
      new RegExp(`^mcpctl: .*cannot reach http://127\\.0\\.0\\.1:${closedPort}/mcp`, "m"),
    );
    assert.doesNotMatch(down.stderr, /<redacted>/);

    const echoed = await s.run(["call", "leaky", "echo", "text=1"]);
    assert.equal(echoed.code, 3, echoed.stderr);
    assert.match(echoed.stderr, /^mcpctl: /m);
    assert.match(echoed.stderr, /HTTP 500/);
    assert.match(echoed.stderr, /boom at 127\.0\.0\.1/);
    // The short value standing alone is hidden; the public one is not a secret.
    assert.match(echoed.stderr, /x-api-version: <redacted>; user-agent: mcpctl/);

    const list = await s.run(["list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const [downEntry] = JSON.parse(list.stdout);
    assert.match(downEntry.error, new RegExp(`127\\.0\\.0\\.1:${closedPort}/mcp`));
  } finally {
    await leaky.shutdown();
  }
});

/** utime + stime of a process in seconds, from /proc (Linux); 0 elsewhere or when gone. */
async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks: 100 Hz on Linux
  } catch {
    return 0;
  }
}

Deno.test("hostile secrets [lock-path-occupied]: a dangling symlink, a directory or no permission at the credentials lock → exit 5 in bounded time", async () => {
  await using s = await sandbox();
  await s.config({ svc: { url: "http://127.0.0.1:9/mcp" } });
  const lock = (home: string) => `${home}/credentials.json.lock`;
  const homes = {
    symlink: `${s.dir}/home-symlink`,
    directory: `${s.dir}/home-directory`,
    denied: `${s.dir}/home-denied`,
  };
  for (const home of Object.values(homes)) await Deno.mkdir(home, { mode: 0o700 });
  await Deno.symlink(`${s.dir}/nowhere/target`, lock(homes.symlink));
  await Deno.mkdir(lock(homes.directory));
  await Deno.writeTextFile(lock(homes.denied), "");
  await Deno.chmod(lock(homes.denied), 0o000);
  // root ignores file modes: run that case without the capability that lets it.
  const denyPrefix = Deno.uid() === 0
    ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    : [];

  const cases = [
    { name: "symlink", reason: /a symbolic link is in the way/, prefix: [] as string[] },
    { name: "directory", reason: /a directory is in the way/, prefix: [] as string[] },
    { name: "denied", reason: /permission denied/, prefix: denyPrefix },
  ] as const;
  const results = await Promise.all(cases.map(async (c) => {
    const home = homes[c.name];
    let peakCpu = 0;
    let sampling = true;
    let sampler: Promise<void> = Promise.resolve();
    const result = await s.run(["logout", "svc", "--local"], {
      env: { MCPCTL_HOME: home },
      prefix: c.prefix,
      onSpawn: (child) => {
        // CPU use while it waits (measured, not waited on): it must not spin.
        sampler = (async () => {
          while (sampling) {
            peakCpu = Math.max(peakCpu, await cpuSeconds(child.pid));
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        })();
      },
    });
    sampling = false;
    await sampler;
    return { ...c, home, result, peakCpu };
  }));
  for (const { name, home, reason, result, peakCpu } of results) {
    assert.equal(result.code, 5, `${name}: ${result.stderr}`);
    assert.ok(result.stderr.includes(lock(home)), `${name}: ${result.stderr}`);
    assert.match(result.stderr, reason);
    assert.match(result.stderr, /gave up after 10 s waiting for the lock/);
    assert.ok(result.ms < 15_000, `${name}: took ${Math.round(result.ms)} ms`);
    // A spinning wait would burn about 10 s of CPU.
    assert.ok(peakCpu < 3, `${name}: used ${peakCpu} s of CPU while waiting`);
  }
  // The dangling link was not followed: nothing was created where it points.
  await assert.rejects(Deno.stat(`${s.dir}/nowhere`), Deno.errors.NotFound);
});

Deno.test("hostile secrets [lock-wait-interrupted]: Ctrl-C or SIGTERM while waiting for the credentials lock ends it at once", async () => {
  await using s = await sandbox();
  await s.config({ svc: { url: "http://127.0.0.1:9/mcp" } });
  await Deno.mkdir(s.env.MCPCTL_HOME, { recursive: true, mode: 0o700 });
  // The test itself holds the lock, as another mcpctl would.
  using held = await Deno.open(`${s.env.MCPCTL_HOME}/credentials.json.lock`, {
    read: true,
    write: true,
    create: true,
  });
  assert.ok(await held.tryLock(true));
  await held.write(new TextEncoder().encode(`${Deno.pid}\n`));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const tag = crypto.randomUUID();
    const [cmd, ...args] = cliCommand([
      "logout",
      "svc",
      "--local",
      "--verbose",
      "--config",
      `${s.dir}/mcpctl.json`,
    ]);
    const child = new Deno.Command(cmd!, {
      args,
      cwd: ROOT,
      env: { ...s.env, NO_COLOR: "1", [TAG_VARIABLE]: tag },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let stderr = "";
    // The event: mcpctl says it waits for the lock (and who holds it).
    while (!/waiting for the lock/.test(stderr)) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += value;
    }
    assert.match(stderr, new RegExp(`waiting for the lock .*: process ${Deno.pid} holds it`));
    const sent = performance.now();
    child.kill(signal);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stderr += value;
    }
    const status = await child.status;
    const afterSignal = performance.now() - sent;
    assert.equal(status.code, 130, `${signal}: ${stderr}`);
    assert.match(stderr, /interrupted while waiting for the lock/);
    assert.ok(afterSignal < 2_000, `${signal}: exited ${Math.round(afterSignal)} ms after it`);
    await assertTaggedGone(tag);
  }
});
