import assert from "node:assert/strict";
import { revokeTokens } from "../../src/auth/revocation.ts";
import type { ClientRegistration, FetchLike } from "../../src/auth/types.ts";
import { startFakeAs } from "../../testdata/auth/fake_as.ts";

const SERVER = "http://127.0.0.1:9/mcp";
const realFetch: FetchLike = (input, init) => fetch(input, init);

function dynamicClient(clientId: string, issuer: string): ClientRegistration {
  return {
    clientId,
    tokenEndpointAuthMethod: "none",
    registeredAt: 0,
    issuer,
    source: "dynamic",
  };
}

Deno.test("revocation: refresh then access token, with hints, as a public client", async () => {
  const as = startFakeAs({ clients: [{ id: "pub", method: "none" }] });
  try {
    const minted = as.mint("pub", SERVER);
    const outcome = await revokeTokens({
      serverUrl: SERVER,
      settings: {},
      tokens: {
        accessToken: minted.accessToken,
        refreshToken: minted.refreshToken,
        tokenType: "Bearer",
      },
      registration: dynamicClient("pub", as.issuer),
      authServer: as.issuer,
      fetch: realFetch,
    });
    assert.deepEqual(outcome, {
      revoked: true,
      issuer: `${as.issuer}/`,
      accessTokenKept: false,
    });
    assert.deepEqual(as.revocations.map((r) => [r.clientId, r.hint, r.kind]), [
      ["pub", "refresh_token", "refresh_token"],
      ["pub", "access_token", "access_token"],
    ]);
    const revokes = as.requests.filter((r) => r.path === "/revoke");
    assert.ok(revokes.every((r) => new URLSearchParams(r.body).get("client_id") === "pub"));
    assert.ok(!as.accessTokens.has(minted.accessToken));
  } finally {
    await as.close();
  }
});

Deno.test("revocation: a confidential client authenticates as at the token endpoint", async () => {
  const as = startFakeAs({
    clients: [{ id: "conf", method: "client_secret_basic", secret: "s3cret-value" }],
    metadata: { token_endpoint_auth_methods_supported: ["client_secret_basic"] },
  });
  try {
    const minted = as.mint("conf", SERVER);
    const outcome = await revokeTokens({
      serverUrl: SERVER,
      // A pre-registered client's secret is never stored: it comes from the settings.
      settings: { clientId: "conf", clientSecret: "s3cret-value" },
      tokens: { accessToken: minted.accessToken, tokenType: "Bearer" },
      registration: {
        clientId: "conf",
        tokenEndpointAuthMethod: "client_secret_basic",
        registeredAt: 0,
        issuer: as.issuer,
        source: "preregistered",
      },
      authServer: as.issuer,
      fetch: realFetch,
    });
    assert.equal(outcome.revoked, true);
    assert.deepEqual(as.revocations.map((r) => r.kind), ["access_token"]);
    assert.ok(as.requests.at(-1)?.headers.get("authorization")?.startsWith("Basic "));
  } finally {
    await as.close();
  }
});

Deno.test("revocation: refusals, missing endpoints and timeouts are reasons without secrets", async () => {
  const as = startFakeAs({ clients: [{ id: "pub", method: "none" }] });
  const bare = startFakeAs({ metadata: { revocation_endpoint: undefined } });
  try {
    const tokens = {
      accessToken: "at-secret-0123456789",
      refreshToken: "rt-secret-0123456789",
      tokenType: "Bearer",
    };
    const base = { serverUrl: SERVER, settings: {}, tokens, fetch: realFetch };

    const noEndpoint = await revokeTokens({
      ...base,
      registration: dynamicClient("pub", bare.issuer),
      authServer: bare.issuer,
    });
    assert.deepEqual(noEndpoint, {
      revoked: false,
      reason: `authorization server ${bare.issuer}/ has no revocation endpoint`,
    });

    // An unknown client is refused; the server's text is redacted of the token.
    const echo: FetchLike = async (input, init) => {
      if (!input.endsWith("/revoke")) return await fetch(input, init);
      return Response.json({
        error: "invalid_client",
        error_description: `no such client for ${tokens.refreshToken}`,
      }, { status: 401 });
    };
    const refused = await revokeTokens({
      ...base,
      fetch: echo,
      registration: dynamicClient("pub", as.issuer),
      authServer: as.issuer,
    });
    assert.equal(refused.revoked, false);
    assert.ok(
      !refused.revoked && /refused to revoke the refresh token: invalid_client/.test(
        refused.reason,
      ),
    );
    assert.ok(!JSON.stringify(refused).includes("secret-0123456789"));

    const wrongIssuer = await revokeTokens({
      ...base,
      registration: dynamicClient("pub", "https://elsewhere.example"),
      authServer: as.issuer,
    });
    assert.equal(wrongIssuer.revoked, false);
    assert.equal(as.revocations.length, 0, "no token went to the server");

    // A server that never answers: the time limit ends it.
    const hang: FetchLike = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), {
          once: true,
        });
      });
    const started = Date.now();
    const slow = await revokeTokens({
      ...base,
      fetch: hang,
      authServer: as.issuer,
      timeLimitMs: 200,
    });
    assert.ok(Date.now() - started < 2_000);
    assert.equal(slow.revoked, false);
    assert.ok(!slow.revoked && /within 0\.2 s/.test(slow.reason), JSON.stringify(slow));

    // Already aborted (Ctrl-C): the reason says so, nothing is sent.
    const controller = new AbortController();
    controller.abort(new Error("interrupted"));
    const interrupted = await revokeTokens({
      ...base,
      signal: controller.signal,
      authServer: as.issuer,
    });
    assert.deepEqual(interrupted, { revoked: false, reason: "interrupted" });
  } finally {
    await as.close();
    await bare.close();
  }
});

Deno.test("revocation: a server that revokes refresh tokens only still counts", async () => {
  const as = startFakeAs({ clients: [{ id: "pub", method: "none" }] });
  try {
    const minted = as.mint("pub", SERVER);
    const picky: FetchLike = async (input, init) => {
      const body = new URLSearchParams(String(init?.body ?? ""));
      if (input.endsWith("/revoke") && body.get("token_type_hint") === "access_token") {
        return Response.json({ error: "unsupported_token_type" }, { status: 400 });
      }
      return await fetch(input, init);
    };
    const outcome = await revokeTokens({
      serverUrl: SERVER,
      settings: {},
      tokens: {
        accessToken: minted.accessToken,
        refreshToken: minted.refreshToken,
        tokenType: "Bearer",
      },
      registration: dynamicClient("pub", as.issuer),
      authServer: as.issuer,
      fetch: picky,
    });
    assert.deepEqual(outcome, {
      revoked: true,
      issuer: `${as.issuer}/`,
      accessTokenKept: true,
    });
  } finally {
    await as.close();
  }
});
