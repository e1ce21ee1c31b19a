import assert from "node:assert/strict";
import { AuthRequiredError } from "../../src/errors.ts";
import {
  canonicalResource,
  isLoopbackHost,
  requireSecureUrl,
  resourceCovers,
  sameIssuer,
} from "../../src/auth/urls.ts";

Deno.test("urls: canonical resource lowercases, drops fragment and a lone slash", () => {
  assert.equal(canonicalResource("HTTPS://Example.COM/mcp#frag"), "https://example.com/mcp");
  assert.equal(canonicalResource("https://example.com/"), "https://example.com");
  assert.equal(canonicalResource("https://example.com:443"), "https://example.com");
  assert.equal(canonicalResource("http://127.0.0.1:8080/a/b?x=1"), "http://127.0.0.1:8080/a/b?x=1");
  // Paths are case-sensitive.
  assert.equal(canonicalResource("https://h/MCP"), "https://h/MCP");
});

Deno.test("urls: resource covers same origin and path prefix on segment boundaries", () => {
  assert.ok(resourceCovers("https://h/mcp", "https://h/mcp"));
  assert.ok(resourceCovers("https://H/mcp/", "https://h/mcp"));
  assert.ok(resourceCovers("https://h", "https://h/mcp"));
  assert.ok(resourceCovers("https://h/", "https://h/mcp"));
  assert.ok(resourceCovers("https://h/mcp", "https://h/mcp/sub"));
  assert.ok(!resourceCovers("https://h/mcp", "https://h/mcpx"));
  assert.ok(!resourceCovers("https://h/mcp/sub", "https://h/mcp"));
  assert.ok(!resourceCovers("https://evil.example.com/mcp", "http://localhost:3000/mcp"));
  assert.ok(!resourceCovers("http://h/mcp", "https://h/mcp"));
  assert.ok(!resourceCovers("https://h:8443/mcp", "https://h/mcp"));
  assert.ok(!resourceCovers("not a url", "https://h/mcp"));
});

Deno.test("urls: loopback hosts", () => {
  for (const host of ["localhost", "127.0.0.1", "127.255.0.9", "[::1]"]) {
    assert.ok(isLoopbackHost(host), host);
  }
  for (const host of ["example.com", "128.0.0.1", "localhost.example.com", "[::2]", "10.0.0.1"]) {
    assert.ok(!isLoopbackHost(host), host);
  }
  assert.ok(isLoopbackHost(new URL("http://127.1/").hostname));
});

Deno.test("urls: https is required except on loopback", () => {
  requireSecureUrl("https://as.example/token", "token endpoint");
  requireSecureUrl("http://localhost:9/token", "token endpoint");
  requireSecureUrl("http://[::1]:9/token", "token endpoint");
  assert.throws(() => requireSecureUrl("http://as.example/token", "token endpoint"), (e) => {
    assert.ok(e instanceof AuthRequiredError);
    assert.match(e.message, /token endpoint http:\/\/as\.example\/token does not use https/);
    return true;
  });
  assert.throws(() => requireSecureUrl("ftp://as.example/", "x"), AuthRequiredError);
  assert.throws(() => requireSecureUrl("javascript:alert(1)", "x"), AuthRequiredError);
});

Deno.test("urls: issuers compare without trailing slash", () => {
  assert.ok(sameIssuer("https://as.example/", "https://AS.example"));
  assert.ok(sameIssuer("https://as.example/t1/", "https://as.example/t1"));
  assert.ok(!sameIssuer("https://as.example/t1", "https://as.example/t2"));
  assert.ok(!sameIssuer("https://as.example", "http://as.example"));
});
