import assert from "node:assert/strict";
import { AuthRequiredError, ConfigError, ServerError } from "../../src/errors.ts";
import {
  isRegistrationUsable,
  registrationRequest,
  resolveClient,
  tokenClientFor,
} from "../../src/auth/registration.ts";
import type {
  AsMetadata,
  AuthorizationContext,
  ClientRegistration,
  FetchLike,
} from "../../src/auth/types.ts";
import { memoryStore } from "../../testdata/auth/fake_as.ts";

const NOW = 1_800_000_000_000;
const REDIRECT = "http://127.0.0.1:8765/callback";

function context(as: Partial<AsMetadata> = {}): AuthorizationContext {
  return {
    serverUrl: "https://mcp.example/mcp",
    resource: "https://mcp.example/mcp",
    as: {
      issuer: "https://as.example",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      registration_endpoint: "https://as.example/register",
      ...as,
    },
    asMetadataUrl: "https://as.example/.well-known/oauth-authorization-server",
  };
}

/** A registration endpoint stand-in. */
function registrar(status: number, body: Record<string, unknown>) {
  const bodies: Record<string, unknown>[] = [];
  const fetch: FetchLike = (_url, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return Promise.resolve(Response.json(body, { status }));
  };
  return { fetch, bodies };
}

const noFetch: FetchLike = () => Promise.reject(new Error("no request expected"));

Deno.test("registration: pre-registered credentials come first", async () => {
  const store = memoryStore();
  const client = await resolveClient({
    serverName: "srv",
    context: context({
      client_id_metadata_document_supported: true,
      token_endpoint_auth_methods_supported: ["client_secret_basic"],
    }),
    settings: {
      clientId: "pre",
      clientSecret: "pre-secret",
      clientMetadataUrl: "https://app.example/client.json",
    },
    redirectUri: REDIRECT,
    store,
    fetch: noFetch,
    clock: () => NOW,
  });
  assert.equal(client.clientId, "pre");
  assert.equal(client.clientSecret, "pre-secret");
  assert.equal(client.tokenEndpointAuthMethod, "client_secret_basic");
  assert.equal(client.source, "preregistered");
  assert.equal(store.puts, 0);
});

Deno.test("registration: pre-registered method from config, AS list, or RFC 8414 default", async () => {
  const resolve = (settings: Record<string, string>, as: Partial<AsMetadata> = {}) =>
    resolveClient({
      serverName: "srv",
      context: context(as),
      settings,
      store: memoryStore(),
      fetch: noFetch,
    });
  assert.equal(
    (await resolve({
      clientId: "a",
      clientSecret: "s",
      tokenEndpointAuthMethod: "client_secret_post",
    }))
      .tokenEndpointAuthMethod,
    "client_secret_post",
  );
  assert.equal(
    (await resolve({ clientId: "a", clientSecret: "s" })).tokenEndpointAuthMethod,
    "client_secret_basic",
  );
  assert.equal(
    (await resolve({ clientId: "a", clientSecret: "s" }, {
      token_endpoint_auth_methods_supported: ["none", "client_secret_post"],
    })).tokenEndpointAuthMethod,
    "client_secret_post",
  );
  assert.equal((await resolve({ clientId: "a" })).tokenEndpointAuthMethod, "none");
  await assert.rejects(resolve({ clientId: "a", tokenEndpointAuthMethod: "tls" }), ConfigError);
});

Deno.test("registration: client ID metadata document when the AS supports it", async () => {
  const cimd = "https://conformance-test.local/client-metadata.json";
  const client = await resolveClient({
    serverName: "srv",
    context: context({ client_id_metadata_document_supported: true }),
    settings: { clientMetadataUrl: cimd },
    redirectUri: REDIRECT,
    store: memoryStore(),
    fetch: noFetch,
  });
  assert.equal(client.clientId, cimd);
  assert.equal(client.tokenEndpointAuthMethod, "none");
  assert.equal(client.source, "metadata-document");

  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context({ client_id_metadata_document_supported: true }),
      settings: { clientMetadataUrl: "http://app.example/client.json" },
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: noFetch,
    }),
    ConfigError,
  );
});

Deno.test("registration: no CIMD unless the AS says true; DCR then", async () => {
  for (const supported of [undefined, false]) {
    const r = registrar(201, { client_id: "dyn-1" });
    const client = await resolveClient({
      serverName: "srv",
      context: context(
        supported === undefined ? {} : { client_id_metadata_document_supported: supported },
      ),
      settings: { clientMetadataUrl: "https://app.example/client.json" },
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: r.fetch,
    });
    assert.equal(client.clientId, "dyn-1");
    assert.equal(client.source, "dynamic");
  }
});

Deno.test("registration: DCR registers a public loopback client and caches it", async () => {
  const store = memoryStore();
  const r = registrar(201, { client_id: "dyn-1", redirect_uris: [REDIRECT] });
  const options = {
    serverName: "srv",
    context: context(),
    settings: {},
    redirectUri: REDIRECT,
    store,
    fetch: r.fetch,
    clock: () => NOW,
  };
  const client = await resolveClient(options);
  assert.deepEqual(r.bodies[0], registrationRequest(REDIRECT));
  assert.deepEqual(r.bodies[0], {
    client_name: "mcpctl",
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: "native",
  });
  assert.deepEqual(client, {
    clientId: "dyn-1",
    tokenEndpointAuthMethod: "none",
    registeredAt: NOW,
    redirectUris: [REDIRECT],
    issuer: "https://as.example",
    source: "dynamic",
  });
  assert.equal(store.puts, 1);
  // JSON round trip: the registration is plain data.
  assert.deepEqual(JSON.parse(JSON.stringify(client)), client);

  // Second sign-in: the cache is used.
  const again = await resolveClient(options);
  assert.equal(again.clientId, "dyn-1");
  assert.equal(r.bodies.length, 1);

  // Another redirect URI needs a new registration: the server did not confirm a native
  // app, so it may match redirect URIs exactly.
  await resolveClient({ ...options, redirectUri: "http://127.0.0.1:9999/callback" });
  assert.equal(r.bodies.length, 2);
});

Deno.test("registration: a native registration is reused on another loopback port", async () => {
  const store = memoryStore();
  const r = registrar(201, {
    client_id: "dyn-native",
    redirect_uris: [REDIRECT],
    application_type: "native",
  });
  const options = {
    serverName: "srv",
    context: context(),
    settings: {},
    redirectUri: REDIRECT,
    store,
    fetch: r.fetch,
    clock: () => NOW,
  };
  const first = await resolveClient(options);
  assert.equal(first.nativeApp, true);
  assert.deepEqual(JSON.parse(JSON.stringify(first)), first);
  const again = await resolveClient({ ...options, redirectUri: "http://127.0.0.1:9999/callback" });
  assert.equal(again.clientId, "dyn-native");
  assert.equal(r.bodies.length, 1, "no second registration");
  assert.equal(store.puts, 1);
  // Anything but a port change still registers anew.
  await resolveClient({ ...options, redirectUri: "http://127.0.0.1:9999/other" });
  assert.equal(r.bodies.length, 2);
});

Deno.test("registration: a server answering another application_type gets exact matches", async () => {
  const r = registrar(201, {
    client_id: "dyn-web",
    redirect_uris: [REDIRECT],
    application_type: "web",
  });
  const client = await resolveClient({
    serverName: "srv",
    context: context(),
    settings: {},
    redirectUri: REDIRECT,
    store: memoryStore(),
    fetch: r.fetch,
  });
  assert.equal(client.nativeApp, undefined);
});

Deno.test("registration: only a port change of a loopback IP redirect is the same redirect", () => {
  const reg: ClientRegistration = {
    clientId: "c",
    tokenEndpointAuthMethod: "none",
    registeredAt: NOW,
    redirectUris: [REDIRECT],
    issuer: "https://as.example",
    source: "dynamic",
    nativeApp: true,
  };
  const usable = (redirectUri: string, registration = reg) =>
    isRegistrationUsable(registration, { issuer: "https://as.example", redirectUri, now: NOW });
  assert.ok(usable(REDIRECT));
  assert.ok(usable("http://127.0.0.1:1/callback"));
  assert.ok(usable("http://127.0.0.1/callback"), "the default port is a port too");
  const v6 = { ...reg, redirectUris: ["http://[::1]:8765/callback"] };
  assert.ok(usable("http://[::1]:40000/callback", v6));
  for (
    const other of [
      "http://127.0.0.1:9999/callback/",
      "http://127.0.0.1:9999/other",
      "http://127.0.0.1:9999/callback?x=1",
      "http://127.0.0.2:9999/callback",
      "http://[::1]:9999/callback",
      "http://localhost:9999/callback",
      "https://127.0.0.1:9999/callback",
      "http://user@127.0.0.1:9999/callback",
    ]
  ) {
    assert.ok(!usable(other), other);
  }
  // localhost may resolve elsewhere: exact matches only (RFC 8252 §8.3).
  const named = { ...reg, redirectUris: ["http://localhost:8765/callback"] };
  assert.ok(usable("http://localhost:8765/callback", named));
  assert.ok(!usable("http://localhost:9999/callback", named));
  // Without a confirmed native registration, exact matches only.
  const { nativeApp: _, ...plain } = reg;
  assert.ok(usable(REDIRECT, plain));
  assert.ok(!usable("http://127.0.0.1:1/callback", plain));
});

Deno.test("registration: cached registrations expire with their secret or issuer", () => {
  const reg = {
    clientId: "c",
    clientSecret: "s",
    clientSecretExpiresAt: NOW + 1000,
    tokenEndpointAuthMethod: "client_secret_basic" as const,
    registeredAt: NOW,
    redirectUris: [REDIRECT],
    issuer: "https://as.example",
    source: "dynamic" as const,
  };
  assert.ok(
    isRegistrationUsable(reg, { issuer: "https://as.example", redirectUri: REDIRECT, now: NOW }),
  );
  assert.ok(!isRegistrationUsable(reg, { issuer: "https://as.example", now: NOW + 1000 }));
  assert.ok(!isRegistrationUsable(reg, { issuer: "https://other.example", now: NOW }));
});

Deno.test("registration: the registered auth method is honoured", async () => {
  const cases: Array<[Record<string, unknown>, string[] | undefined, string]> = [
    [
      { client_secret: "s", token_endpoint_auth_method: "client_secret_basic" },
      ["none"],
      "client_secret_basic",
    ],
    [
      { client_secret: "s", token_endpoint_auth_method: "client_secret_post" },
      undefined,
      "client_secret_post",
    ],
    [{ token_endpoint_auth_method: "none" }, undefined, "none"],
    // A secret without a method: the AS's advertised methods decide.
    [{ client_secret: "s" }, ["none"], "none"],
    [{ client_secret: "s" }, ["client_secret_post"], "client_secret_post"],
    [{ client_secret: "s" }, undefined, "client_secret_basic"],
  ];
  for (const [answer, supported, expected] of cases) {
    const client = await resolveClient({
      serverName: "srv",
      context: context({ token_endpoint_auth_methods_supported: supported }),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: registrar(201, { client_id: "d", ...answer }).fetch,
    });
    assert.equal(client.tokenEndpointAuthMethod, expected, JSON.stringify(answer));
  }
  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context(),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: registrar(201, { client_id: "d", token_endpoint_auth_method: "tls_client_auth" })
        .fetch,
    }),
    AuthRequiredError,
  );
});

Deno.test("registration: secrets expiring are recorded in epoch ms", async () => {
  const client = await resolveClient({
    serverName: "srv",
    context: context(),
    settings: {},
    redirectUri: REDIRECT,
    store: memoryStore(),
    fetch: registrar(201, {
      client_id: "d",
      client_secret: "s",
      client_secret_expires_at: 1_900_000_000,
    }).fetch,
  });
  assert.equal(client.clientSecretExpiresAt, 1_900_000_000_000);
  assert.equal(tokenClientFor(client, { clientSecret: "config" }).clientSecret, "s");
});

Deno.test("registration: refused DCR says what to configure", async () => {
  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context(),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: registrar(403, { error: "access_denied", error_description: "no open registration" })
        .fetch,
    }),
    (e) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.match(e.message, /access_denied: no open registration/);
      assert.match(e.hint ?? "", /oauth\.clientId/);
      assert.match(e.hint ?? "", /--client-id/);
      return true;
    },
  );
  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context(),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: registrar(201, { nope: true }).fetch,
    }),
    ServerError,
  );
});

Deno.test("registration: no way to get a client id is a ConfigError naming the fix", async () => {
  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context({ registration_endpoint: undefined }),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: noFetch,
    }),
    (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /cannot sign in to srv/);
      assert.match(
        e.hint ?? "",
        /set oauth\.clientId .* in the configuration entry for srv or pass --client-id/,
      );
      assert.match(e.hint ?? "", /redirect URI http:\/\/127\.0\.0\.1:8765\/callback/);
      return true;
    },
  );
  await assert.rejects(
    resolveClient({
      serverName: "srv",
      context: context({
        registration_endpoint: undefined,
        client_id_metadata_document_supported: true,
      }),
      settings: {},
      redirectUri: REDIRECT,
      store: memoryStore(),
      fetch: noFetch,
    }),
    (e) => e instanceof ConfigError && /oauth\.clientMetadataUrl/.test(e.hint ?? ""),
  );
});

Deno.test("registration: token client takes config secrets only for configured clients", () => {
  const dyn = {
    clientId: "d",
    tokenEndpointAuthMethod: "none" as const,
    registeredAt: NOW,
    issuer: "https://as.example",
    source: "dynamic" as const,
  };
  const settings = { clientSecret: "cfg", privateKey: "PEM", signingAlgorithm: "ES256" };
  assert.deepEqual(tokenClientFor(dyn, settings), {
    clientId: "d",
    method: "none",
    signingAlgorithm: "ES256",
  });
  assert.deepEqual(tokenClientFor({ ...dyn, source: "preregistered" }, settings), {
    clientId: "d",
    method: "none",
    clientSecret: "cfg",
    privateKey: "PEM",
    signingAlgorithm: "ES256",
  });
});
