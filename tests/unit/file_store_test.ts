import assert from "node:assert/strict";
import { CREDENTIALS_FILE, FileCredentialStore, mcpctlDataDir } from "../../src/auth/file_store.ts";
import { acquireLock, withLock } from "../../src/auth/lock.ts";
import {
  credentialKeyId,
  openCredentialStore,
  parseCredentialKeyId,
  registrationStoreFor,
  type StoredCredential,
} from "../../src/auth/store.ts";
import type { ClientRegistration } from "../../src/auth/types.ts";
import { ConfigError, InterruptedError, TimeoutError } from "../../src/errors.ts";

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
    // No temp file is left; the lock file stays, empty and unlocked (lock.ts says why).
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), [CREDENTIALS_FILE, `${CREDENTIALS_FILE}.lock`]);
    await (await acquireLock(store.lockPath, { timeoutMs: 0 })).release();
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
    await (await acquireLock(store.lockPath, { timeoutMs: 0 })).release();

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

Deno.test("lock: waiters time out naming the lock file and its holder; release is idempotent", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const held = await acquireLock(path);
    assert.equal(mode(await Deno.stat(path)), 0o600);
    const waits: string[] = [];
    const started = performance.now();
    await assert.rejects(
      acquireLock(path, { timeoutMs: 100, onWait: (m) => waits.push(m) }),
      (e: unknown) => {
        assert.ok(e instanceof TimeoutError);
        assert.equal(e.exitCode, 5);
        assert.ok(e.message.includes(path), e.message);
        assert.match(e.message, new RegExp(`process ${Deno.pid} holds it`));
        return true;
      },
    );
    assert.ok(performance.now() - started >= 100, "waited the whole timeout");
    assert.deepEqual(waits, [`waiting for the lock ${path}: process ${Deno.pid} holds it`]);
    await held.release();
    await held.release();
    // Free again; the lock file stays (see lock.ts).
    assert.equal(await withLock(path, () => 7), 7);
    assert.ok((await Deno.stat(path)).isFile);
  });
});

Deno.test("lock: the OS releases the lock of a killed holder at once", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const holder = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const f = await Deno.open(${
          JSON.stringify(path)
        }, { read: true, write: true, create: true });
         await f.lock(true); console.log("locked"); setInterval(() => {}, 1000);`,
      ],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("locked")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    assert.match(seen, /locked/);
    await assert.rejects(acquireLock(path, { timeoutMs: 50 }), TimeoutError);
    holder.kill("SIGKILL");
    await holder.status;
    await reader.cancel();
    // No staleness rule to wait for: the lock is free as soon as its holder is gone.
    const started = performance.now();
    await (await acquireLock(path, { timeoutMs: 5_000 })).release();
    assert.ok(performance.now() - started < 1_000, `took ${performance.now() - started} ms`);
  });
});

Deno.test("lock: whatever sits at the path is waited on, then named", async () => {
  await withTempDir(async (dir) => {
    const cases: Array<[string, (path: string) => Promise<void>, RegExp]> = [
      ["dangling", (p) => Deno.symlink(`${dir}/nowhere/x`, p), /a symbolic link is in the way/],
      ["link", async (p) => {
        await Deno.writeTextFile(`${dir}/target`, "");
        await Deno.symlink(`${dir}/target`, p);
      }, /a symbolic link is in the way/],
      ["dir", (p) => Deno.mkdir(p), /a directory is in the way/],
    ];
    if (Deno.build.os !== "windows") {
      cases.push([
        "fifo",
        async (p) => {
          const made = await new Deno.Command("mkfifo", { args: [p] }).output();
          assert.ok(made.success);
        },
        /something other than a file is in the way/,
      ]);
    }
    for (const [name, make, reason] of cases) {
      const path = `${dir}/${name}.lock`;
      await make(path);
      await assert.rejects(acquireLock(path, { timeoutMs: 150 }), (e: unknown) => {
        assert.ok(e instanceof TimeoutError, String(e));
        assert.ok(e.message.includes(path), e.message);
        assert.match(e.message, reason);
        assert.match(e.hint ?? "", new RegExp(`remove ${path}`));
        return true;
      });
    }
    // A dangling link is never followed: nothing was created where it points.
    await assert.rejects(Deno.stat(`${dir}/nowhere`), Deno.errors.NotFound);
  });
});

Deno.test("lock: an aborted wait stops at once", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/x.lock`;
    const lock = await acquireLock(path);
    const controller = new AbortController();
    let waiting = false;
    const started = performance.now();
    const attempt = acquireLock(path, {
      timeoutMs: 10_000,
      signal: controller.signal,
      onWait: () => {
        waiting = true;
        controller.abort();
      },
    });
    await assert.rejects(attempt, (e: unknown) => {
      assert.ok(e instanceof InterruptedError);
      assert.ok(e.message.includes(path));
      return true;
    });
    assert.ok(waiting);
    assert.ok(performance.now() - started < 1_000);
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
    // No temp file left; the lock file stays, empty (lock.ts says why).
    assert.deepEqual(names.sort(), [CREDENTIALS_FILE, `${CREDENTIALS_FILE}.lock`]);
    assert.equal(await Deno.readTextFile(`${store.path}.lock`), "");
  });
});
