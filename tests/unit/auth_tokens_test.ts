import assert from "node:assert/strict";
import { AuthRequiredError, ConfigError, ServerError } from "../../src/errors.ts";
import {
  basicAuthorization,
  chooseTokenEndpointAuthMethod,
  formUrlEncode,
} from "../../src/auth/client_auth.ts";
import { createPkce } from "../../src/auth/pkce.ts";
import {
  buildAuthorizationUrl,
  exchangeAuthorizationCode,
  needsRefresh,
  refreshAccessToken,
  requestClientCredentialsToken,
  type TokenEndpointTarget,
} from "../../src/auth/tokens.ts";
import type { FetchLike, TokenClient } from "../../src/auth/types.ts";
import { fakeBrowser, pkcs8Pem, startFakeAs } from "../../testdata/auth/fake_as.ts";

const NOW = 1_800_000_000_000;
const clock = () => NOW;

/** A fetch answering every request with one JSON body, recording requests. */
function answer(status: number, body: unknown) {
  const seen: Array<{ url: string; init: RequestInit | undefined; body: URLSearchParams }> = [];
  const fetch: FetchLike = (url, init) => {
    seen.push({ url, init, body: new URLSearchParams(String(init?.body ?? "")) });
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return Promise.resolve(new Response(text, { status }));
  };
  return { fetch, seen };
}

const target: TokenEndpointTarget = {
  tokenEndpoint: "https://as.example/token",
  issuer: "https://as.example",
  resource: "https://mcp.example/mcp",
};

Deno.test("tokens: authorization URL carries every required parameter", () => {
  const url = new URL(buildAuthorizationUrl({
    authorizationEndpoint: "https://as.example/authorize?tenant=t1",
    clientId: "c 1",
    redirectUri: "http://127.0.0.1:8765/callback",
    codeChallenge: "abc",
    state: "st",
    scope: "a b",
    resource: "https://mcp.example/mcp",
  }));
  const q = url.searchParams;
  assert.equal(q.get("tenant"), "t1");
  assert.equal(q.get("response_type"), "code");
  assert.equal(q.get("client_id"), "c 1");
  assert.equal(q.get("redirect_uri"), "http://127.0.0.1:8765/callback");
  assert.equal(q.get("code_challenge"), "abc");
  assert.equal(q.get("code_challenge_method"), "S256");
  assert.equal(q.get("state"), "st");
  assert.equal(q.get("scope"), "a b");
  assert.equal(q.get("resource"), "https://mcp.example/mcp");
  const without = new URL(buildAuthorizationUrl({
    authorizationEndpoint: "https://as.example/authorize",
    clientId: "c",
    redirectUri: "http://127.0.0.1/cb",
    codeChallenge: "x",
    state: "s",
    resource: "https://mcp.example",
  }));
  assert.equal(without.searchParams.has("scope"), false);
});

Deno.test("tokens: needsRefresh is true within 60 s of expiry", () => {
  assert.equal(needsRefresh({ accessToken: "a", tokenType: "Bearer" }, NOW), false);
  const t = { accessToken: "a", tokenType: "Bearer", expiresAt: NOW + 61_000 };
  assert.equal(needsRefresh(t, NOW), false);
  assert.equal(needsRefresh(t, NOW + 1_000), true);
  assert.equal(needsRefresh(t, NOW + 100_000), true);
});

Deno.test("tokens: auth method choice prefers what we hold credentials for", () => {
  const choose = (supported: string[] | undefined, hasSecret: boolean, hasPrivateKey = false) =>
    chooseTokenEndpointAuthMethod({ supported, hasSecret, hasPrivateKey });
  assert.equal(choose(undefined, true), "client_secret_basic"); // RFC 8414 default
  assert.equal(choose(undefined, false), "none");
  assert.equal(choose(["client_secret_post"], true), "client_secret_post");
  assert.equal(choose(["none", "client_secret_post"], true), "client_secret_post");
  assert.equal(choose(["none"], true), "none");
  assert.equal(choose(["client_secret_basic"], false), "none");
  assert.equal(choose(["private_key_jwt", "client_secret_basic"], true, true), "private_key_jwt");
  assert.equal(choose(["client_secret_basic"], true, true), "client_secret_basic");
});

Deno.test("tokens: client_secret_basic form-encodes id and secret before base64", () => {
  assert.equal(formUrlEncode("a b:c/d+é"), "a+b%3Ac%2Fd%2B%C3%A9");
  const header = basicAuthorization("id:1", "p@ss w");
  assert.equal(atob(header.slice(6)), "id%3A1:p%40ss+w");
});

Deno.test("tokens: client_credentials with every secret method against the fake AS", async () => {
  const id = "client one:/";
  const secret = "s3cr+t/é x";
  for (const method of ["client_secret_basic", "client_secret_post"] as const) {
    const as = startFakeAs({ clients: [{ id, secret, method }] });
    try {
      const tokens = await requestClientCredentialsToken({
        target: { ...target, tokenEndpoint: `${as.origin}/token`, issuer: as.issuer },
        client: { clientId: id, clientSecret: secret, method },
        fetch,
        clock,
        scope: "mcp:read",
      });
      assert.deepEqual(as.problems, []);
      assert.deepEqual(as.authenticated, [{ clientId: id, method }]);
      assert.equal(tokens.tokenType, "Bearer");
      assert.equal(tokens.expiresAt, NOW + 3_600_000);
      assert.equal(tokens.scope, "mcp:read");
      assert.equal(tokens.refreshToken, undefined);
      const params = as.tokenParams[0];
      assert.equal(params?.get("grant_type"), "client_credentials");
      assert.equal(params?.get("resource"), "https://mcp.example/mcp");
      // Basic never also puts the secret in the body.
      if (method === "client_secret_basic") assert.equal(params?.has("client_secret"), false);
    } finally {
      await as.close();
    }
  }
});

Deno.test("tokens: private_key_jwt assertion is verified by the fake AS", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const as = startFakeAs({
    clients: [{
      id: "jwt-client",
      method: "private_key_jwt",
      publicKey: pair.publicKey,
      verify: { name: "ECDSA", hash: "SHA-256" },
    }],
  });
  try {
    const tokens = await requestClientCredentialsToken({
      target: { ...target, tokenEndpoint: `${as.origin}/token`, issuer: as.issuer },
      client: {
        clientId: "jwt-client",
        method: "private_key_jwt",
        privateKey: await pkcs8Pem(pair.privateKey),
        signingAlgorithm: "ES256",
      },
      fetch,
    });
    assert.deepEqual(as.problems, []);
    assert.ok(tokens.accessToken.startsWith("at-"));
    assert.equal(as.authenticated[0]?.method, "private_key_jwt");
  } finally {
    await as.close();
  }
});

Deno.test("tokens: method none sends client_id in the body only", async () => {
  const f = answer(200, { access_token: "AT", token_type: "bearer" });
  const tokens = await refreshAccessToken({
    target,
    client: { clientId: "pub", method: "none" },
    fetch: f.fetch,
    clock,
    refreshToken: "old-refresh-token",
  });
  const req = f.seen[0];
  assert.equal(req?.body.get("client_id"), "pub");
  assert.equal(req?.body.get("grant_type"), "refresh_token");
  assert.equal(req?.body.get("refresh_token"), "old-refresh-token");
  assert.equal(req?.body.get("resource"), "https://mcp.example/mcp");
  assert.equal(req?.body.has("scope"), false);
  assert.equal(new Headers(req?.init?.headers).has("authorization"), false);
  assert.equal(req?.init?.redirect, "manual");
  // Not rotated: the old refresh token is kept.
  assert.equal(tokens.refreshToken, "old-refresh-token");
  assert.equal(tokens.tokenType, "bearer");
  assert.equal(tokens.expiresAt, undefined);
});

Deno.test("tokens: refresh takes a rotated refresh token and a string expires_in", async () => {
  const f = answer(200, {
    access_token: "AT2",
    token_type: "Bearer",
    refresh_token: "new-rt",
    expires_in: "120",
  });
  const tokens = await refreshAccessToken({
    target,
    client: { clientId: "pub", method: "none" },
    fetch: f.fetch,
    clock,
    refreshToken: "old-rt",
    scope: "a",
  });
  assert.equal(tokens.refreshToken, "new-rt");
  assert.equal(tokens.expiresAt, NOW + 120_000);
  assert.equal(tokens.scope, "a");
  assert.equal(f.seen[0]?.body.get("scope"), "a");
});

Deno.test("tokens: OAuth errors are AuthRequiredErrors without secrets", async () => {
  const secret = "very-secret-value";
  const client: TokenClient = { clientId: "c", clientSecret: secret, method: "client_secret_post" };
  const f = answer(400, {
    error: "invalid_grant",
    error_description: `refresh token old-rt-123456 for secret ${secret} is\nexpired`,
  });
  await assert.rejects(
    refreshAccessToken({ target, client, fetch: f.fetch, refreshToken: "old-rt-123456" }),
    (e) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.equal(e.exitCode, 4);
      assert.match(e.message, /invalid_grant/);
      assert.ok(!e.message.includes(secret));
      assert.ok(!e.message.includes("old-rt-123456"));
      assert.ok(!e.message.includes("\n"));
      assert.ok(e.hint);
      return true;
    },
  );
});

Deno.test("tokens: a 200 carrying an error is still an error", async () => {
  const f = answer(200, { error: "bad_verification_code" });
  await assert.rejects(
    requestClientCredentialsToken({
      target,
      client: { clientId: "c", clientSecret: "x", method: "client_secret_basic" },
      fetch: f.fetch,
    }),
    (e) => e instanceof AuthRequiredError && /bad_verification_code/.test(e.message),
  );
});

Deno.test("tokens: broken responses are ServerErrors, non-Bearer tokens refused", async () => {
  const client: TokenClient = { clientId: "c", method: "none" };
  await assert.rejects(
    refreshAccessToken({ target, client, fetch: answer(500, "<html>").fetch, refreshToken: "r" }),
    (e) => e instanceof ServerError && /HTTP 500/.test(e.message),
  );
  await assert.rejects(
    refreshAccessToken({
      target,
      client,
      fetch: answer(200, { token_type: "Bearer" }).fetch,
      refreshToken: "r",
    }),
    (e) => e instanceof ServerError && /invalid token response/.test(e.message),
  );
  await assert.rejects(
    refreshAccessToken({
      target,
      client,
      fetch: answer(200, { access_token: "AT", token_type: "DPoP" }).fetch,
      refreshToken: "r",
    }),
    (e) => e instanceof AuthRequiredError && /Bearer tokens only/.test(e.message),
  );
});

Deno.test("tokens: a missing secret or key is a ConfigError", async () => {
  const f = answer(200, { access_token: "AT" });
  await assert.rejects(
    requestClientCredentialsToken({
      target,
      client: { clientId: "c", method: "client_secret_basic" },
      fetch: f.fetch,
    }),
    ConfigError,
  );
  await assert.rejects(
    requestClientCredentialsToken({
      target,
      client: { clientId: "c", method: "private_key_jwt" },
      fetch: f.fetch,
    }),
    ConfigError,
  );
  assert.equal(f.seen.length, 0);
});

Deno.test("tokens: the fake AS rejects a wrong PKCE verifier and a forged assertion", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const other = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const as = startFakeAs({
    clients: [
      { id: "pub", method: "none" },
      {
        id: "jwt",
        method: "private_key_jwt",
        publicKey: pair.publicKey,
        verify: { name: "ECDSA", hash: "SHA-256" },
      },
    ],
  });
  try {
    const browser = fakeBrowser();
    const pkce = await createPkce();
    const authorize = new URL(`${as.origin}/authorize`);
    for (
      const [k, v] of Object.entries({
        response_type: "code",
        client_id: "pub",
        redirect_uri: browser.redirectUri,
        code_challenge: pkce.challenge,
        code_challenge_method: "S256",
        state: "s",
        resource: target.resource,
      })
    ) authorize.searchParams.set(k, v);
    const waiting = browser.waitForCallback("s");
    await browser.openBrowser(authorize.href);
    const { code } = await waiting;
    const t = { ...target, tokenEndpoint: `${as.origin}/token`, issuer: as.issuer };
    await assert.rejects(
      exchangeAuthorizationCode({
        target: t,
        client: { clientId: "pub", method: "none" },
        fetch,
        code,
        codeVerifier: pkce.verifier.slice(1) + "A",
        redirectUri: browser.redirectUri,
      }),
      (e) => e instanceof AuthRequiredError && /PKCE verification failed/.test(e.message),
    );
    await assert.rejects(
      requestClientCredentialsToken({
        target: t,
        client: {
          clientId: "jwt",
          method: "private_key_jwt",
          privateKey: await pkcs8Pem(other.privateKey),
        },
        fetch,
      }),
      (e) => e instanceof AuthRequiredError && /signature does not verify/.test(e.message),
    );
    // The issuer is the audience; a token-endpoint audience would be refused.
    await assert.rejects(
      requestClientCredentialsToken({
        target: { ...t, issuer: t.tokenEndpoint },
        client: {
          clientId: "jwt",
          method: "private_key_jwt",
          privateKey: await pkcs8Pem(pair.privateKey),
        },
        fetch,
      }),
      (e) => e instanceof AuthRequiredError && /aud/.test(e.message),
    );
  } finally {
    await as.close();
  }
});
