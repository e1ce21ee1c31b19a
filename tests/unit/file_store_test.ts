import assert from "node:assert/strict";
import { CREDENTIALS_FILE, FileCredentialStore, mcpctlDataDir } from "../../src/auth/file_store.ts";
import { acquireLock, isProcessAlive, withLock } from "../../src/auth/lock.ts";
import {
  credentialKeyId,
  openCredentialStore,
  parseCredentialKeyId,
  registrationStoreFor,
  type StoredCredential,
} from "../../src/auth/store.ts";
import type { ClientRegistration } from "../../src/auth/types.ts";
import { ConfigError, TimeoutError } from "../../src/errors.ts";

const KEY = { serverName: "demo", serverUrl: "https://mcp.example/mcp" };
const CRED: StoredCredential = {
  tokens: {
    accessToken: "at-1",
    tokenType: "Bearer",
    refreshToken: "rt-1",
    expiresAt: 1_900_000_000_000,
    scope: "a b",
  },
  authServer: "https://auth.example",
};
const REGISTRATION: ClientRegistration = {
  clientId: "client-1",
  tokenEndpointAuthMethod: "none",
  registeredAt: 1_700_000_000_000,
  redirectUris: ["http://127.0.0.1/callback"],
  issuer: "https://auth.example",
  source: "dynamic",
};

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mcpctl-file-store-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function mode(info: Deno.FileInfo): number {
  return (info.mode ?? 0) & 0o777;
}

/** A pid that certainly belonged to a process that has exited. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true", { stdout: "null", stderr: "null" }).spawn();
  await child.status;
  return child.pid;
}

Deno.test("file store: data directory resolution", () => {
  assert.deepEqual(
    mcpctlDataDir({ env: { MCPCTL_HOME: "/m", HOME: "/h" }, platform: "linux" }),
    { dir: "/m", isDefault: false, home: "/h" },
  );
  assert.equal(
    mcpctlDataDir({ env: { XDG_DATA_HOME: "/x", HOME: "/h" }, platform: "linux" }).dir,
    "/x/mcpctl",
  );
  // A relative XDG_DATA_HOME is invalid and ignored.
  assert.equal(
    mcpctlDataDir({ env: { XDG_DATA_HOME: "rel", HOME: "/h" }, platform: "linux" }).dir,
    "/h/.local/share/mcpctl",
  );
  assert.equal(
    mcpctlDataDir({ env: {}, home: "/hh", platform: "darwin" }).dir,
    "/hh/.local/share/mcpctl",
  );
  assert.equal(
    mcpctlDataDir({ env: { LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, platform: "windows" })
      .dir,
    "C:\\Users\\u\\AppData\\Local\\mcpctl",
  );
  assert.equal(
    mcpctlDataDir({ env: { USERPROFILE: "C:\\Users\\u" }, platform: "windows" }).dir,
    "C:\\Users\\u\\AppData\\Local\\mcpctl",
  );
  assert.throws(() => mcpctlDataDir({ env: {}, platform: "linux" }), ConfigError);

  const store = new FileCredentialStore({ env: { HOME: "/home/me" }, platform: "linux" });
  assert.equal(store.description, "file ~/.local/share/mcpctl/credentials.json");
  assert.equal(store.path, `/home/me/.local/share/mcpctl/${CREDENTIALS_FILE}`);
  assert.equal(
    openCredentialStore({ env: { MCPCTL_HOME: "/srv/m" }, platform: "linux" }).description,
    "file /srv/m/credentials.json",
  );
});

Deno.test("file store: put, get, list and delete; name and URL both key an entry", async () => {
  await withTempDir(async (dir) => {
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    assert.equal(await store.get(KEY), undefined);
    assert.deepEqual(await store.list(), []);
    await store.put(KEY, CRED);
    assert.deepEqual(await store.get(KEY), CRED);
    // The same name at another URL, and another name at the same URL, are other entries.
    assert.equal(await store.get({ ...KEY, serverUrl: "https://mcp.example/other" }), undefined);
    assert.equal(await store.get({ ...KEY, serverName: "demo2" }), undefined);
    // Spelling differences that URL parsing removes do not matter.
    assert.deepEqual(await store.get({ ...KEY, serverUrl: "HTTPS://MCP.example:443/mcp" }), CRED);

    const other = { serverName: "other", serverUrl: "https://o.example/" };
    await store.put(other, { registration: REGISTRATION });
    assert.deepEqual(await store.get(other), { registration: REGISTRATION });
    assert.deepEqual(
      (await store.list()).sort((a, b) => a.serverName.localeCompare(b.serverName)),
      [KEY, other],
    );
    assert.equal(await store.delete(KEY), true);
    assert.equal(await store.delete(KEY), false);
    assert.equal(await store.get(KEY), undefined);
    assert.deepEqual(await store.get(other), { registration: REGISTRATION });

    const doc = JSON.parse(await Deno.readTextFile(store.path));
    assert.equal(doc.version, 1);
    assert.deepEqual(Object.keys(doc.entries), [credentialKeyId(other)]);
    // Nothing but the file is left: no temp files, no lock.
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, [CREDENTIALS_FILE]);
  });
});

Deno.test("file store: update semantics", async () => {
  await withTempDir(async (dir) => {
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    // Returning undefined for a missing entry writes nothing at all.
    assert.equal(await store.update(KEY, () => undefined), undefined);
    await assert.rejects(Deno.stat(store.path), Deno.errors.NotFound);

    const stored = await store.update(KEY, (current) => {
      assert.equal(current, undefined);
      return CRED;
    });
    assert.deepEqual(stored, CRED);

    // The callback gets a copy: mutating it and returning it is a real change.
    const bumped = await store.update(KEY, (current) => {
      assert.ok(current?.tokens);
      current.tokens.accessToken = "at-2";
      return current;
    });
    assert.equal(bumped?.tokens?.accessToken, "at-2");
    assert.equal((await store.get(KEY))?.tokens?.accessToken, "at-2");

    // An unchanged result does not rewrite the file.
    const before = (await Deno.stat(store.path)).mtime?.getTime();
    const inode = (await Deno.stat(store.path)).ino;
    await new Promise((r) => setTimeout(r, 20));
    await store.update(KEY, (current) => current);
    assert.equal((await Deno.stat(store.path)).mtime?.getTime(), before);
    assert.equal((await Deno.stat(store.path)).ino, inode);

    // A throwing callback changes nothing and releases the lock.
    await assert.rejects(
      store.update(KEY, () => {
        throw new Error("refresh failed");
      }),
      /refresh failed/,
    );
    assert.equal((await store.get(KEY))?.tokens?.accessToken, "at-2");
    await assert.rejects(Deno.stat(store.lockPath), Deno.errors.NotFound);

    // Async callbacks run under the lock; undefined deletes.
    assert.equal(
      await store.update(KEY, async () => {
        await Deno.stat(store.lockPath); // held while the callback runs
        return undefined;
      }),
      undefined,
    );
    assert.equal(await store.get(KEY), undefined);
  });
});

Deno.test("file store: registrationStoreFor keeps registrations per issuer", async () => {
  await withTempDir(async (dir) => {
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    const registrations = registrationStoreFor(store, KEY.serverUrl);
    const rkey = { serverName: KEY.serverName, issuer: REGISTRATION.issuer };
    assert.equal(await registrations.getRegistration(rkey), undefined);
    await store.put(KEY, CRED);
    await registrations.putRegistration(rkey, REGISTRATION);
    assert.deepEqual(await registrations.getRegistration(rkey), REGISTRATION);
    assert.equal(
      await registrations.getRegistration({ ...rkey, issuer: "https://elsewhere.example" }),
      undefined,
    );
    assert.deepEqual(await store.get(KEY), { ...CRED, registration: REGISTRATION });
  });
});

Deno.test("file store: file 0600, directory 0700, written atomically", async () => {
  await withTempDir(async (home) => {
    const store = new FileCredentialStore({ env: { HOME: home }, platform: "linux" });
    await store.put(KEY, CRED);
    const dir = `${home}/.local/share/mcpctl`;
    assert.equal(store.path, `${dir}/credentials.json`);
    assert.equal(mode(await Deno.stat(store.path)), 0o600);
    assert.equal(mode(await Deno.stat(dir)), 0o700);

    // A default directory that was opened up is tightened again; a wide file is replaced.
    await Deno.chmod(dir, 0o755);
    await Deno.chmod(store.path, 0o644);
    await store.put(KEY, { ...CRED, authServer: "https://other.example" });
    assert.equal(mode(await Deno.stat(dir)), 0o700);
    assert.equal(mode(await Deno.stat(store.path)), 0o600);
  });
  await withTempDir(async (dir) => {
    // A directory chosen with MCPCTL_HOME is left as the user made it.
    await Deno.chmod(dir, 0o755);
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    await store.put(KEY, CRED);
    assert.equal(mode(await Deno.stat(dir)), 0o755);
    assert.equal(mode(await Deno.stat(store.path)), 0o600);
  });
});

Deno.test("file store: a corrupt file is an error and is never overwritten", async () => {
  await withTempDir(async (dir) => {
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    await Deno.writeTextFile(store.path, "{not json");
    await assert.rejects(store.get(KEY), ConfigError);
    await assert.rejects(store.put(KEY, CRED), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /not valid JSON/);
      assert.match(e.hint ?? "", /delete/);
      return true;
    });
    assert.equal(await Deno.readTextFile(store.path), "{not json");

    await Deno.writeTextFile(store.path, JSON.stringify({ version: 99, entries: {} }));
    await assert.rejects(store.get(KEY), /newer mcpctl/);
    await Deno.writeTextFile(store.path, "[]");
    await assert.rejects(store.get(KEY), /unknown layout/);

    // Unusable entries are skipped; usable fields are kept.
    await Deno.writeTextFile(
      store.path,
      JSON.stringify({
        version: 1,
        entries: {
          [credentialKeyId(KEY)]: {
            serverName: KEY.serverName,
            serverUrl: KEY.serverUrl,
            tokens: { accessToken: "t", tokenType: "Bearer", expiresAt: "soon" },
            registration: { clientId: 5 },
            extra: true,
          },
          "x": "not an object",
        },
      }),
    );
    assert.deepEqual(await store.get(KEY), { tokens: { accessToken: "t", tokenType: "Bearer" } });
    assert.deepEqual(await store.list(), [KEY]);
  });
});

Deno.test("file store: key ids round-trip", () => {
  const key = { serverName: "a/b c", serverUrl: "https://x.example/p?q=1%2F&r=#f" };
  const id = credentialKeyId(key);
  assert.match(id, /^mcpctl:\/\/servers\/a%2Fb%20c\//);
  assert.deepEqual(parseCredentialKeyId(id), { ...key, serverUrl: new URL(key.serverUrl).href });
  // Some helpers list the URL part decoded.
  assert.deepEqual(parseCredentialKeyId("mcpctl://servers/gh/https://x.example/mcp"), {
    serverName: "gh",
    serverUrl: "https://x.example/mcp",
  });
  assert.equal(parseCredentialKeyId("https://index.docker.io/v1/"), undefined);
  assert.equal(parseCredentialKeyId("mcpctl://servers/noslash"), undefined);
});

Deno.test("lock: waiters time out naming the lock file; release is idempotent", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const held = await acquireLock(path);
    const content = JSON.parse(await Deno.readTextFile(path));
    assert.equal(content.pid, Deno.pid);
    assert.equal(typeof content.createdAt, "number");
    assert.equal(mode(await Deno.stat(path)), 0o600);
    await assert.rejects(acquireLock(path, { timeoutMs: 100 }), (e: unknown) => {
      assert.ok(e instanceof TimeoutError);
      assert.ok(e.message.includes(path));
      assert.match(e.message, new RegExp(`held by pid ${Deno.pid}`));
      return true;
    });
    await held.release();
    await held.release();
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
    // Free again.
    assert.equal(await withLock(path, () => 7), 7);
  });
});

Deno.test("lock: a stale lock of a dead process is broken, a fresh or live one is not", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const pid = await deadPid();
    assert.equal(isProcessAlive(pid), false);
    assert.equal(isProcessAlive(Deno.pid), true);
    const old = new Date(Date.now() - 60_000);
    const body = JSON.stringify({ pid, hostname: Deno.hostname(), createdAt: old.getTime() });

    // Dead but fresh: could be a pid just written; wait.
    await Deno.writeTextFile(path, body);
    await assert.rejects(acquireLock(path, { timeoutMs: 50 }), TimeoutError);

    // Dead and old: broken.
    await Deno.utime(path, old, old);
    const lock = await acquireLock(path, { timeoutMs: 1_000 });
    assert.equal(JSON.parse(await Deno.readTextFile(path)).pid, Deno.pid);
    await lock.release();

    // Alive and old: kept.
    await Deno.writeTextFile(path, JSON.stringify({ pid: Deno.pid, hostname: Deno.hostname() }));
    await Deno.utime(path, old, old);
    await assert.rejects(acquireLock(path, { timeoutMs: 50 }), TimeoutError);

    // Empty (its writer died before writing) and old: broken.
    await Deno.writeTextFile(path, "");
    await Deno.utime(path, old, old);
    await (await acquireLock(path, { timeoutMs: 1_000 })).release();
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  });
});

Deno.test("lock: release leaves a lock that is no longer ours", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const lock = await acquireLock(path);
    await Deno.writeTextFile(path, "someone else's");
    await lock.release();
    assert.equal(await Deno.readTextFile(path), "someone else's");
  });
});

Deno.test("lock: an aborted wait stops", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const lock = await acquireLock(path);
    const controller = new AbortController();
    const waiting = acquireLock(path, { timeoutMs: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(waiting, /interrupted/);
    await lock.release();
  });
});

Deno.test("file store: 8 processes writing at once lose nothing", async () => {
  await withTempDir(async (dir) => {
    const writers = 8;
    const perWriter = 20;
    const script = new URL("../../testdata/auth/store_writer.ts", import.meta.url).pathname;
    const children = Array.from({ length: writers }, (_, w) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", script, "file", String(w), String(perWriter)],
        env: { MCPCTL_HOME: dir },
        stdout: "piped",
        stderr: "piped",
      }).output());
    const outputs = await Promise.all(children);
    for (const output of outputs) {
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    }
    const store = new FileCredentialStore({ env: { MCPCTL_HOME: dir } });
    const doc = JSON.parse(await Deno.readTextFile(store.path));
    assert.equal(Object.keys(doc.entries).length, writers * perWriter + 1);
    for (let w = 0; w < writers; w++) {
      for (let i = 0; i < perWriter; i++) {
        const entry = await store.get({
          serverName: `w${w}-${i}`,
          serverUrl: `https://s${w}.example/mcp/${i}`,
        });
        assert.equal(entry?.tokens?.accessToken, `token-${w}-${i}`);
      }
    }
    // Every read-modify-write of the shared counter saw the one before it.
    const counter = await store.get({
      serverName: "counter",
      serverUrl: "https://counter.example/mcp",
    });
    assert.equal(counter?.tokens?.accessToken, String(writers * perWriter));
    assert.equal(mode(await Deno.stat(store.path)), 0o600);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, [CREDENTIALS_FILE], "no temp or lock files left");
  });
});
