import assert from "node:assert/strict";
import { credentialKeyId } from "../../src/auth/store.ts";
import { pkcs8Pem } from "../../testdata/auth/fake_as.ts";
import {
  type ProtectedServer,
  startProtectedServer,
} from "../../testdata/auth/protected_server.ts";
import { type CliResult, runCli, testdata } from "../helpers/cli.ts";

/**
 * A private place for one test's CLI runs: MCPCTL_HOME (not created beforehand, so
 * mcpctl creates it), XDG directories, a config file, and a BROWSER that follows the
 * sign-in redirects with curl.
 */
interface Sandbox extends AsyncDisposable {
  root: string;
  /** MCPCTL_HOME. */
  home: string;
  config: string;
  env: Record<string, string>;
  writeConfig(servers: Record<string, unknown>): Promise<void>;
  run(args: string[], extraEnv?: Record<string, string>): Promise<CliResult>;
  /** The stored entry for (name, url), or undefined. */
  stored(name: string, url: string): Promise<StoredEntry | undefined>;
}

interface StoredEntry {
  tokens?: { accessToken: string; refreshToken?: string; expiresAt?: number };
  registration?: { clientId: string; clientSecret?: string };
}

const FOLLOW = `sh ${testdata("auth/follow_redirects.sh")}`;

async function sandbox(): Promise<Sandbox> {
  const root = await Deno.makeTempDir({ prefix: "mcpctl-auth-" });
  const home = `${root}/mcpctl-home`;
  const config = `${root}/mcpctl.json`;
  const env: Record<string, string> = {
    MCPCTL_HOME: home,
    BROWSER: FOLLOW,
    MCPCTL_CREDENTIAL_HELPER: "",
    MCPCTL_OAUTH_CLIENT_SECRET: "",
    XDG_CONFIG_HOME: `${root}/xdg-config`,
    XDG_STATE_HOME: `${root}/xdg-state`,
    XDG_DATA_HOME: `${root}/xdg-data`,
  };
  const box: Sandbox = {
    root,
    home,
    config,
    env,
    async writeConfig(servers) {
      await Deno.writeTextFile(config, JSON.stringify({ servers }, null, 2));
    },
    run(args, extraEnv = {}) {
      return runCli([...args, "--config", config], { env: { ...env, ...extraEnv } });
    },
    async stored(name, url) {
      let text: string;
      try {
        text = await Deno.readTextFile(`${home}/credentials.json`);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      }
      return JSON.parse(text).entries[credentialKeyId({ serverName: name, serverUrl: url })];
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
  return box;
}

/** A protected server that closes with the test. */
function protectedServer(
  options: Parameters<typeof startProtectedServer>[0] = {},
): ProtectedServer & AsyncDisposable {
  const srv = startProtectedServer(options);
  return Object.assign(srv, { [Symbol.asyncDispose]: () => srv.close() });
}

/** Bearer tokens the server received, in order (undefined for requests without one). */
const bearers = (srv: ProtectedServer) =>
  srv.requests.map((r) => r.authorization?.replace(/^Bearer /, ""));

/** Requests to the MCP endpoint itself (not its metadata) from index `from` on. */
const mcpRequests = (srv: ProtectedServer, from = 0) =>
  srv.requests.slice(from).filter((r) => r.path === "/mcp");

function assertOk(r: CliResult, what: string): void {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

Deno.test("auth e2e: auth_required → exact login command → login → call; file modes; logout", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });

  const list = await box.run(["list"]);
  assertOk(list, "list");
  assert.match(list.stdout, /^svc {2}auth_required {2}\(http\)$/m);
  const strict = await box.run(["list", "--strict"]);
  assert.equal(strict.code, 4, strict.stderr);
  const json = await box.run(["list", "--json"]);
  assertOk(json, "list --json");
  assert.equal(JSON.parse(json.stdout)[0].status, "auth_required");

  const denied = await box.run(["call", "svc", "echo", "text=hi"]);
  assert.equal(denied.code, 4, denied.stderr);
  assert.match(denied.stderr, /mcpctl login svc\b/);
  assert.equal(denied.stdout, "");
  // No token exists yet, so none was ever sent.
  assert.ok(srv.requests.every((r) => r.authorization === null));

  const login = await box.run(["login", "svc"]);
  assertOk(login, "login");
  assert.ok(login.stderr.includes(`${box.home}/credentials.json`), login.stderr);
  assert.match(login.stderr, /Signed in to svc/);
  assert.equal(login.stdout, "");
  assert.equal(srv.grants("authorization_code"), 1);
  assert.deepEqual(srv.as.problems, []);

  const call = await box.run(["call", "svc", "echo", "text=hi"]);
  assertOk(call, "call after login");
  assert.equal(call.stdout, "hi\n");

  // The token went only in the Authorization header, and only tokens issued for us.
  for (const token of bearers(srv).filter((t) => t !== undefined)) {
    assert.equal(srv.as.accessTokens.get(token!)?.resource ?? srv.resource, srv.resource);
  }
  const fileInfo = await Deno.stat(`${box.home}/credentials.json`);
  const dirInfo = await Deno.stat(box.home);
  assert.equal(fileInfo.mode! & 0o777, 0o600);
  assert.equal(dirInfo.mode! & 0o777, 0o700);
  const entry = await box.stored("svc", srv.url);
  assert.ok(entry?.tokens?.accessToken && entry.tokens.refreshToken);
  assert.ok(entry.registration?.clientId.startsWith("dyn-"));

  const logout = await box.run(["logout", "svc"]);
  assertOk(logout, "logout");
  assert.match(logout.stderr, /Signed out of svc: tokens removed/);
  const afterLogout = await box.stored("svc", srv.url);
  assert.equal(afterLogout?.tokens, undefined);
  assert.ok(afterLogout?.registration, "plain logout keeps the client registration");
  const again = await box.run(["call", "svc", "echo", "text=hi"]);
  assert.equal(again.code, 4, again.stderr);
  assert.match(again.stderr, /mcpctl login svc\b/);

  assertOk(await box.run(["login", "svc"]), "second login");
  const all = await box.run(["logout", "svc", "--all"]);
  assertOk(all, "logout --all");
  assert.match(all.stderr, /tokens and client registration removed/);
  assert.equal(await box.stored("svc", srv.url), undefined);
  const nothing = await box.run(["logout", "svc"]);
  assertOk(nothing, "logout with nothing stored");
  assert.match(nothing.stderr, /Nothing stored for svc/);
});

Deno.test("auth e2e: a token near expiry is refreshed before use, across runs; a fresh one is not", async () => {
  await using srv = protectedServer({ as: { accessTtlSeconds: 30 } });
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  const stored = (await box.stored("svc", srv.url))!.tokens!;

  // A 30 s token is within the 60 s margin: this run refreshes it first, once.
  let refreshes = srv.grants("refresh_token");
  let seen = srv.requests.length;
  srv.as.controls.accessTtlSeconds = 3600;
  const call = await box.run(["call", "svc", "echo", "text=one"]);
  assertOk(call, "call with a token near expiry");
  assert.equal(srv.grants("refresh_token"), refreshes + 1);
  const used = mcpRequests(srv, seen);
  assert.ok(used.length > 0 && used.every((r) => r.status !== 401), JSON.stringify(used));
  assert.ok(used.every((r) => r.authorization !== `Bearer ${stored.accessToken}`));
  const renewed = (await box.stored("svc", srv.url))!.tokens!;
  assert.notEqual(renewed.accessToken, stored.accessToken);
  assert.ok(used.every((r) => r.authorization === `Bearer ${renewed.accessToken}`));

  // That token is good for an hour: the next run uses it as is.
  refreshes = srv.grants("refresh_token");
  seen = srv.requests.length;
  assertOk(await box.run(["call", "svc", "echo", "text=two"]), "call with a fresh token");
  assert.equal(srv.grants("refresh_token"), refreshes);
  assert.ok(
    mcpRequests(srv, seen).every((r) => r.authorization === `Bearer ${renewed.accessToken}`),
  );
  assert.deepEqual(srv.as.problems, []);
});

Deno.test("auth e2e: tokens shorter-lived than the margin: one refresh per run, not per request", async () => {
  await using srv = protectedServer({ as: { accessTtlSeconds: 30 } });
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  assert.equal(srv.grants("refresh_token"), 0, "login does not refresh the token it just got");
  for (const text of ["one", "two"]) {
    const seen = srv.requests.length;
    const refreshes = srv.grants("refresh_token");
    const call = await box.run(["call", "svc", "echo", `text=${text}`]);
    assertOk(call, `call ${text}`);
    assert.equal(srv.grants("refresh_token"), refreshes + 1);
    const tokens = new Set(mcpRequests(srv, seen).map((r) => r.authorization));
    assert.equal(tokens.size, 1, "every request of a run carries the same token");
  }
  assert.deepEqual(srv.as.problems, []);
});

Deno.test("auth e2e: a revoked access token is refreshed once on 401 and the call succeeds", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  const before = (await box.stored("svc", srv.url))!.tokens!;
  srv.revokeAccessTokens();
  const seen = srv.requests.length;
  const call = await box.run(["call", "svc", "echo", "text=back"]);
  assertOk(call, "call after revocation");
  assert.equal(call.stdout, "back\n");
  assert.equal(srv.grants("refresh_token"), 1);
  const after = (await box.stored("svc", srv.url))!.tokens!;
  assert.notEqual(after.accessToken, before.accessToken);
  const used = mcpRequests(srv, seen);
  assert.equal(used.filter((r) => r.status === 401).length, 1);
  assert.equal(used[0]?.authorization, `Bearer ${before.accessToken}`);
  assert.ok(used.slice(1).every((r) => r.authorization === `Bearer ${after.accessToken}`));
});

Deno.test("auth e2e: a refused refresh removes the tokens: auth_required and exit 4", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  srv.revokeAccessTokens();
  srv.as.controls.refuseRefresh = true;
  const call = await box.run(["call", "svc", "echo", "text=x"]);
  assert.equal(call.code, 4, call.stderr);
  assert.match(call.stderr, /mcpctl login svc\b/);
  assert.equal(srv.grants("refresh_token"), 1, "one refresh attempt, no loop");
  const entry = await box.stored("svc", srv.url);
  assert.equal(entry?.tokens, undefined, "the refused tokens are gone from the file");
  const list = await box.run(["list"]);
  assertOk(list, "list");
  assert.match(list.stdout, /^svc {2}auth_required/m);
  assert.equal((await box.run(["list", "--strict"])).code, 4);
  assert.equal(srv.grants("refresh_token"), 1, "nothing left to refresh");
});

Deno.test("auth e2e: --login signs in inline; ad-hoc servers get their own login hint", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  const call = await box.run(["call", "svc", "echo", "text=inline", "--login"]);
  assertOk(call, "call --login");
  assert.equal(call.stdout, "inline\n");
  assert.match(call.stderr, /Signing in to svc/);
  assert.ok((await box.stored("svc", srv.url))?.tokens);
  assertOk(await box.run(["call", "svc", "echo", "text=stored"]), "call with the stored token");
  assert.equal(srv.grants("authorization_code"), 1);

  const adhoc = await box.run(["call", "--url", srv.url, "echo", "text=x"]);
  assert.equal(adhoc.code, 4, adhoc.stderr);
  assert.ok(adhoc.stderr.includes(`mcpctl login --url ${srv.url}`), adhoc.stderr);
  const inline = await box.run(["call", "--url", srv.url, "echo", "text=adhoc", "--login"]);
  assertOk(inline, "ad-hoc call --login");
  assert.equal(inline.stdout, "adhoc\n");
  assert.ok((await box.stored("adhoc", srv.url))?.tokens);
});

Deno.test("auth e2e: client_credentials (basic, post, private_key_jwt): list and call without a browser", async () => {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  await using srv = protectedServer({
    as: {
      clients: [
        { id: "ci-basic", method: "client_secret_basic", secret: "sekrit-basic-7Qx" },
        { id: "ci-post", method: "client_secret_post", secret: "sekrit-post-8Rz" },
        {
          id: "ci-jwt",
          method: "private_key_jwt",
          publicKey: keys.publicKey,
          verify: { name: "ECDSA", hash: "SHA-256" },
        },
      ],
    },
  });
  await using box = await sandbox();
  const marker = `${box.root}/browser-was-opened`;
  const ciEnv = {
    BROWSER: `sh -c 'echo "$1" > ${marker}; exit 1' browser`,
    CI_SECRET_BASIC: "sekrit-basic-7Qx",
    CI_SECRET_POST: "sekrit-post-8Rz",
    CI_KEY: await pkcs8Pem(keys.privateKey),
  };
  const grant = "client_credentials";
  await box.writeConfig({
    basic: {
      url: srv.url,
      oauth: { grant, clientId: "ci-basic", clientSecret: "${CI_SECRET_BASIC}" },
    },
    post: {
      url: srv.url,
      oauth: {
        grant,
        clientId: "ci-post",
        clientSecret: "${CI_SECRET_POST}",
        tokenEndpointAuthMethod: "client_secret_post",
      },
    },
    jwt: {
      url: srv.url,
      oauth: { grant, clientId: "ci-jwt", privateKey: "${CI_KEY}", signingAlgorithm: "ES256" },
    },
  });

  const list = await box.run(["list", "--strict"], ciEnv);
  assertOk(list, "list");
  for (const name of ["basic", "post", "jwt"]) {
    assert.match(list.stdout, new RegExp(`^${name} {2}connected {2}\\(http\\) {2}4 tools$`, "m"));
  }
  assert.equal(srv.grants(grant), 3);
  assert.deepEqual(
    srv.as.authenticated.map((a) => `${a.clientId} ${a.method}`).sort(),
    ["ci-basic client_secret_basic", "ci-jwt private_key_jwt", "ci-post client_secret_post"],
  );

  // A fresh store: each call obtains its own token; no login step.
  await Deno.remove(box.home, { recursive: true });
  for (const name of ["basic", "post", "jwt"]) {
    const call = await box.run(["call", name, "echo", `text=${name}`], ciEnv);
    assertOk(call, `call ${name}`);
    assert.equal(call.stdout, `${name}\n`);
    const entry = await box.stored(name, srv.url);
    assert.ok(entry?.tokens?.accessToken);
    assert.ok(!JSON.stringify(entry).includes("sekrit-"), "configured secrets are not copied");
  }
  assert.equal(srv.grants(grant), 6);
  assert.equal(srv.grants("authorization_code"), 0);
  assert.ok(!srv.as.requests.some((r) => r.path.endsWith("/authorize")));
  assert.ok(!srv.as.requests.some((r) => r.path.endsWith("/register")));
  await assert.rejects(Deno.stat(marker), Deno.errors.NotFound, "the browser was run");
  assert.deepEqual(srv.as.problems, []);
});

Deno.test("auth e2e: tokens are keyed by name and URL; none is sent to a changed URL", async () => {
  await using first = protectedServer();
  await using second = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: first.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  assertOk(await box.run(["call", "svc", "echo", "text=a"]), "call first");
  const issued = new Set(first.as.issued);

  // Same name, another URL: the first server's tokens are neither used nor sent.
  await box.writeConfig({ svc: { url: second.url } });
  const moved = await box.run(["call", "svc", "echo", "text=b"]);
  assert.equal(moved.code, 4, moved.stderr);
  assert.match(moved.stderr, /mcpctl login svc\b/);
  const listed = await box.run(["list", "--json"]);
  assert.equal(JSON.parse(listed.stdout)[0].status, "auth_required");
  assert.ok(second.requests.length > 0);
  assert.ok(second.requests.every((r) => r.authorization === null), "a token went elsewhere");
  assert.equal(second.as.requests.length, 0, "nothing asked of the other server's AS");
  assert.equal(first.grants("refresh_token"), 0);

  // Back at the first URL, its sign-in is still there.
  await box.writeConfig({ svc: { url: first.url } });
  assertOk(await box.run(["call", "svc", "echo", "text=c"]), "call first again");
  for (const r of first.requests) {
    const token = r.authorization?.replace(/^Bearer /, "");
    assert.ok(token === undefined || issued.has(token));
  }
});

Deno.test("auth e2e: two calls at once refresh the stored token exactly once", async () => {
  // The stored token lives 30 s (within the 60 s margin); new ones live an hour. The
  // process that waited for the lock must take the other's new token rather than refresh
  // again: refresh tokens rotate, so a second refresh with the old one would be refused
  // and would delete the sign-in.
  await using srv = protectedServer({ as: { accessTtlSeconds: 30 } });
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  srv.as.controls.accessTtlSeconds = 3600;
  // A slow token endpoint: the first refresh holds the lock while the other process waits.
  srv.as.controls.tokenDelayMs = 1000;
  const before = srv.grants("refresh_token");
  const [a, b] = await Promise.all([
    box.run(["call", "svc", "echo", "text=a"]),
    box.run(["call", "svc", "echo", "text=b"]),
  ]);
  assertOk(a, "first call");
  assertOk(b, "second call");
  assert.equal(a.stdout, "a\n");
  assert.equal(b.stdout, "b\n");
  assert.equal(srv.grants("refresh_token"), before + 1);
  assert.deepEqual(srv.as.problems, []);
  assert.ok((await box.stored("svc", srv.url))?.tokens?.refreshToken);
});

Deno.test("auth e2e: logout revokes at the AS (RFC 7009); the old refresh token is refused", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "login");
  const entry = (await box.stored("svc", srv.url))!;
  const tokens = entry.tokens!;
  const clientId = entry.registration!.clientId;
  assert.ok(tokens.refreshToken);

  const logout = await box.run(["logout", "svc"]);
  assertOk(logout, "logout");
  assert.ok(
    logout.stderr.includes(`Signed out of svc: tokens removed from `) &&
      logout.stderr.includes(`; revoked at ${srv.as.issuer}/.`),
    logout.stderr,
  );
  for (const secret of [tokens.accessToken, tokens.refreshToken]) {
    assert.ok(!logout.stderr.includes(secret), "a token in the output");
  }
  assert.deepEqual(
    srv.as.revocations.map((r) => [r.clientId, r.hint, r.kind, r.token]),
    [
      [clientId, "refresh_token", "refresh_token", tokens.refreshToken],
      [clientId, "access_token", "access_token", tokens.accessToken],
    ],
  );
  assert.equal((await box.stored("svc", srv.url))?.tokens, undefined);
  assert.deepEqual(srv.as.problems, []);

  // The revoked refresh token no longer works at the token endpoint.
  const refused = await fetch(`${srv.as.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
      client_id: clientId,
      resource: srv.resource,
    }),
  });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).error, "invalid_grant");

  // --local: removed here, nothing asked of the server.
  assertOk(await box.run(["login", "svc"]), "second login");
  const seen = srv.as.requests.length;
  const local = await box.run(["logout", "svc", "--local"]);
  assertOk(local, "logout --local");
  assert.match(
    local.stderr,
    /Signed out of svc: tokens removed from .*; the server was not told \(--local\)\./,
  );
  assert.equal(srv.as.requests.length, seen, "no request to the AS");
  assert.equal(srv.as.revocations.length, 2);
  assert.equal((await box.stored("svc", srv.url))?.tokens, undefined);

  // Nothing stored: nothing to revoke, no request.
  const nothing = await box.run(["logout", "svc"]);
  assertOk(nothing, "logout with nothing stored");
  assert.match(nothing.stderr, /Nothing stored for svc/);
  assert.equal(srv.as.requests.length, seen);
});

Deno.test("auth e2e: logout without a revocation endpoint, or with it unreachable, still removes the tokens", async () => {
  await using none = protectedServer({ as: { metadata: { revocation_endpoint: undefined } } });
  await using down = protectedServer({
    // Port 1: nothing listens there, the connection is refused.
    as: { metadata: { revocation_endpoint: "http://127.0.0.1:1/revoke" } },
  });
  await using box = await sandbox();
  await box.writeConfig({ none: { url: none.url }, down: { url: down.url } });
  assertOk(await box.run(["login", "none"]), "login none");
  assertOk(await box.run(["login", "down"]), "login down");
  const secrets = [
    ...Object.values((await box.stored("none", none.url))!.tokens!),
    ...Object.values((await box.stored("down", down.url))!.tokens!),
  ].filter((v): v is string => typeof v === "string" && v.length > 20);

  const a = await box.run(["logout", "none"]);
  assertOk(a, "logout none");
  assert.ok(
    a.stderr.includes(
      `; the server was not told: authorization server ${none.as.issuer}/ has no ` +
        "revocation endpoint.",
    ),
    a.stderr,
  );
  assert.equal((await box.stored("none", none.url))?.tokens, undefined);

  const started = Date.now();
  const b = await box.run(["logout", "down", "--all"]);
  assertOk(b, "logout down");
  assert.match(
    b.stderr,
    /Signed out of down: tokens and client registration removed from .*; the server was not told: could not reach http:\/\/127\.0\.0\.1:1\/revoke/,
  );
  assert.ok(Date.now() - started < 10_000, "bounded");
  assert.equal(await box.stored("down", down.url), undefined);
  for (const secret of secrets) {
    assert.ok(!a.stderr.includes(secret) && !b.stderr.includes(secret), "a token in the output");
  }
  assert.equal(none.as.revocations.length + down.as.revocations.length, 0);
});

Deno.test("auth e2e: a second login reuses the native client registration on a new port", async () => {
  await using srv = protectedServer();
  await using box = await sandbox();
  await box.writeConfig({ svc: { url: srv.url } });
  assertOk(await box.run(["login", "svc"]), "first login");
  const first = (await box.stored("svc", srv.url))!.registration!;
  assertOk(await box.run(["login", "svc"]), "second login");
  assert.equal((await box.stored("svc", srv.url))!.registration!.clientId, first.clientId);
  assert.equal(srv.as.registrations.length, 1, "one registration request");
  assert.equal(srv.as.registrations[0]!.application_type, "native");
  const redirects = srv.as.requests
    .filter((r) => r.path.endsWith("/authorize"))
    .map((r) => new URL(r.query.get("redirect_uri")!));
  assert.equal(redirects.length, 2);
  assert.ok(redirects.every((u) => u.hostname === "127.0.0.1" && u.pathname === "/callback"));
  assert.notEqual(redirects[0]!.port, redirects[1]!.port, "the callback port changed");
  assert.equal(srv.grants("authorization_code"), 2);
  assert.deepEqual(srv.as.problems, []);
  assertOk(await box.run(["call", "svc", "echo", "text=hi"]), "call");
});
