import assert from "node:assert/strict";
import {
  base64UrlEncode,
  codeChallengeS256,
  createCodeVerifier,
  createPkce,
  createState,
} from "../../src/auth/pkce.ts";

Deno.test("pkce: verifier has 43-128 unreserved characters", () => {
  for (const length of [43, 64, 128]) {
    const verifier = createCodeVerifier(length);
    assert.equal(verifier.length, length);
    assert.match(verifier, /^[A-Za-z0-9\-._~]+$/);
  }
  assert.equal(createCodeVerifier().length, 64);
  assert.throws(() => createCodeVerifier(42), RangeError);
  assert.throws(() => createCodeVerifier(129), RangeError);
});

Deno.test("pkce: verifiers and states are not repeated", () => {
  const verifiers = new Set(Array.from({ length: 100 }, () => createCodeVerifier()));
  const states = new Set(Array.from({ length: 100 }, () => createState()));
  assert.equal(verifiers.size, 100);
  assert.equal(states.size, 100);
  assert.match(createState(), /^[A-Za-z0-9_-]{43}$/);
});

Deno.test("pkce: S256 challenge matches the RFC 7636 appendix B example", async () => {
  const challenge = await codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
  assert.equal(challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
});

Deno.test("pkce: createPkce pairs a verifier with its challenge", async () => {
  const pkce = await createPkce();
  assert.equal(pkce.method, "S256");
  assert.equal(pkce.challenge, await codeChallengeS256(pkce.verifier));
});

Deno.test("pkce: base64url has no padding or +/", () => {
  assert.equal(base64UrlEncode(new Uint8Array([0xfb, 0xff])), "-_8");
  assert.equal(base64UrlEncode(new Uint8Array([])), "");
});
