import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import {
  createClientAssertion,
  decodePkcs8Pem,
  importSigningKey,
  signJwt,
} from "../../src/auth/jwt.ts";
import { pkcs8Pem } from "../../testdata/auth/fake_as.ts";

function decodePart(part: string): Record<string, unknown> {
  const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)));
}

function bytes(part: string): Uint8Array<ArrayBuffer> {
  const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)), (c) => c.charCodeAt(0));
}

const cases: Array<{
  alg: string;
  generate: RsaHashedKeyGenParams | EcKeyGenParams | Algorithm;
  verify: AlgorithmIdentifier | EcdsaParams | RsaPssParams;
}> = [
  {
    alg: "ES256",
    generate: { name: "ECDSA", namedCurve: "P-256" },
    verify: { name: "ECDSA", hash: "SHA-256" },
  },
  {
    alg: "ES384",
    generate: { name: "ECDSA", namedCurve: "P-384" },
    verify: { name: "ECDSA", hash: "SHA-384" },
  },
  {
    alg: "RS256",
    generate: {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    verify: { name: "RSASSA-PKCS1-v1_5" },
  },
  {
    alg: "PS256",
    generate: {
      name: "RSA-PSS",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    verify: { name: "RSA-PSS", saltLength: 32 },
  },
  { alg: "EdDSA", generate: { name: "Ed25519" }, verify: { name: "Ed25519" } },
];

for (const c of cases) {
  Deno.test(`jwt: ${c.alg} assertion verifies with the public key`, async () => {
    const pair = await crypto.subtle.generateKey(c.generate, true, [
      "sign",
      "verify",
    ]) as CryptoKeyPair;
    const pem = await pkcs8Pem(pair.privateKey);
    const now = 1_700_000_000_000;
    const jwt = await createClientAssertion({
      clientId: "client-1",
      audience: "https://as.example",
      privateKey: pem,
      algorithm: c.alg,
      now,
    });
    const [h, p, s] = jwt.split(".") as [string, string, string];
    assert.deepEqual(decodePart(h), { alg: c.alg, typ: "JWT" });
    const payload = decodePart(p);
    assert.equal(payload.iss, "client-1");
    assert.equal(payload.sub, "client-1");
    assert.equal(payload.aud, "https://as.example");
    assert.equal(payload.iat, 1_700_000_000);
    assert.equal(payload.exp, 1_700_000_300);
    assert.equal(typeof payload.jti, "string");
    const ok = await crypto.subtle.verify(
      c.verify,
      pair.publicKey,
      bytes(s),
      new TextEncoder().encode(`${h}.${p}`),
    );
    assert.ok(ok);
  });
}

Deno.test("jwt: algorithm is chosen from the key when not configured", async () => {
  const ec384 = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-384" },
    true,
    ["sign"],
  );
  assert.equal((await importSigningKey({ pem: await pkcs8Pem(ec384.privateKey) })).alg, "ES384");
  const ed = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign"]) as CryptoKeyPair;
  assert.equal((await importSigningKey({ pem: await pkcs8Pem(ed.privateKey) })).alg, "EdDSA");
  const rsa = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign"],
  );
  const rsaPem = await pkcs8Pem(rsa.privateKey);
  assert.equal((await importSigningKey({ pem: rsaPem })).alg, "RS256");
  // The server's advertised algorithms come first.
  assert.equal((await importSigningKey({ pem: rsaPem, preferred: ["PS256"] })).alg, "PS256");
});

Deno.test("jwt: PEM problems are ConfigErrors that never quote the key", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign"],
  );
  const pem = await pkcs8Pem(pair.privateKey);
  const body = pem.split("\n")[1] ?? "";
  const check = (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.ok(!e.message.includes(body.slice(0, 20)));
    return true;
  };
  assert.throws(() => decodePkcs8Pem("-----BEGIN EC PRIVATE KEY-----\nAAAA\n"), check);
  assert.throws(() => decodePkcs8Pem("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n"), check);
  assert.throws(() => decodePkcs8Pem("just text"), check);
  await assert.rejects(importSigningKey({ pem, algorithm: "RS256" }), check);
  await assert.rejects(importSigningKey({ pem, algorithm: "HS256" }), check);
  // Escaped newlines (keys passed through env vars) are accepted.
  const escaped = pem.replace(/\n/g, "\\n");
  assert.equal((await importSigningKey({ pem: escaped })).alg, "ES256");
});

Deno.test("jwt: signJwt produces three base64url parts", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign"],
  );
  const jwt = await signJwt({ alg: "ES256", key: pair.privateKey }, { a: 1 });
  assert.match(jwt, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.equal(bytes(jwt.split(".")[2] ?? "").byteLength, 64);
});
