import assert from "node:assert/strict";
import {
  helperBinary,
  HelperCredentialStore,
  type HelperSpawn,
  spawnHelper,
} from "../../src/auth/helper_store.ts";
import {
  credentialKeyId,
  openCredentialStore,
  type StoredCredential,
} from "../../src/auth/store.ts";
import { acquireLock } from "../../src/auth/lock.ts";
import { AuthRequiredError, ConfigError, TimeoutError } from "../../src/errors.ts";

const KEY = { serverName: "demo", serverUrl: "https://mcp.example/mcp" };
const CRED: StoredCredential = {
  tokens: { accessToken: "access-SECRET-1", tokenType: "Bearer", refreshToken: "refresh-SECRET-1" },
  authServer: "https://auth.example",
};
const FIXTURES = new URL("../../testdata/auth/", import.meta.url).pathname.replace(/\/$/, "");

interface Fake {
  dir: string;
  storeFile: string;
  logFile: string;
  ops(): Promise<string[]>;
  entries(): Promise<Record<string, { Username: string; Secret: string }>>;
}

/** Puts the fake helper on PATH with its own store file, for the length of `fn`. */
async function withFakeHelper(fn: (fake: Fake) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-helper-store-" });
  const saved = Object.fromEntries(
    ["PATH", "FAKE_HELPER_STORE", "FAKE_HELPER_LOG", "FAKE_HELPER_FAIL"].map((k) => [
      k,
      Deno.env.get(k),
    ]),
  );
  const fake: Fake = {
    dir,
    storeFile: `${dir}/helper-entries.json`,
    logFile: `${dir}/helper.log`,
    async ops() {
      try {
        return (await Deno.readTextFile(this.logFile)).split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
    async entries() {
      try {
        return JSON.parse(await Deno.readTextFile(this.storeFile));
      } catch {
        return {};
      }
    },
  };
  Deno.env.set("PATH", `${FIXTURES}:${saved.PATH ?? ""}`);
  Deno.env.set("FAKE_HELPER_STORE", fake.storeFile);
  Deno.env.set("FAKE_HELPER_LOG", fake.logFile);
  Deno.env.delete("FAKE_HELPER_FAIL");
  try {
    await fn(fake);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("helper store: helper names map to docker-credential binaries", () => {
  assert.equal(helperBinary("pass"), "docker-credential-pass");
  assert.equal(helperBinary("docker-credential-pass"), "docker-credential-pass");
  assert.equal(helperBinary("/opt/bin/my-helper"), "/opt/bin/my-helper");
  const store = openCredentialStore({
    helper: "secretservice",
    env: { HOME: "/home/me" },
    platform: "linux",
  });
  assert.equal(store.description, "credential helper docker-credential-secretservice");
  // The environment wins over the configuration.
  assert.equal(
    openCredentialStore({
      helper: "secretservice",
      env: { HOME: "/h", MCPCTL_CREDENTIAL_HELPER: "pass" },
    })
      .description,
    "credential helper docker-credential-pass",
  );
  assert.match(
    openCredentialStore({ helper: " ", env: { HOME: "/h" }, platform: "linux" }).description,
    /^file /,
  );
});

Deno.test("helper store: store, get, list and erase through the helper protocol", async () => {
  await withFakeHelper(async (fake) => {
    const store = openCredentialStore({
      env: { MCPCTL_HOME: fake.dir, MCPCTL_CREDENTIAL_HELPER: "fake" },
    });
    assert.equal(store.description, "credential helper docker-credential-fake");
    assert.equal(await store.get(KEY), undefined);
    await store.put(KEY, CRED);
    assert.deepEqual(await store.get(KEY), CRED);

    const entries = await fake.entries();
    const id = credentialKeyId(KEY);
    assert.equal(id, "mcpctl://servers/demo/https%3A%2F%2Fmcp.example%2Fmcp");
    assert.deepEqual(Object.keys(entries), [id]);
    assert.equal(entries[id]?.Username, "mcpctl");
    assert.deepEqual(JSON.parse(entries[id]?.Secret ?? ""), CRED);

    // One server at two URLs, and two servers at one URL, are separate entries.
    const moved = { ...KEY, serverUrl: "https://mcp.example/v2" };
    const twin = { ...KEY, serverName: "demo-2" };
    assert.equal(await store.get(moved), undefined);
    await store.put(moved, { authServer: "https://a2.example" });
    await store.put(twin, { authServer: "https://a3.example" });
    assert.deepEqual(await store.get(KEY), CRED);

    // list shows only mcpctl's entries.
    const other = await fake.entries();
    other["https://index.docker.io/v1/"] = { Username: "someone", Secret: "x" };
    await Deno.writeTextFile(fake.storeFile, JSON.stringify(other));
    const listed = (await store.list()).map((k) => `${k.serverName} ${k.serverUrl}`).sort();
    assert.deepEqual(listed, [
      "demo https://mcp.example/mcp",
      "demo https://mcp.example/v2",
      "demo-2 https://mcp.example/mcp",
    ]);

    assert.equal(await store.delete(KEY), true);
    assert.equal(await store.delete(KEY), false);
    assert.equal(await store.get(KEY), undefined);
    assert.ok(await store.get(moved));
    // Never a credentials file beside the helper.
    await assert.rejects(Deno.stat(`${fake.dir}/credentials.json`), Deno.errors.NotFound);
    // Only the (empty) lock file, never the credentials.
    assert.equal(await Deno.readTextFile(`${fake.dir}/credential-helper.lock`), "");
  });
});

Deno.test("helper store: update writes only changes and runs under the lock", async () => {
  await withFakeHelper(async (fake) => {
    const store = new HelperCredentialStore({ helper: "fake", stateDir: `${fake.dir}/state` });
    await store.put(KEY, CRED);
    await Deno.remove(fake.logFile);
    const same = await store.update(KEY, (current) => current);
    assert.deepEqual(same, CRED);
    assert.deepEqual(await fake.ops(), ["get"], "an unchanged entry is not stored again");

    const next = await store.update(KEY, async (current) => {
      await Deno.stat(store.lockPath); // held while the callback runs
      assert.ok(current?.tokens);
      current.tokens.accessToken = "access-SECRET-2";
      return current;
    });
    assert.equal(next?.tokens?.accessToken, "access-SECRET-2");
    assert.equal((await store.get(KEY))?.tokens?.accessToken, "access-SECRET-2");

    await assert.rejects(store.update(KEY, () => Promise.reject(new Error("no"))), /no/);
    // Released: free at the first try.
    await (await acquireLock(store.lockPath, { timeoutMs: 0 })).release();
    assert.equal(await store.update(KEY, () => undefined), undefined);
    assert.equal(await store.get(KEY), undefined);
  });
});

Deno.test("helper store: a missing helper is a ConfigError and nothing falls back", async () => {
  await withFakeHelper(async (fake) => {
    const store = openCredentialStore({
      env: { MCPCTL_HOME: fake.dir, MCPCTL_CREDENTIAL_HELPER: "does-not-exist-xyz" },
    });
    for (const attempt of [() => store.get(KEY), () => store.put(KEY, CRED), () => store.list()]) {
      await assert.rejects(attempt(), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /docker-credential-does-not-exist-xyz/);
        assert.match(e.message, /not found/);
        return true;
      });
    }
    await assert.rejects(Deno.stat(`${fake.dir}/credentials.json`), Deno.errors.NotFound);
  });
});

Deno.test("helper store: a failing helper is an AuthRequiredError that shows no secret", async () => {
  await withFakeHelper(async (fake) => {
    const store = new HelperCredentialStore({ helper: "fake", stateDir: fake.dir });
    Deno.env.set("FAKE_HELPER_FAIL", "1");
    // The fake echoes its whole stdin (with the secret) on stderr.
    await assert.rejects(store.put(KEY, CRED), (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.match(e.message, /docker-credential-fake failed on "store" \(exit 1\)/);
      assert.match(e.message, /fake helper failure/);
      assert.ok(!e.message.includes("SECRET"), e.message);
      return true;
    });
    await assert.rejects(store.get(KEY), /failed on "get"/);
    await assert.rejects(store.list(), /failed on "list"/);
  });
});

Deno.test("helper store: protocol details with an injected spawn", async () => {
  const calls: { command: string; args: string[]; stdin: string }[] = [];
  let reply = { code: 0, stdout: "", stderr: "" };
  const spawn: HelperSpawn = (command, args, options) => {
    calls.push({ command, args, stdin: options.stdin });
    return Promise.resolve(reply);
  };
  const dir = await Deno.makeTempDir();
  try {
    const store = new HelperCredentialStore({ helper: "x", stateDir: dir, spawn });
    reply = {
      code: 0,
      stdout: JSON.stringify({ ServerURL: "u", Username: "mcpctl", Secret: JSON.stringify(CRED) }),
      stderr: "",
    };
    assert.deepEqual(await store.get(KEY), CRED);
    assert.deepEqual(calls.at(-1), {
      command: "docker-credential-x",
      args: ["get"],
      stdin: credentialKeyId(KEY),
    });

    // Not found may come on stdout (docker's helpers) or stderr.
    reply = { code: 1, stdout: "", stderr: "credentials not found in native keychain\n" };
    assert.equal(await store.get(KEY), undefined);

    reply = { code: 0, stdout: "", stderr: "" };
    await store.put(KEY, CRED);
    const stored = JSON.parse(calls.at(-1)?.stdin ?? "");
    assert.deepEqual(calls.at(-1)?.args, ["store"]);
    assert.deepEqual(Object.keys(stored).sort(), ["Secret", "ServerURL", "Username"]);
    assert.deepEqual(JSON.parse(stored.Secret), CRED);

    reply = { code: 0, stdout: JSON.stringify({ Secret: "not json" }), stderr: "" };
    assert.equal(await store.get(KEY), undefined, "a foreign Secret counts as no entry");
    for (const stdout of ["not json", "[]", JSON.stringify({ ServerURL: "u" })]) {
      reply = { code: 0, stdout, stderr: "" };
      await assert.rejects(store.get(KEY), (e: unknown) => {
        assert.ok(e instanceof AuthRequiredError);
        assert.match(e.message, /unusable data/);
        return true;
      });
    }

    // A helper that echoes the secret on failure does not get it into the message.
    reply = { code: 1, stdout: `error storing {"Secret":"${"x".repeat(10)}`, stderr: "" };
    await assert.rejects(store.put(KEY, CRED), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.ok(!e.message.includes("xxxxxxxxxx"), e.message);
      return true;
    });

    const slow = new HelperCredentialStore({
      helper: "x",
      stateDir: dir,
      spawn: () => Promise.reject(new TimeoutError("t")),
      timeoutMs: 1_000,
    });
    await assert.rejects(slow.get(KEY), /did not finish "get" within 1 s/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("helper store: the default spawner pipes stdin and output and reaps", async () => {
  const echoed = await spawnHelper("cat", [], { stdin: "hello\n", timeoutMs: 5_000 });
  assert.deepEqual(echoed, { code: 0, stdout: "hello\n", stderr: "" });
  const failed = await spawnHelper("sh", ["-c", "echo oops >&2; exit 3"], {
    stdin: "",
    timeoutMs: 5_000,
  });
  assert.deepEqual(failed, { code: 3, stdout: "", stderr: "oops\n" });
  // A helper that exits without reading a large stdin is not an error of ours.
  const ignored = await spawnHelper("true", [], { stdin: "x".repeat(1 << 20), timeoutMs: 5_000 });
  assert.equal(ignored.code, 0);
  await assert.rejects(
    spawnHelper("sleep", ["30"], { stdin: "", timeoutMs: 100 }),
    TimeoutError,
  );
  await assert.rejects(
    spawnHelper("docker-credential-nothing-here", ["get"], { stdin: "", timeoutMs: 1_000 }),
    Deno.errors.NotFound,
  );
});

Deno.test("helper store: 4 processes updating through the helper lose nothing", async () => {
  await withFakeHelper(async (fake) => {
    const writers = 4;
    const perWriter = 5;
    const script = `${FIXTURES}/store_writer.ts`;
    const outputs = await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--quiet", script, "helper", String(w), String(perWriter)],
          env: { MCPCTL_HOME: fake.dir, WRITER_HELPER: "fake" },
          stdout: "piped",
          stderr: "piped",
        }).output()),
    );
    for (const output of outputs) {
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    }
    const store = new HelperCredentialStore({ helper: "fake", stateDir: fake.dir });
    assert.equal((await store.list()).length, writers * perWriter + 1);
    const counter = await store.get({
      serverName: "counter",
      serverUrl: "https://counter.example/mcp",
    });
    assert.equal(counter?.tokens?.accessToken, String(writers * perWriter));
  });
});
