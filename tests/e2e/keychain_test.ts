/**
 * Tokens in the OS keychain through real docker credential helpers, driven through the
 * real CLI against a real authorization server (`testdata/oidc/server.ts`, approving
 * sign-ins at once, so `$BROWSER` can be curl following redirects).
 *
 * - `docker-credential-pass`: `pass` with a throwaway GnuPG key, in a temp GNUPGHOME and
 *   PASSWORD_STORE_DIR.
 * - `docker-credential-secretservice`: gnome-keyring on a private D-Bus session bus
 *   (a `dbus-daemon` of our own, with no service activation), its login keyring created
 *   and unlocked with a password on stdin, in a temp HOME/XDG_DATA_HOME.
 *
 * Needs `apt-get install golang-docker-credential-helpers pass gnupg gnome-keyring
 * dbus-daemon curl`; a helper's tests are skipped, saying what is missing, only when
 * its programs are not on PATH.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { StoredCredential } from "../../src/auth/store.ts";
import { type CliResult, runCli, tempConfig } from "../helpers/cli.ts";
import {
  type OidcStackProcess,
  onPath,
  readIfExists,
  startOidcStack,
  waitFor,
  writeCurlBrowser,
  writeHandOffBrowser,
} from "../helpers/oidc.ts";

const PASS_NEEDS = ["docker-credential-pass", "pass", "gpg", "gpgconf"];
const SECRETSERVICE_NEEDS = [
  "docker-credential-secretservice",
  "gnome-keyring-daemon",
  "dbus-daemon",
];
const missingFor = (programs: string[]) => programs.filter((p) => !onPath(p));
const curlMissing = !onPath("curl");
const passMissing = [...missingFor(PASS_NEEDS), ...(curlMissing ? ["curl"] : [])];
const secretServiceMissing = [
  ...missingFor(SECRETSERVICE_NEEDS),
  ...(curlMissing ? ["curl"] : []),
];
for (
  const [what, missing, packages] of [
    ["pass", passMissing, "golang-docker-credential-helpers pass gnupg curl"],
    ["secretservice", secretServiceMissing, "golang-docker-credential-helpers gnome-keyring curl"],
  ] as const
) {
  if (missing.length > 0) {
    console.warn(
      `keychain_test: ${what} tests skipped, ${missing.join(", ")} not on PATH ` +
        `(apt-get install -y ${packages})`,
    );
  }
}

/** A credential helper ready to use, with the environment it needs. */
interface HelperSetup {
  /** The `credentials.helper` value. */
  name: string;
  /** Variables the helper (and mcpctl, which runs it) need. */
  env: Record<string, string>;
  /** Where the helper keeps its data, to check nothing is in plain text there. */
  dataDir: string;
  close(): Promise<void>;
}

async function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(cmd, {
    args,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function mustRun(cmd: string, args: string[], env: Record<string, string>) {
  const out = await run(cmd, args, env);
  if (out.code !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${out.stderr}${out.stdout}`);
  return out.stdout;
}

/** `pass` with a new GnuPG key that has no passphrase. */
async function setUpPass(dir: string): Promise<HelperSetup> {
  const env = { GNUPGHOME: `${dir}/gnupg`, PASSWORD_STORE_DIR: `${dir}/password-store` };
  await Deno.mkdir(env.GNUPGHOME, { mode: 0o700 });
  const stopAgent = () => run("gpgconf", ["--kill", "all"], env).then(() => {}, () => {});
  try {
    await mustRun("gpg", [
      "--batch",
      "--passphrase",
      "",
      "--quick-gen-key",
      "mcpctl keychain test <keychain@mcpctl.invalid>",
      // ed25519 + cv25519: made in milliseconds, unlike RSA.
      "future-default",
      "default",
      "never",
    ], env);
    const keys = await mustRun("gpg", ["--list-keys", "--with-colons"], env);
    const fingerprint = keys.split("\n").find((l) => l.startsWith("fpr:"))?.split(":")[9];
    assert.ok(fingerprint, "the new GnuPG key has a fingerprint");
    await mustRun("pass", ["init", fingerprint], env);
  } catch (error) {
    await stopAgent();
    throw error;
  }
  // gpg started an agent for this GNUPGHOME; stopping it leaves no process behind.
  return { name: "pass", env, dataDir: env.PASSWORD_STORE_DIR, close: stopAgent };
}

/**
 * A private D-Bus session bus and gnome-keyring's Secret Service on it, with a login
 * keyring created and unlocked by a password on stdin. The bus has no service
 * directories, so nothing is ever started behind our back.
 */
async function setUpSecretService(dir: string): Promise<HelperSetup> {
  const home = `${dir}/home`;
  const runtime = `${dir}/run`;
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  await Deno.mkdir(runtime, { recursive: true, mode: 0o700 });
  const socket = `${runtime}/bus`;
  const busConfig = `${dir}/session.conf`;
  await Deno.writeTextFile(
    busConfig,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
  );
  const env = {
    HOME: home,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_RUNTIME_DIR: runtime,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${socket}`,
  };
  const children: Deno.ChildProcess[] = [];
  const logs: Promise<string>[] = [];
  const start = (cmd: string, args: string[], stdin?: string) => {
    const child = new Deno.Command(cmd, {
      args,
      env,
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    children.push(child);
    logs.push(new Response(child.stderr).text().catch(() => ""));
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      void writer.write(new TextEncoder().encode(stdin)).then(() => writer.close()).catch(
        () => {},
      );
    }
    return child;
  };
  const close = async () => {
    // The keyring daemon first, while its bus is still there; then the bus.
    for (const child of children.reverse()) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    }
    await Promise.all(logs);
  };
  try {
    start("dbus-daemon", ["--nofork", "--nopidfile", `--config-file=${busConfig}`]);
    await waitFor("the D-Bus socket", async () => (await exists(socket)) ? true : undefined);
    // An empty password creates no login keyring; any other creates and unlocks one.
    start("gnome-keyring-daemon", ["--foreground", "--unlock", "--components=secrets"], "test");
    await waitFor("the unlocked login keyring", async () => {
      if (!(await exists(`${env.XDG_DATA_HOME}/keyrings/login.keyring`))) return undefined;
      const listed = await run("docker-credential-secretservice", ["list"], env);
      return listed.code === 0 ? true : undefined;
    });
  } catch (error) {
    await close();
    throw new Error(`cannot start gnome-keyring: ${error}\n${(await Promise.all(logs)).join("")}`);
  }
  return {
    name: "secretservice",
    // Only the bus: a HOME or XDG_CACHE_HOME of its own would give the CLI's `deno run` a
    // fresh, empty module cache.
    env: { DBUS_SESSION_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS },
    dataDir: `${env.XDG_DATA_HOME}/keyrings`,
    close,
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The id mcpctl stores an entry under (see `credentialKeyId` in src/auth/store.ts). */
function entryId(serverName: string, serverUrl: string): string {
  return `mcpctl://servers/${encodeURIComponent(serverName)}/${
    encodeURIComponent(new URL(serverUrl).href)
  }`;
}

/** `docker-credential-<name> list`, run directly. */
async function helperList(helper: HelperSetup): Promise<Record<string, string>> {
  const out = await run(`docker-credential-${helper.name}`, ["list"], helper.env);
  assert.equal(out.code, 0, `list failed: ${out.stderr}${out.stdout}`);
  return JSON.parse(out.stdout);
}

/** `docker-credential-<name> get`, run directly: the stored JSON, or undefined. */
async function helperGet(
  helper: HelperSetup,
  id: string,
): Promise<StoredCredential | undefined> {
  const out = await run(`docker-credential-${helper.name}`, ["get"], helper.env, id);
  if (out.code !== 0) {
    assert.match(out.stdout + out.stderr, /credentials not found in native keychain/);
    return undefined;
  }
  const reply = JSON.parse(out.stdout);
  // docker-credential-pass answers a missing entry with exit 0 and empty fields.
  if (reply.Secret === "") return undefined;
  assert.equal(reply.Username, "mcpctl");
  return JSON.parse(reply.Secret);
}

/** Every file under `dir`, as bytes decoded leniently. */
async function allText(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) text += await allText(path);
    else if (entry.isFile) text += new TextDecoder().decode(await Deno.readFile(path));
  }
  return text;
}

function show(r: CliResult): string {
  return `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

/** The whole story for one helper, through the real CLI. */
async function exerciseHelper(t: Deno.TestContext, helper: HelperSetup, dir: string) {
  await using stack = await startOidcStack({ autoApprove: "alice" });
  const mcpctlHome = `${dir}/mcpctl-home`;
  const browser = await writeCurlBrowser(dir);
  const env = {
    ...helper.env,
    MCPCTL_HOME: mcpctlHome,
    MCPCTL_CREDENTIAL_HELPER: "",
    BROWSER: browser,
  };
  const credentials = { helper: helper.name };
  // alpha and beta: two servers at one URL; alpha again, at the second URL, in its own file.
  await using both = await tempConfig({
    credentials,
    servers: { alpha: { url: stack.mcpUrl }, beta: { url: stack.mcpUrl } },
  });
  await using moved = await tempConfig({ credentials, servers: { alpha: { url: stack.mcpUrl2 } } });
  const cli = (config: string, ...args: string[]) =>
    runCli(["--config", config, ...args], { env, killAfterMs: 30_000 });
  const alphaId = entryId("alpha", stack.mcpUrl);
  const betaId = entryId("beta", stack.mcpUrl);
  const movedId = entryId("alpha", stack.mcpUrl2);
  const binary = `docker-credential-${helper.name}`;

  let alphaEntry: StoredCredential | undefined;

  await t.step("login stores the tokens in the helper", async () => {
    const login = await cli(both.path, "login", "alpha");
    assert.equal(login.code, 0, show(login) + stack.stderr());
    assert.match(login.stderr, new RegExp(`Tokens stored in credential helper ${binary}`));
    assert.deepEqual(await helperList(helper), { [alphaId]: "mcpctl" });
    alphaEntry = await helperGet(helper, alphaId);
    assert.ok(alphaEntry?.tokens?.accessToken, "the entry holds an access token");
    assert.ok(alphaEntry.tokens.refreshToken, "and a refresh token");
    assert.equal(alphaEntry.authServer, stack.issuer);
    assert.equal(alphaEntry.registration?.source, "dynamic");
    const stats = await stack.stats();
    assert.deepEqual(
      stats.tokenRequests.map((r) => [r.grantType, r.resource]),
      [["authorization_code", stack.mcpUrl]],
    );
    // Encrypted at rest: the helper's files never hold a token in the clear.
    const stored = await allText(helper.dataDir);
    assert.ok(!stored.includes(alphaEntry.tokens.accessToken));
    assert.ok(!stored.includes(alphaEntry.tokens.refreshToken));
  });

  await t.step("call uses the token from the helper", async () => {
    const call = await cli(both.path, "call", "alpha", "whoami");
    assert.equal(call.code, 0, show(call));
    assert.equal(
      call.stdout.trim(),
      `alice via ${alphaEntry?.registration?.clientId} at ${stack.mcpUrl}`,
    );
  });

  await t.step("two servers at one URL never share an entry", async () => {
    const login = await cli(both.path, "login", "beta");
    assert.equal(login.code, 0, show(login));
    assert.deepEqual(await helperList(helper), { [alphaId]: "mcpctl", [betaId]: "mcpctl" });
    const beta = await helperGet(helper, betaId);
    assert.ok(beta?.tokens?.accessToken);
    assert.notEqual(beta.tokens.accessToken, alphaEntry?.tokens?.accessToken);
    assert.notEqual(beta.registration?.clientId, alphaEntry?.registration?.clientId);
    assert.deepEqual(await helperGet(helper, alphaId), alphaEntry, "alpha's entry is untouched");
    const [a, b] = await Promise.all([
      cli(both.path, "call", "alpha", "whoami"),
      cli(both.path, "call", "beta", "whoami"),
    ]);
    assert.equal(a.code, 0, show(a));
    assert.equal(b.code, 0, show(b));
    assert.match(a.stdout, new RegExp(`via ${alphaEntry?.registration?.clientId} `));
    assert.match(b.stdout, new RegExp(`via ${beta.registration?.clientId} `));
  });

  await t.step("one server at two URLs never shares an entry", async () => {
    const login = await cli(moved.path, "login", "alpha");
    assert.equal(login.code, 0, show(login));
    assert.deepEqual(await helperList(helper), {
      [alphaId]: "mcpctl",
      [betaId]: "mcpctl",
      [movedId]: "mcpctl",
    });
    const movedEntry = await helperGet(helper, movedId);
    assert.ok(movedEntry?.tokens?.accessToken);
    assert.notEqual(movedEntry.tokens.accessToken, alphaEntry?.tokens?.accessToken);
    assert.deepEqual(await helperGet(helper, alphaId), alphaEntry, "alpha's entry is untouched");
    const [there, here] = await Promise.all([
      cli(moved.path, "call", "alpha", "whoami"),
      cli(both.path, "call", "alpha", "whoami"),
    ]);
    assert.equal(there.code, 0, show(there));
    assert.match(there.stdout, new RegExp(` at ${stack.mcpUrl2}$`, "m"));
    assert.equal(here.code, 0, show(here));
    assert.match(here.stdout, new RegExp(` at ${stack.mcpUrl}$`, "m"));
  });

  await t.step("signing in again replaces only that entry", async () => {
    const others = [await helperGet(helper, betaId), await helperGet(helper, movedId)];
    const login = await cli(both.path, "login", "alpha");
    assert.equal(login.code, 0, show(login));
    assert.deepEqual(
      Object.keys(await helperList(helper)).sort(),
      [alphaId, betaId, movedId].sort(),
    );
    const again = await helperGet(helper, alphaId);
    assert.ok(again?.tokens?.accessToken);
    assert.notEqual(again.tokens.accessToken, alphaEntry?.tokens?.accessToken);
    assert.deepEqual([await helperGet(helper, betaId), await helperGet(helper, movedId)], others);
  });

  await t.step("logout removes the tokens; --all erases the entry", async () => {
    const out = await cli(both.path, "logout", "beta");
    assert.equal(out.code, 0, show(out));
    assert.match(out.stderr, new RegExp(`tokens removed from credential helper ${binary}`));
    const beta = await helperGet(helper, betaId);
    assert.equal(beta?.tokens, undefined, "no tokens left for beta");
    assert.ok(beta?.registration, "its client registration is kept");

    const all = await cli(both.path, "logout", "alpha", "--all");
    assert.equal(all.code, 0, show(all));
    assert.equal(await helperGet(helper, alphaId), undefined, "get finds no entry");
    assert.deepEqual(await helperList(helper), { [betaId]: "mcpctl", [movedId]: "mcpctl" });
    assert.ok((await helperGet(helper, movedId))?.tokens, "alpha at the other URL keeps its");

    const [a, b] = await Promise.all([
      cli(both.path, "call", "alpha", "whoami"),
      cli(both.path, "call", "beta", "whoami"),
    ]);
    for (const [name, r] of [["alpha", a], ["beta", b]] as const) {
      assert.equal(r.code, 4, show(r));
      assert.match(r.stderr, new RegExp(`mcpctl login ${name}`));
    }
  });

  await t.step("nothing was ever written to a credentials file", async () => {
    assert.equal(await readIfExists(`${mcpctlHome}/credentials.json`), undefined);
  });
}

Deno.test({
  name: "keychain: docker-credential-pass through the CLI",
  ignore: passMissing.length > 0,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-keychain-pass-" });
    try {
      const helper = await setUpPass(dir);
      try {
        await exerciseHelper(t, helper, dir);
      } finally {
        await helper.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "keychain: docker-credential-secretservice (gnome-keyring) through the CLI",
  ignore: secretServiceMissing.length > 0,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-keychain-ss-" });
    try {
      const helper = await setUpSecretService(dir);
      try {
        await exerciseHelper(t, helper, dir);
      } finally {
        await helper.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

const failedGet = (name: string) =>
  new RegExp(`credential helper docker-credential-${name} failed on "get"`);

/** Runs `login` and `call` for a server whose credentials can go nowhere. */
async function assertRefused(
  options: {
    helperConfig?: string;
    env: Record<string, string>;
    /** What `login` must answer. */
    login: { code: number; message: RegExp };
    /** What `call` must answer. */
    call: { code: number; message: RegExp };
  },
  stack: OidcStackProcess,
  dir: string,
) {
  const mcpctlHome = await Deno.makeTempDir({ dir, prefix: "home-" });
  const urlFile = `${mcpctlHome}/opened-url`;
  const env = {
    MCPCTL_HOME: mcpctlHome,
    MCPCTL_CREDENTIAL_HELPER: "",
    BROWSER: await writeHandOffBrowser(mcpctlHome, urlFile),
    ...options.env,
  };
  await using config = await tempConfig({
    ...(options.helperConfig ? { credentials: { helper: options.helperConfig } } : {}),
    servers: { secure: { url: stack.mcpUrl } },
  });
  const commands = [
    [["login", "secure"], options.login],
    [["call", "secure", "whoami"], options.call],
  ] as const;
  for (const [args, expected] of commands) {
    const r = await runCli(["--config", config.path, ...args], { env, killAfterMs: 30_000 });
    assert.equal(r.code, expected.code, `${args[0]}: ${show(r)}`);
    assert.match(r.stderr, expected.message, `${args[0]}: ${r.stderr}`);
    assert.equal(r.stdout, "");
  }
  assert.equal(await readIfExists(urlFile), undefined, "no browser was opened");
  assert.equal(
    await readIfExists(`${mcpctlHome}/credentials.json`),
    undefined,
    "no fall back to the credentials file",
  );
}

Deno.test({
  name: "keychain: a helper that is missing or failing is an error naming it, never a file",
  ignore: curlMissing,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "mcpctl-keychain-refused-" });
    try {
      await using stack = await startOidcStack({ autoApprove: "alice" });
      const refused = { code: 2, message: /docker-credential-nonexistent was not found on PATH/ };
      await t.step("credentials.helper in the config", () =>
        assertRefused(
          { helperConfig: "nonexistent", env: {}, login: refused, call: refused },
          stack,
          dir,
        ));
      await t.step("MCPCTL_CREDENTIAL_HELPER", () =>
        assertRefused(
          { env: { MCPCTL_CREDENTIAL_HELPER: "nonexistent" }, login: refused, call: refused },
          stack,
          dir,
        ));
      await t.step({
        name: "pass with a password store that was never initialized",
        ignore: passMissing.length > 0,
        fn: async () => {
          const gnupg = `${dir}/gnupg`;
          await Deno.mkdir(gnupg, { mode: 0o700 });
          await using _agent = {
            // In case anything started a gpg-agent for this GNUPGHOME.
            [Symbol.asyncDispose]: () =>
              run("gpgconf", ["--kill", "all"], { GNUPGHOME: gnupg }).then(() => {}),
          };
          await assertRefused(
            {
              helperConfig: "pass",
              env: { GNUPGHOME: gnupg, PASSWORD_STORE_DIR: `${dir}/empty-store` },
              // The sign-in stops at the first write, before any browser opens.
              login: {
                code: 4,
                message: /credential helper docker-credential-pass failed on "store".*pass init/,
              },
              // An empty store answers `get` with "no entry": the server needs a sign-in.
              call: { code: 4, message: /needs sign-in[\s\S]*mcpctl login secure/ },
            },
            stack,
            dir,
          );
        },
      });
      await t.step({
        name: "secretservice without a D-Bus session",
        ignore: secretServiceMissing.length > 0,
        fn: () =>
          assertRefused(
            {
              helperConfig: "secretservice",
              env: { DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/no-bus-here` },
              login: { code: 4, message: failedGet("secretservice") },
              call: { code: 4, message: failedGet("secretservice") },
            },
            stack,
            dir,
          ),
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
