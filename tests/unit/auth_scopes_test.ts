import assert from "node:assert/strict";
import { selectScope, splitScope, unionScopes } from "../../src/auth/scopes.ts";

Deno.test("scopes: the challenge scope wins over scopes_supported", () => {
  assert.equal(
    selectScope({ challengeScope: "mcp:basic", resourceScopes: ["mcp:basic", "mcp:write"] }),
    "mcp:basic",
  );
});

Deno.test("scopes: without a challenge scope, all PRM scopes_supported", () => {
  assert.equal(
    selectScope({ resourceScopes: ["mcp:basic", "mcp:read", "mcp:write"] }),
    "mcp:basic mcp:read mcp:write",
  );
  assert.equal(selectScope({ challengeScope: "  ", resourceScopes: ["a"] }), "a");
});

Deno.test("scopes: omitted when nothing says what to ask for", () => {
  assert.equal(selectScope({}), undefined);
  assert.equal(selectScope({ resourceScopes: [] }), undefined);
  assert.equal(
    selectScope({ wantRefreshToken: true, serverScopes: ["offline_access"] }),
    undefined,
  );
});

Deno.test("scopes: configured scope replaces the PRM default and joins a challenge", () => {
  assert.equal(selectScope({ configuredScope: "x", resourceScopes: ["a", "b"] }), "x");
  assert.equal(selectScope({ configuredScope: "x", challengeScope: "a" }), "x a");
});

Deno.test("scopes: offline_access only when the AS lists it", () => {
  assert.equal(
    selectScope({
      resourceScopes: ["mcp:basic"],
      serverScopes: ["mcp:basic", "offline_access"],
      wantRefreshToken: true,
    }),
    "mcp:basic offline_access",
  );
  assert.equal(
    selectScope({
      resourceScopes: ["mcp:basic", "mcp:read"],
      serverScopes: ["mcp:basic", "mcp:read"],
      wantRefreshToken: true,
    }),
    "mcp:basic mcp:read",
  );
  // Not for grants without refresh tokens.
  assert.equal(
    selectScope({ resourceScopes: ["a"], serverScopes: ["offline_access"] }),
    "a",
  );
  // A PRM that lists offline_access does not make the AS support it.
  assert.equal(
    selectScope({ resourceScopes: ["a", "offline_access"], serverScopes: ["a"] }),
    "a",
  );
  assert.equal(
    selectScope({ resourceScopes: ["a", "offline_access"], wantRefreshToken: true }),
    "a",
  );
  // Unless the user asked for it.
  assert.equal(selectScope({ configuredScope: "a offline_access" }), "a offline_access");
});

Deno.test("scopes: step-up keeps the previous scope (union)", () => {
  assert.equal(
    selectScope({ challengeScope: "mcp:basic mcp:write", previousScope: "mcp:basic" }),
    "mcp:basic mcp:write",
  );
  assert.equal(selectScope({ challengeScope: "b", previousScope: "a" }), "b a");
});

Deno.test("scopes: split and union deduplicate in order", () => {
  assert.deepEqual(splitScope(" a  b\ta "), ["a", "b"]);
  assert.deepEqual(splitScope(undefined), []);
  assert.equal(unionScopes("a b", undefined, "b c"), "a b c");
  assert.equal(unionScopes(undefined, ""), undefined);
});
