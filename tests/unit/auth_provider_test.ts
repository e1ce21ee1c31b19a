import assert from "node:assert/strict";
import { createAuthProvider, type InteractiveSignIn } from "../../src/auth/provider.ts";
import {
  credentialKeyId,
  type CredentialStore,
  type StoredCredential,
  type StoreKey,
  type UpdateFunction,
} from "../../src/auth/store.ts";
import type { ClientRegistration, FetchLike } from "../../src/auth/types.ts";
import { AuthRequiredError } from "../../src/errors.ts";
import { fakeBrowser } from "../../testdata/auth/fake_as.ts";
import {
  type ProtectedServer,
  startProtectedServer,
} from "../../testdata/auth/protected_server.ts";

const HINT = "run: mcpctl login svc";

/** An in-memory CredentialStore; `update` calls run one at a time, like the file lock. */
function memoryCredentialStore(): CredentialStore & { writes: number } {
  const entries = new Map<string, { key: StoreKey; value: StoredCredential }>();
  let queue: Promise<unknown> = Promise.resolve();
  let writes = 0;
  const copy = <T>(v: T): T => v === undefined ? v : structuredClone(v);
  const store = {
    description: "memory",
    get writes() {
      return writes;
    },
    get: (key: StoreKey) => Promise.resolve(copy(entries.get(credentialKeyId(key))?.value)),
    put: async (key: StoreKey, value: StoredCredential) => {
      await store.update(key, () => value);
    },
    delete: async (key: StoreKey) => {
      let existed = false;
      await store.update(key, (current) => {
        existed = current !== undefined;
        return undefined;
      });
      return existed;
    },
    update(key: StoreKey, fn: UpdateFunction) {
      const run = queue.then(async () => {
        const id = credentialKeyId(key);
        const next = await fn(copy(entries.get(id)?.value));
        writes++;
        if (next === undefined) entries.delete(id);
        else entries.set(id, { key, value: copy(next) });
        return copy(next);
      });
      queue = run.catch(() => {});
      return run;
    },
    list: () => Promise.resolve([...entries.values()].map((e) => e.key)),
  };
  return store as CredentialStore & { writes: number };
}

/** A fetch that counts and records the URLs it was asked for. */
function countingFetch(): FetchLike & { urls: string[] } {
  const urls: string[] = [];
  const f = ((input: string, init?: RequestInit) => {
    urls.push(input);
    return fetch(input, init);
  }) as FetchLike & { urls: string[] };
  f.urls = urls;
  return f;
}

/** Starts a protected server with a public client `cli` known to its AS. */
async function withServer(
  body: (srv: ProtectedServer) => Promise<void>,
  clients: Parameters<typeof startProtectedServer>[0] = {},
): Promise<void> {
  const srv = startProtectedServer({
    ...clients,
    as: { clients: [{ id: "cli", method: "none" }], ...clients.as },
  });
  try {
    await body(srv);
  } finally {
    await srv.close();
  }
}

function registration(srv: ProtectedServer): ClientRegistration {
  return {
    clientId: "cli",
    tokenEndpointAuthMethod: "none",
    registeredAt: 0,
    issuer: srv.as.issuer,
    source: "dynamic",
  };
}

/** Stores a sign-in of `cli` for `svc` that expires `expiresInMs` after `now`. */
async function seed(
  srv: ProtectedServer,
  store: CredentialStore,
  now: number,
  expiresInMs: number,
): Promise<{ accessToken: string; refreshToken: string }> {
  const minted = srv.as.mint("cli", srv.resource);
  await store.put({ serverName: "svc", serverUrl: srv.url }, {
    tokens: {
      accessToken: minted.accessToken,
      refreshToken: minted.refreshToken,
      tokenType: "Bearer",
      expiresAt: now + expiresInMs,
    },
    registration: registration(srv),
    authServer: srv.as.issuer,
  });
  return minted;
}

const challenge = (srv: ProtectedServer) => ({
  status: 401,
  params: {
    resource_metadata: `${new URL(srv.url).origin}/.well-known/oauth-protected-resource/mcp`,
  },
});

Deno.test("provider: a token expiring within 60 s is refreshed before use; a fresher one is not", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const fetchFn = countingFetch();
    let now = 1_700_000_000_000;
    const seeded = await seed(srv, store, now, 61_000);
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: fetchFn,
      now: () => now,
    });
    // 61 s left: used as is, nothing asked of anyone.
    assert.equal(await auth.authorization(), `Bearer ${seeded.accessToken}`);
    assert.deepEqual(fetchFn.urls, []);
    // 59 s left: refreshed first.
    now += 2_000;
    const header = await auth.authorization();
    assert.notEqual(header, `Bearer ${seeded.accessToken}`);
    assert.equal(srv.grants("refresh_token"), 1);
    const stored = await store.get({ serverName: "svc", serverUrl: srv.url });
    assert.equal(`Bearer ${stored?.tokens?.accessToken}`, header);
    assert.notEqual(stored?.tokens?.refreshToken, seeded.refreshToken);
    assert.equal(stored?.tokens?.expiresAt, now + 3_600_000);
    assert.deepEqual(srv.as.problems, []);
    // The new token is good for an hour: no second refresh.
    assert.equal(await auth.authorization(), header);
    assert.equal(srv.grants("refresh_token"), 1);
  });
});

Deno.test("provider: tokens shorter-lived than the margin are refreshed after half their life, not per use", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    let now = 1_700_000_000_000;
    srv.as.controls.accessTtlSeconds = 30;
    const seeded = await seed(srv, store, now, 30_000);
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    });
    // Read from the store with 30 s left: refreshed.
    const first = await auth.authorization();
    assert.notEqual(first, `Bearer ${seeded.accessToken}`);
    assert.equal(srv.grants("refresh_token"), 1);
    // The new token also lives 30 s; it is used as is for the first half of its life.
    now += 14_000;
    assert.equal(await auth.authorization(), first);
    assert.equal(await auth.authorization(), first);
    assert.equal(srv.grants("refresh_token"), 1);
    now += 2_000;
    assert.notEqual(await auth.authorization(), first);
    assert.equal(srv.grants("refresh_token"), 2);
  });
});

Deno.test("provider: a token refreshed by another process while waiting for the lock is taken, not refreshed again", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const now = 1_700_000_000_000;
    srv.as.controls.accessTtlSeconds = 30;
    await seed(srv, store, now, 30_000);
    const options = {
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    };
    // Two providers on one store stand for two processes sharing the credentials file.
    const [a, b] = [createAuthProvider(options), createAuthProvider(options)];
    const [ha, hb] = await Promise.all([a.authorization(), b.authorization()]);
    assert.equal(ha, hb);
    assert.equal(srv.grants("refresh_token"), 1);
    assert.deepEqual(srv.as.problems, []);
  });
});

Deno.test("provider: a 401 forces one refresh, and only one", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const now = 1_700_000_000_000;
    const seeded = await seed(srv, store, now, 3_600_000);
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    });
    assert.equal(await auth.authorization(), `Bearer ${seeded.accessToken}`);
    assert.equal(await auth.unauthorized(challenge(srv)), true);
    const renewed = await auth.authorization();
    assert.notEqual(renewed, `Bearer ${seeded.accessToken}`);
    assert.equal(srv.grants("refresh_token"), 1);
    // A second 401 in the same run: no second refresh, no loop; a sign-in is needed.
    await assert.rejects(auth.unauthorized(challenge(srv)), (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.equal(e.hint, HINT);
      return true;
    });
    assert.equal(srv.grants("refresh_token"), 1);
  });
});

Deno.test("provider: a refused refresh on 401 deletes the tokens and asks for mcpctl login", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const now = 1_700_000_000_000;
    await seed(srv, store, now, 3_600_000);
    srv.as.controls.refuseRefresh = true;
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    });
    await auth.authorization();
    await assert.rejects(auth.unauthorized(challenge(srv)), (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError, String(e));
      assert.equal(e.hint, HINT);
      return true;
    });
    assert.equal(srv.grants("refresh_token"), 1);
    const stored = await store.get({ serverName: "svc", serverUrl: srv.url });
    assert.equal(stored?.tokens, undefined);
    // The client registration is kept: only the tokens were bad.
    assert.equal(stored?.registration?.clientId, "cli");
    assert.equal(await auth.authorization(), undefined);
  });
});

Deno.test("provider: a refused refresh before expiry deletes the tokens; the 401 then needs login", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const now = 1_700_000_000_000;
    await seed(srv, store, now, 10_000);
    srv.as.controls.refuseRefresh = true;
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    });
    assert.equal(await auth.authorization(), undefined);
    assert.equal((await store.get({ serverName: "svc", serverUrl: srv.url }))?.tokens, undefined);
    await assert.rejects(auth.unauthorized(challenge(srv)), (e: unknown) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.equal(e.hint, HINT);
      return true;
    });
    assert.equal(srv.grants("refresh_token"), 1);
  });
});

/** An interactive sign-in that fails the test if it is ever used. */
function noBrowser(): InteractiveSignIn & { used: string[] } {
  const used: string[] = [];
  return {
    used,
    openBrowser(url) {
      used.push(url);
      return Promise.reject(new Error("no browser may open here"));
    },
    listen(state) {
      used.push(`listen ${state}`);
      return Promise.reject(new Error("no listener may start here"));
    },
  };
}

Deno.test("provider: client_credentials obtains a token without any browser", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const browser = noBrowser();
    const commands: string[][] = [];
    const secrets: string[] = [];
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: { grant: "client_credentials", clientId: "ci", clientSecret: "sekrit-cc-1" },
      tokenCommand: ["never-run"],
      runCommand: (argv) => {
        commands.push(argv);
        return Promise.resolve("cmd-token");
      },
      store,
      interactive: browser,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      onSecret: (s) => secrets.push(s),
    });
    const header = await auth.authorization();
    assert.match(header ?? "", /^Bearer at-/);
    assert.equal(srv.grants("client_credentials"), 1);
    assert.deepEqual(srv.as.authenticated, [{ clientId: "ci", method: "client_secret_basic" }]);
    assert.deepEqual(browser.used, []);
    assert.deepEqual(commands, []);
    assert.ok(secrets.includes(header!.slice(7)));
    const stored = await store.get({ serverName: "svc", serverUrl: srv.url });
    assert.equal(`Bearer ${stored?.tokens?.accessToken}`, header);
    // The configured secret stays in the configuration: it is not copied to the store.
    assert.ok(!JSON.stringify(stored).includes("sekrit-cc-1"), JSON.stringify(stored));
    // A 401 gets a fresh client_credentials token, still without a browser.
    assert.equal(await auth.unauthorized(challenge(srv)), true);
    assert.equal(srv.grants("client_credentials"), 2);
    assert.deepEqual(browser.used, []);
  }, {
    as: { clients: [{ id: "ci", method: "client_secret_basic", secret: "sekrit-cc-1" }] },
  });
});

Deno.test("provider: tokenCommand is used only when nothing is stored", async () => {
  await withServer(async (srv) => {
    const now = 1_700_000_000_000;
    const commands: string[][] = [];
    const options = {
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      tokenCommand: ["print-token", "--for", "svc"],
      runCommand: (argv: string[]) => {
        commands.push(argv);
        return Promise.resolve("  cmd-token-1\n");
      },
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
      now: () => now,
    };
    // Nothing stored: the command's output (trimmed) is the bearer token.
    const empty = memoryCredentialStore();
    const fromCommand = createAuthProvider({ ...options, store: empty });
    assert.equal(await fromCommand.authorization(), "Bearer cmd-token-1");
    assert.equal(await fromCommand.authorization(), "Bearer cmd-token-1");
    assert.deepEqual(commands, [["print-token", "--for", "svc"]]);
    assert.equal(empty.writes, 0, "a command's token is not stored");
    // A stored sign-in wins: the command never runs.
    const store = memoryCredentialStore();
    const seeded = await seed(srv, store, now, 3_600_000);
    const fromStore = createAuthProvider({ ...options, store });
    assert.equal(await fromStore.authorization(), `Bearer ${seeded.accessToken}`);
    assert.equal(commands.length, 1);
  });
});

Deno.test("provider: concurrent unauthorized() calls share one sign-in", async () => {
  await withServer(async (srv) => {
    const store = memoryCredentialStore();
    const browser = fakeBrowser();
    let listens = 0;
    const interactive: InteractiveSignIn = {
      openBrowser: (url) => browser.openBrowser(url),
      listen(state) {
        listens++;
        return Promise.resolve({
          redirectUri: browser.redirectUri,
          result: browser.waitForCallback(state),
          close: () => Promise.resolve(),
        });
      },
    };
    const auth = createAuthProvider({
      serverName: "svc",
      serverUrl: srv.url,
      settings: {},
      store,
      interactive,
      loginHint: "mcpctl login svc",
      fetch: countingFetch(),
    });
    assert.equal(await auth.authorization(), undefined);
    const results = await Promise.all([1, 2, 3].map(() => auth.unauthorized(challenge(srv))));
    assert.deepEqual(results, [true, true, true]);
    assert.equal(browser.opened.length, 1);
    assert.equal(listens, 1);
    assert.equal(srv.grants("authorization_code"), 1);
    assert.equal(auth.signedIn, true);
    const header = await auth.authorization();
    const stored = await store.get({ serverName: "svc", serverUrl: srv.url });
    assert.equal(header, `Bearer ${stored?.tokens?.accessToken}`);
    assert.ok(srv.as.accessTokens.has(stored!.tokens!.accessToken));
    assert.deepEqual(srv.as.problems, []);
  });
});
