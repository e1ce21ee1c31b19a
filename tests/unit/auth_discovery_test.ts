import assert from "node:assert/strict";
import { AuthRequiredError, ServerError } from "../../src/errors.ts";
import {
  authorizationServerMetadataUrls,
  discover,
  protectedResourceMetadataUrls,
} from "../../src/auth/discovery.ts";
import type { FetchLike } from "../../src/auth/types.ts";

/** A fetch that serves JSON documents by URL and records every request. */
function fakeFetch(docs: Record<string, unknown>) {
  const requested: string[] = [];
  const headers: Headers[] = [];
  const fetch: FetchLike = (url, init) => {
    requested.push(url);
    headers.push(new Headers(init?.headers));
    const doc = docs[url];
    if (doc === undefined) return Promise.resolve(new Response("nope", { status: 404 }));
    if (typeof doc === "string") return Promise.resolve(new Response(doc, { status: 200 }));
    return Promise.resolve(Response.json(doc));
  };
  return { fetch, requested, headers };
}

function asDoc(issuer: string, extra: Record<string, unknown> = {}) {
  const base = new URL(issuer).origin;
  const path = new URL(issuer).pathname.replace(/\/$/, "");
  return {
    issuer,
    authorization_endpoint: `${base}${path}/authorize`,
    token_endpoint: `${base}${path}/token`,
    registration_endpoint: `${base}${path}/register`,
    code_challenge_methods_supported: ["S256"],
    ...extra,
  };
}

const challenge = (params: Record<string, string>) => ({ status: 401, params });

Deno.test("discovery: candidate URL lists follow RFC 9728 / RFC 8414 / MCP order", () => {
  assert.deepEqual(protectedResourceMetadataUrls("https://rs.example/mcp"), [
    "https://rs.example/.well-known/oauth-protected-resource/mcp",
    "https://rs.example/.well-known/oauth-protected-resource",
  ]);
  assert.deepEqual(protectedResourceMetadataUrls("https://rs.example/"), [
    "https://rs.example/.well-known/oauth-protected-resource",
  ]);
  assert.deepEqual(
    protectedResourceMetadataUrls(
      "https://rs.example/mcp",
      challenge({ resource_metadata: "https://rs.example/custom.json" }),
    )[0],
    "https://rs.example/custom.json",
  );
  // A malformed or non-http resource_metadata is skipped, not fatal.
  for (const bad of ["http://[bad", "javascript:alert(1)"]) {
    assert.deepEqual(
      protectedResourceMetadataUrls("https://rs.example/", challenge({ resource_metadata: bad })),
      ["https://rs.example/.well-known/oauth-protected-resource"],
    );
  }
  assert.deepEqual(authorizationServerMetadataUrls("https://as.example/t1"), [
    "https://as.example/.well-known/oauth-authorization-server/t1",
    "https://as.example/.well-known/openid-configuration/t1",
    "https://as.example/t1/.well-known/openid-configuration",
  ]);
  assert.deepEqual(authorizationServerMetadataUrls("https://as.example/"), [
    "https://as.example/.well-known/oauth-authorization-server",
    "https://as.example/.well-known/openid-configuration",
  ]);
});

Deno.test("discovery: PRM from the challenge, AS metadata at the RFC 8414 root", async () => {
  const prmUrl = "https://rs.example/.well-known/oauth-protected-resource/mcp";
  const f = fakeFetch({
    [prmUrl]: { resource: "https://rs.example/mcp", authorization_servers: ["https://as.example"] },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example"),
  });
  const ctx = await discover({
    serverUrl: "https://rs.example/mcp",
    challenge: challenge({ resource_metadata: prmUrl, scope: "mcp:basic" }),
    fetch: f.fetch,
  });
  // Root PRM is never requested once the challenge's URL worked.
  assert.deepEqual(f.requested, [
    prmUrl,
    "https://as.example/.well-known/oauth-authorization-server",
  ]);
  assert.equal(ctx.resource, "https://rs.example/mcp");
  assert.equal(ctx.as.token_endpoint, "https://as.example/token");
  assert.equal(ctx.scopesFromChallenge, "mcp:basic");
  assert.equal(ctx.prmUrl, prmUrl);
});

Deno.test("discovery: path-based PRM, then OpenID configuration", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/openid-configuration": asDoc("https://as.example"),
  });
  const ctx = await discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch });
  assert.deepEqual(f.requested, [
    "https://rs.example/.well-known/oauth-protected-resource/mcp",
    "https://as.example/.well-known/oauth-authorization-server",
    "https://as.example/.well-known/openid-configuration",
  ]);
  assert.equal(ctx.asMetadataUrl, "https://as.example/.well-known/openid-configuration");
});

Deno.test("discovery: root PRM naming the origin; issuer with a path", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource": {
      resource: "https://rs.example",
      authorization_servers: ["https://as.example/tenant1"],
    },
    "https://as.example/.well-known/oauth-authorization-server/tenant1": asDoc(
      "https://as.example/tenant1",
    ),
  });
  const ctx = await discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch });
  assert.deepEqual(f.requested, [
    "https://rs.example/.well-known/oauth-protected-resource/mcp",
    "https://rs.example/.well-known/oauth-protected-resource",
    "https://as.example/.well-known/oauth-authorization-server/tenant1",
  ]);
  // The resource indicator is what the PRM names (a prefix of the server URL).
  assert.equal(ctx.resource, "https://rs.example");
  // Never the root AS metadata for an issuer with a path.
  assert.ok(!f.requested.includes("https://as.example/.well-known/oauth-authorization-server"));
});

Deno.test("discovery: custom PRM location, OpenID configuration appended to the path", async () => {
  const f = fakeFetch({
    "https://rs.example/custom/metadata/location.json": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example/tenant1"],
    },
    "https://as.example/tenant1/.well-known/openid-configuration": asDoc(
      "https://as.example/tenant1",
    ),
  });
  await discover({
    serverUrl: "https://rs.example/mcp",
    challenge: challenge({ resource_metadata: "https://rs.example/custom/metadata/location.json" }),
    fetch: f.fetch,
  });
  assert.deepEqual(f.requested, [
    "https://rs.example/custom/metadata/location.json",
    "https://as.example/.well-known/oauth-authorization-server/tenant1",
    "https://as.example/.well-known/openid-configuration/tenant1",
    "https://as.example/tenant1/.well-known/openid-configuration",
  ]);
});

Deno.test("discovery: a dead resource_metadata URL falls back to the well-known ones", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example"),
  });
  await discover({
    serverUrl: "https://rs.example/mcp",
    challenge: challenge({ resource_metadata: "https://rs.example/gone" }),
    fetch: f.fetch,
  });
  assert.deepEqual(f.requested.slice(0, 2), [
    "https://rs.example/gone",
    "https://rs.example/.well-known/oauth-protected-resource/mcp",
  ]);
});

Deno.test("discovery: resource mismatch is refused before any AS request", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://evil.example.com/mcp",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example"),
  });
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch }),
    (e) => {
      assert.ok(e instanceof AuthRequiredError);
      assert.equal(e.exitCode, 4);
      assert.match(
        e.message,
        /protected resource metadata names resource https:\/\/evil\.example\.com\/mcp, not https:\/\/rs\.example\/mcp/,
      );
      return true;
    },
  );
  assert.deepEqual(f.requested, ["https://rs.example/.well-known/oauth-protected-resource/mcp"]);
});

Deno.test("discovery: sibling paths and other ports do not match", async () => {
  for (const resource of ["https://rs.example/mcp/other", "https://rs.example:8443/mcp"]) {
    const f = fakeFetch({
      "https://rs.example/.well-known/oauth-protected-resource/mcp": {
        resource,
        authorization_servers: ["https://as.example"],
      },
    });
    await assert.rejects(
      discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch }),
      AuthRequiredError,
    );
    assert.equal(f.requested.length, 1);
  }
});

Deno.test("discovery: a non-loopback http authorization server is refused unasked", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["http://as.example"],
    },
  });
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch }),
    (e) => e instanceof AuthRequiredError && /does not use https/.test(e.message),
  );
  assert.equal(f.requested.length, 1);
});

Deno.test("discovery: http endpoints in https metadata are refused", async () => {
  for (const field of ["authorization_endpoint", "token_endpoint", "registration_endpoint"]) {
    const f = fakeFetch({
      "https://rs.example/.well-known/oauth-protected-resource/mcp": {
        resource: "https://rs.example/mcp",
        authorization_servers: ["https://as.example"],
      },
      "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example", {
        [field]: "http://as.example/x",
      }),
    });
    await assert.rejects(
      discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch }),
      (e) => e instanceof AuthRequiredError && e.message.includes("does not use https"),
    );
  }
});

Deno.test("discovery: loopback http is allowed everywhere", async () => {
  const f = fakeFetch({
    "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp": {
      resource: "http://127.0.0.1:3000/mcp",
      authorization_servers: ["http://localhost:4000"],
    },
    "http://localhost:4000/.well-known/oauth-authorization-server": asDoc(
      "http://localhost:4000",
    ),
  });
  const ctx = await discover({ serverUrl: "http://127.0.0.1:3000/mcp", fetch: f.fetch });
  assert.equal(ctx.as.issuer, "http://localhost:4000");
});

Deno.test("discovery: an issuer that differs from the PRM's is refused", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://other.example"),
  });
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch }),
    (e) => e instanceof AuthRequiredError && /names issuer/.test(e.message),
  );
  // A trailing slash is not a different issuer.
  const g = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example/"],
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example"),
  });
  await discover({ serverUrl: "https://rs.example/mcp", fetch: g.fetch });
});

Deno.test("discovery: 2025-03-26 servers: metadata at the server's origin", async () => {
  const f = fakeFetch({
    "http://localhost:3000/.well-known/oauth-authorization-server": asDoc(
      "http://localhost:3000/oauth",
    ),
  });
  const ctx = await discover({
    serverUrl: "http://localhost:3000/mcp",
    fetch: f.fetch,
    protocolVersion: "2025-03-26",
  });
  assert.deepEqual(f.requested, [
    "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
    "http://localhost:3000/.well-known/oauth-protected-resource",
    "http://localhost:3000/.well-known/oauth-authorization-server",
  ]);
  assert.equal(ctx.as.authorization_endpoint, "http://localhost:3000/oauth/authorize");
  assert.equal(ctx.prm, undefined);
  assert.equal(ctx.resource, "http://localhost:3000/mcp");
  assert.ok(f.headers.every((h) => h.get("mcp-protocol-version") === "2025-03-26"));
});

Deno.test("discovery: 2025-03-26 servers without metadata: default endpoints", async () => {
  const f = fakeFetch({});
  const ctx = await discover({ serverUrl: "http://localhost:3000/api/mcp", fetch: f.fetch });
  assert.equal(ctx.as.authorization_endpoint, "http://localhost:3000/authorize");
  assert.equal(ctx.as.token_endpoint, "http://localhost:3000/token");
  assert.equal(ctx.as.registration_endpoint, "http://localhost:3000/register");
  assert.equal(ctx.asMetadataUrl, undefined);
  // ... and they must be https off loopback.
  await assert.rejects(
    discover({ serverUrl: "http://mcp.example/mcp", fetch: fakeFetch({}).fetch }),
    AuthRequiredError,
  );
});

Deno.test("discovery: MCP-Protocol-Version goes only to the MCP server's origin", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example"),
  });
  await discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch, protocolVersion: "x" });
  assert.equal(f.headers[0]?.get("mcp-protocol-version"), "x");
  assert.equal(f.headers[1]?.get("mcp-protocol-version"), null);
});

Deno.test("discovery: invalid documents are skipped; missing AS metadata is a ServerError", async () => {
  const f = fakeFetch({
    // An SPA catch-all page answering 200 with HTML.
    "https://rs.example/.well-known/oauth-protected-resource/mcp": "<html></html>",
    "https://rs.example/.well-known/oauth-protected-resource": {
      resource: "https://rs.example",
      authorization_servers: ["https://as.example"],
    },
    "https://as.example/.well-known/oauth-authorization-server": { issuer: 7 },
  });
  const lines: string[] = [];
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch, log: (l) => lines.push(l) }),
    (e) => e instanceof ServerError && /publishes no metadata/.test(e.message),
  );
  assert.equal(f.requested.length, 4);
  assert.ok(lines.some((l) => l.includes("not valid authorization server metadata")));

  const g = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
    },
  });
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch: g.fetch }),
    (e) => e instanceof ServerError && /names no authorization server/.test(e.message),
  );
});

Deno.test("discovery: unknown metadata fields are tolerated", async () => {
  const f = fakeFetch({
    "https://rs.example/.well-known/oauth-protected-resource/mcp": {
      resource: "https://rs.example/mcp",
      authorization_servers: ["https://as.example"],
      something_new: { nested: true },
    },
    "https://as.example/.well-known/oauth-authorization-server": asDoc("https://as.example", {
      dpop_signing_alg_values_supported: ["ES256"],
    }),
  });
  const ctx = await discover({ serverUrl: "https://rs.example/mcp", fetch: f.fetch });
  assert.equal(ctx.as.issuer, "https://as.example");
});

Deno.test("discovery: unreachable hosts are ServerErrors", async () => {
  const fetch: FetchLike = () => Promise.reject(new TypeError("connection refused"));
  await assert.rejects(
    discover({ serverUrl: "https://rs.example/mcp", fetch }),
    (e) => e instanceof ServerError && /could not reach/.test(e.message),
  );
});
