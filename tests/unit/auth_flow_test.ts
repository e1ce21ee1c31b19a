import assert from "node:assert/strict";
import { AuthRequiredError, ConfigError } from "../../src/errors.ts";
import {
  authorizationCodeFlow,
  clientCredentialsFlow,
  createSignIn,
  refreshFlow,
} from "../../src/auth/flow.ts";
import type { CallbackListener, CallbackResult } from "../../src/auth/types.ts";
import {
  type FakeAs,
  type FakeAsOptions,
  fakeBrowser,
  type FakeResource,
  memoryStore,
  pkcs8Pem,
  startFakeAs,
  startFakeResource,
} from "../../testdata/auth/fake_as.ts";

/** A fake AS plus a fake MCP server whose PRM points at it. */
async function withServers(
  options: {
    as?: FakeAsOptions;
    prm?: (as: FakeAs, rsOrigin: string) => Record<string, unknown>;
    prmPath?: string;
  },
  body: (s: { as: FakeAs; rs: FakeResource; serverUrl: string }) => Promise<void>,
): Promise<void> {
  const as = startFakeAs(options.as);
  // The PRM names the resource server's own origin, known only once it listens.
  const documents: Record<string, unknown> = {};
  const rs = startFakeResource({ documents });
  const path = options.prmPath ?? "/.well-known/oauth-protected-resource/mcp";
  documents[path] = options.prm?.(as, rs.origin) ?? {
    resource: `${rs.origin}/mcp`,
    authorization_servers: [as.issuer],
  };
  try {
    await body({ as, rs, serverUrl: `${rs.origin}/mcp` });
  } finally {
    await as.close();
    await rs.close();
  }
}

const paths = (as: FakeAs) => as.requests.map((r) => `${r.method} ${r.path}`);

Deno.test("flow: full authorization code flow with DCR, PKCE and resource", async () => {
  await withServers({
    as: { metadata: { scopes_supported: ["mcp:basic", "offline_access"] } },
    prm: (as, rs) => ({
      resource: `${rs}/mcp`,
      authorization_servers: [as.issuer],
      scopes_supported: ["mcp:basic"],
    }),
  }, async ({ as, serverUrl }) => {
    const browser = fakeBrowser();
    const store = memoryStore();
    const lines: string[] = [];
    const result = await authorizationCodeFlow({
      serverUrl,
      serverName: "demo",
      settings: {},
      fetch,
      store,
      log: (l) => lines.push(l),
      ...browser,
    });
    assert.deepEqual(as.problems, []);
    assert.deepEqual(paths(as), [
      "GET /.well-known/oauth-authorization-server",
      "POST /register",
      "GET /authorize",
      "POST /token",
    ]);
    const authorize = browser.opened[0]?.searchParams;
    assert.equal(authorize?.get("resource"), serverUrl);
    assert.equal(authorize?.get("scope"), "mcp:basic offline_access");
    assert.equal(authorize?.get("code_challenge_method"), "S256");
    assert.equal(as.tokenParams[0]?.get("resource"), serverUrl);
    assert.equal(as.tokenParams[0]?.get("grant_type"), "authorization_code");
    assert.ok(result.tokens.accessToken.startsWith("at-"));
    assert.ok(result.tokens.refreshToken?.startsWith("rt-"));
    assert.equal(result.tokens.scope, "mcp:basic offline_access");
    assert.equal(result.client.source, "dynamic");
    assert.equal(store.puts, 1);
    // The DCR request body asked for a public client with refresh tokens.
    const dcr = JSON.parse(as.requests[1]?.body ?? "{}");
    assert.deepEqual(dcr.grant_types, ["authorization_code", "refresh_token"]);
    assert.equal(dcr.token_endpoint_auth_method, "none");
    // Diagnostics never carry a token, code or verifier.
    const verifier = as.tokenParams[0]?.get("code_verifier") ?? "";
    const code = as.tokenParams[0]?.get("code") ?? "";
    for (const line of lines) {
      for (const secret of [...as.issued, verifier, code]) assert.ok(!line.includes(secret));
    }

    // Refresh later, from the cached registration, with resource again.
    const refreshed = await refreshFlow({
      serverUrl,
      serverName: "demo",
      settings: {},
      fetch,
      store,
      refreshToken: result.tokens.refreshToken ?? "",
    });
    assert.deepEqual(as.problems, []);
    const params = as.tokenParams[1];
    assert.equal(params?.get("grant_type"), "refresh_token");
    assert.equal(params?.get("resource"), serverUrl);
    assert.equal(params?.get("client_id"), result.client.clientId);
    assert.notEqual(refreshed.tokens.accessToken, result.tokens.accessToken);
  });
});

Deno.test("flow: S256 missing from code_challenge_methods_supported is refused", async () => {
  for (const methods of [["plain"], undefined]) {
    await withServers({
      as: { metadata: { code_challenge_methods_supported: methods } },
    }, async ({ as, serverUrl }) => {
      const browser = fakeBrowser();
      await assert.rejects(
        authorizationCodeFlow({
          serverUrl,
          serverName: "demo",
          settings: {},
          fetch,
          store: memoryStore(),
          ...browser,
        }),
        (e) => e instanceof AuthRequiredError && /S256/.test(e.message),
      );
      assert.deepEqual(paths(as), ["GET /.well-known/oauth-authorization-server"]);
      assert.equal(browser.opened.length, 0);
    });
  }
});

Deno.test("flow: a PRM naming another resource sends nothing to the AS", async () => {
  await withServers({
    prm: (as) => ({
      resource: "https://evil.example.com/mcp",
      authorization_servers: [as.issuer],
    }),
  }, async ({ as, rs, serverUrl }) => {
    const browser = fakeBrowser();
    await assert.rejects(
      authorizationCodeFlow({
        serverUrl,
        serverName: "demo",
        settings: {},
        fetch,
        store: memoryStore(),
        challenge: {
          status: 401,
          params: { resource_metadata: `${rs.origin}/.well-known/oauth-protected-resource/mcp` },
        },
        ...browser,
      }),
      (e) => e instanceof AuthRequiredError && /evil\.example\.com/.test(e.message),
    );
    assert.equal(as.requests.length, 0);
    assert.equal(browser.opened.length, 0);
  });
});

Deno.test("flow: pre-registered client with client_secret_basic, no DCR", async () => {
  await withServers({
    as: {
      metadata: {
        registration_endpoint: undefined,
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
      },
      clients: [{
        id: "pre-registered-client",
        secret: "pre-registered-secret",
        method: "client_secret_basic",
      }],
    },
  }, async ({ as, serverUrl }) => {
    const result = await authorizationCodeFlow({
      serverUrl,
      serverName: "demo",
      settings: { clientId: "pre-registered-client", clientSecret: "pre-registered-secret" },
      fetch,
      store: memoryStore(),
      ...fakeBrowser(),
    });
    assert.deepEqual(as.problems, []);
    assert.deepEqual(as.authenticated, [{
      clientId: "pre-registered-client",
      method: "client_secret_basic",
    }]);
    assert.equal(result.client.source, "preregistered");
    assert.ok(!paths(as).includes("POST /register"));
  });
});

Deno.test("flow: CIMD URL used as client_id when the AS supports it", async () => {
  const cimd = "https://conformance-test.local/client-metadata.json";
  await withServers({
    as: { metadata: { client_id_metadata_document_supported: true } },
  }, async ({ as, serverUrl }) => {
    const browser = fakeBrowser();
    await authorizationCodeFlow({
      serverUrl,
      serverName: "demo",
      settings: { clientMetadataUrl: cimd },
      fetch,
      store: memoryStore(),
      ...browser,
    });
    assert.deepEqual(as.problems, []);
    assert.equal(browser.opened[0]?.searchParams.get("client_id"), cimd);
    assert.equal(as.tokenParams[0]?.get("client_id"), cimd);
    assert.ok(!paths(as).includes("POST /register"));
  });
});

Deno.test("flow: the registered token endpoint auth method is used", async () => {
  const cases: Array<[NonNullable<FakeAsOptions["registration"]>, string]> = [
    [{ secret: "dyn-secret", method: "client_secret_basic" }, "client_secret_basic"],
    [{ secret: "dyn-secret", method: "client_secret_post" }, "client_secret_post"],
    [{ method: "none" }, "none"],
  ];
  for (const [registration, method] of cases) {
    await withServers({
      as: {
        registration,
        metadata: { token_endpoint_auth_methods_supported: [method] },
      },
    }, async ({ as, serverUrl }) => {
      await authorizationCodeFlow({
        serverUrl,
        serverName: "demo",
        settings: {},
        fetch,
        store: memoryStore(),
        ...fakeBrowser(),
      });
      assert.deepEqual(as.problems, []);
      assert.equal(as.authenticated[0]?.method, method);
      const basic = as.requests.find((r) => r.path === "/token")?.headers.get("authorization");
      assert.equal(basic?.startsWith("Basic ") ?? false, method === "client_secret_basic");
    });
  }
});

Deno.test("flow: client_credentials with basic, post and private_key_jwt", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const pem = await pkcs8Pem(pair.privateKey);
  const cases = [
    {
      supported: ["client_secret_basic"],
      settings: { clientId: "cc", clientSecret: "cc-secret" },
      client: { id: "cc", secret: "cc-secret", method: "client_secret_basic" as const },
    },
    {
      supported: ["client_secret_post"],
      settings: { clientId: "cc", clientSecret: "cc-secret" },
      client: { id: "cc", secret: "cc-secret", method: "client_secret_post" as const },
    },
    {
      supported: ["private_key_jwt"],
      settings: { clientId: "cc", privateKey: pem, signingAlgorithm: "ES256" },
      client: {
        id: "cc",
        method: "private_key_jwt" as const,
        publicKey: pair.publicKey,
        verify: { name: "ECDSA", hash: "SHA-256" },
      },
    },
  ];
  for (const c of cases) {
    await withServers({
      as: {
        metadata: {
          grant_types_supported: ["client_credentials"],
          token_endpoint_auth_methods_supported: c.supported,
          token_endpoint_auth_signing_alg_values_supported: ["ES256"],
        },
        clients: [c.client],
      },
      prm: (as, rs) => ({
        resource: `${rs}/mcp`,
        authorization_servers: [as.issuer],
        scopes_supported: ["mcp:read"],
      }),
    }, async ({ as, serverUrl }) => {
      const result = await clientCredentialsFlow({
        serverUrl,
        serverName: "demo",
        settings: { ...c.settings, grant: "client_credentials" },
        fetch,
      });
      assert.deepEqual(as.problems, []);
      assert.equal(as.authenticated[0]?.method, c.client.method);
      const params = as.tokenParams[0];
      assert.equal(params?.get("grant_type"), "client_credentials");
      assert.equal(params?.get("resource"), serverUrl);
      assert.equal(params?.get("scope"), "mcp:read");
      assert.ok(result.tokens.accessToken.startsWith("at-"));
      assert.ok(!paths(as).includes("GET /authorize"));
    });
  }
});

Deno.test("flow: client_credentials without credentials is a ConfigError", async () => {
  const noFetch = () => Promise.reject(new Error("no request expected"));
  for (const settings of [{}, { clientId: "x" }]) {
    await assert.rejects(
      clientCredentialsFlow({
        serverUrl: "https://mcp.example/mcp",
        serverName: "demo",
        settings,
        fetch: noFetch,
      }),
      (e) => e instanceof ConfigError && /oauth\.clientId/.test(e.message),
    );
  }
});

Deno.test("flow: step-up unions scopes and stops after three attempts", async () => {
  await withServers({}, async ({ as, serverUrl }) => {
    const browser = fakeBrowser();
    const signIn = createSignIn({
      serverUrl,
      serverName: "demo",
      settings: {},
      fetch,
      store: memoryStore(),
      ...browser,
    });
    const first = await signIn.run({ status: 401, params: { scope: "mcp:basic" } });
    assert.equal(first.tokens.scope, "mcp:basic");
    const stepUp = { status: 403, params: { error: "insufficient_scope", scope: "mcp:write" } };
    await signIn.run(stepUp);
    assert.equal(browser.opened[1]?.searchParams.get("scope"), "mcp:write mcp:basic");
    await signIn.run(stepUp);
    assert.equal(signIn.attempts, 3);
    await assert.rejects(
      signIn.run(stepUp),
      (e) => e instanceof AuthRequiredError && /after 3 authorization attempts/.test(e.message),
    );
    assert.equal(as.requests.filter((r) => r.path === "/authorize").length, 3);
    assert.deepEqual(as.problems, []);
  });
});

Deno.test("flow: a 401 after a grant does not carry old scopes", async () => {
  await withServers({}, async ({ serverUrl }) => {
    const browser = fakeBrowser();
    const signIn = createSignIn({
      serverUrl,
      serverName: "demo",
      settings: {},
      fetch,
      store: memoryStore(),
      ...browser,
    });
    await signIn.run({ status: 401, params: { scope: "a" } });
    await signIn.run({ status: 401, params: { scope: "b" } });
    assert.equal(browser.opened[1]?.searchParams.get("scope"), "b");
  });
});

Deno.test("flow: client_credentials sign-in session", async () => {
  await withServers({
    as: {
      metadata: { token_endpoint_auth_methods_supported: ["client_secret_post"] },
      clients: [{ id: "m2m", secret: "m2m-secret", method: "client_secret_post" }],
    },
  }, async ({ as, serverUrl }) => {
    const signIn = createSignIn({
      serverUrl,
      serverName: "demo",
      settings: { clientId: "m2m", clientSecret: "m2m-secret", grant: "client_credentials" },
      fetch,
      store: memoryStore(),
    });
    await signIn.run();
    assert.deepEqual(as.problems, []);
    assert.equal(as.tokenParams[0]?.get("grant_type"), "client_credentials");
  });
});

Deno.test("flow: a callback with another state or issuer is refused before the exchange", async () => {
  const cases: Array<(r: CallbackResult) => CallbackResult> = [
    (r) => ({ ...r, state: "forged" }),
    (r) => ({ ...r, iss: "https://other.example" }),
  ];
  for (const tamper of cases) {
    await withServers({}, async ({ as, serverUrl }) => {
      const browser = fakeBrowser();
      await assert.rejects(
        authorizationCodeFlow({
          serverUrl,
          serverName: "demo",
          settings: {},
          fetch,
          store: memoryStore(),
          redirectUri: browser.redirectUri,
          openBrowser: browser.openBrowser,
          waitForCallback: async (state) => tamper(await browser.waitForCallback(state)),
        }),
        AuthRequiredError,
      );
      assert.ok(!paths(as).includes("POST /token"));
    });
  }
});

Deno.test("flow: a listener is started with the state and always closed", async () => {
  for (const fail of [false, true]) {
    await withServers({
      as: fail ? { tokenError: { status: 400, error: "invalid_grant" } } : {},
    }, async ({ serverUrl }) => {
      const browser = fakeBrowser();
      let closed = 0;
      let listenedState = "";
      const listen = (state: string): Promise<CallbackListener> => {
        listenedState = state;
        return Promise.resolve({
          redirectUri: browser.redirectUri,
          result: browser.waitForCallback(state),
          close: () => {
            closed++;
            return Promise.resolve();
          },
        });
      };
      const run = authorizationCodeFlow({
        serverUrl,
        serverName: "demo",
        settings: {},
        fetch,
        store: memoryStore(),
        openBrowser: browser.openBrowser,
        listen,
      });
      if (fail) await assert.rejects(run, AuthRequiredError);
      else await run;
      assert.equal(browser.opened[0]?.searchParams.get("state"), listenedState);
      assert.equal(closed, 1);
    });
  }
});

Deno.test("flow: token endpoint errors carry no code or verifier", async () => {
  await withServers({
    as: { tokenError: { status: 400, error: "invalid_grant", description: "code expired" } },
  }, async ({ as, serverUrl }) => {
    await assert.rejects(
      authorizationCodeFlow({
        serverUrl,
        serverName: "demo",
        settings: {},
        fetch,
        store: memoryStore(),
        ...fakeBrowser(),
      }),
      (e) => {
        assert.ok(e instanceof AuthRequiredError);
        assert.match(e.message, /invalid_grant: code expired/);
        const body = new URLSearchParams(as.requests.at(-1)?.body ?? "");
        assert.ok(!e.message.includes(body.get("code") ?? "-"));
        assert.ok(!e.message.includes(body.get("code_verifier") ?? "-"));
        return true;
      },
    );
  });
});

Deno.test("flow: 2025-03-26 server with metadata at its root and default endpoints", async () => {
  for (const metadataAt of ["oauth", "none"] as const) {
    const server = startFakeAs({ metadataAt });
    try {
      const browser = fakeBrowser();
      const result = await authorizationCodeFlow({
        serverUrl: `${server.origin}/mcp`,
        serverName: "legacy",
        settings: {},
        fetch,
        store: memoryStore(),
        ...browser,
      });
      assert.deepEqual(server.problems, []);
      assert.deepEqual(paths(server).slice(0, 3), [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
      ]);
      assert.deepEqual(paths(server).slice(3), ["POST /register", "GET /authorize", "POST /token"]);
      assert.equal(browser.opened[0]?.searchParams.get("resource"), `${server.origin}/mcp`);
      assert.equal(result.context.asMetadataUrl === undefined, metadataAt === "none");
    } finally {
      await server.close();
    }
  }
});

Deno.test("flow: redirect URIs must be loopback or https", async () => {
  const browser = fakeBrowser("http://example.com/callback");
  await assert.rejects(
    authorizationCodeFlow({
      serverUrl: "https://mcp.example/mcp",
      serverName: "demo",
      settings: {},
      fetch: () => Promise.reject(new Error("no request expected")),
      store: memoryStore(),
      ...browser,
    }),
    ConfigError,
  );
});
