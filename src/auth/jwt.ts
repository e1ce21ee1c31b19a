/**
 * JWT client assertions (RFC 7523 §2.2) for `private_key_jwt`, signed with WebCrypto
 * from a PKCS#8 PEM private key.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { base64UrlEncode } from "./pkce.ts";

/** The `client_assertion_type` of a JWT client assertion. */
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** How one JWS algorithm maps onto WebCrypto. */
interface JwsAlgorithm {
  importParams: RsaHashedImportParams | EcKeyImportParams | Algorithm;
  signParams: AlgorithmIdentifier | RsaPssParams | EcdsaParams;
}

const ALGORITHMS: Record<string, JwsAlgorithm> = {
  ES256: ecdsa("P-256", "SHA-256"),
  ES384: ecdsa("P-384", "SHA-384"),
  ES512: ecdsa("P-521", "SHA-512"),
  RS256: rsa("RSASSA-PKCS1-v1_5", "SHA-256", 0),
  RS384: rsa("RSASSA-PKCS1-v1_5", "SHA-384", 0),
  RS512: rsa("RSASSA-PKCS1-v1_5", "SHA-512", 0),
  PS256: rsa("RSA-PSS", "SHA-256", 32),
  PS384: rsa("RSA-PSS", "SHA-384", 48),
  PS512: rsa("RSA-PSS", "SHA-512", 64),
  EdDSA: { importParams: { name: "Ed25519" }, signParams: { name: "Ed25519" } },
  Ed25519: { importParams: { name: "Ed25519" }, signParams: { name: "Ed25519" } },
};

function ecdsa(namedCurve: string, hash: string): JwsAlgorithm {
  // WebCrypto ECDSA signatures are already r‖s (IEEE P1363), the JWS encoding.
  return { importParams: { name: "ECDSA", namedCurve }, signParams: { name: "ECDSA", hash } };
}

function rsa(name: string, hash: string, saltLength: number): JwsAlgorithm {
  return {
    importParams: { name, hash },
    signParams: name === "RSA-PSS" ? { name, saltLength } : { name },
  };
}

/** The JWS algorithm names this module can sign with. */
export const SUPPORTED_SIGNING_ALGORITHMS: readonly string[] = Object.keys(ALGORITHMS);

/** A private key ready to sign, with its JWS algorithm name. */
export interface SigningKey {
  /** JWS `alg`. */
  alg: string;
  /** The WebCrypto key (not extractable). */
  key: CryptoKey;
}

/**
 * Decodes a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). Tolerates `\n` escapes, as keys
 * passed through environment variables or JSON often have them. Messages never quote
 * the key.
 */
export function decodePkcs8Pem(pem: string): Uint8Array<ArrayBuffer> {
  const text = pem.replace(/\\n/g, "\n");
  if (/-----BEGIN (RSA|EC) PRIVATE KEY-----/.test(text)) {
    throw new ConfigError("oauth.privateKey is a PKCS#1/SEC1 key; mcpctl needs PKCS#8", {
      hint: "convert it: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key.p8.pem",
    });
  }
  if (text.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
    throw new ConfigError("oauth.privateKey is encrypted; mcpctl needs an unencrypted PKCS#8 key");
  }
  const match = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/.exec(text);
  if (!match?.[1]) {
    throw new ConfigError("oauth.privateKey is not a PEM private key (BEGIN PRIVATE KEY)");
  }
  try {
    const binary = atob(match[1].replace(/\s+/g, ""));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    throw new ConfigError("oauth.privateKey is not valid base64 PEM");
  }
}

/**
 * Imports the key for `algorithm`, or, when no algorithm is configured, for the first
 * of `preferred` (the authorization server's advertised algorithms, then ES256, RS256,
 * PS256, EdDSA, …) that fits the key.
 */
export async function importSigningKey(
  options: { pem: string; algorithm?: string | undefined; preferred?: readonly string[] },
): Promise<SigningKey> {
  const der = decodePkcs8Pem(options.pem);
  if (options.algorithm !== undefined) {
    const spec = ALGORITHMS[options.algorithm];
    if (!spec) {
      throw new ConfigError(
        `unsupported oauth.signingAlgorithm ${JSON.stringify(options.algorithm)}; use one of ` +
          SUPPORTED_SIGNING_ALGORITHMS.join(", "),
      );
    }
    try {
      return { alg: options.algorithm, key: await importKey(der, spec) };
    } catch {
      throw new ConfigError(`oauth.privateKey is not a ${options.algorithm} key`);
    }
  }
  const order = [
    ...(options.preferred ?? []),
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "PS256",
    "EdDSA",
  ];
  for (const alg of new Set(order)) {
    const spec = ALGORITHMS[alg];
    if (!spec) continue;
    try {
      return { alg, key: await importKey(der, spec) };
    } catch {
      // Wrong key type or curve for this algorithm: try the next one.
    }
  }
  throw new ConfigError("oauth.privateKey is not an EC, RSA or Ed25519 PKCS#8 key");
}

function importKey(der: Uint8Array<ArrayBuffer>, spec: JwsAlgorithm): Promise<CryptoKey> {
  return crypto.subtle.importKey("pkcs8", der, spec.importParams, false, ["sign"]);
}

/** Signs a compact JWS over a JSON payload. */
export async function signJwt(
  signing: SigningKey,
  payload: Record<string, unknown>,
): Promise<string> {
  const spec = ALGORITHMS[signing.alg];
  if (!spec) throw new ConfigError(`unsupported signing algorithm ${signing.alg}`);
  const encode = (value: unknown) =>
    base64UrlEncode(new TextEncoder().encode(JSON.stringify(value)));
  const input = `${encode({ alg: signing.alg, typ: "JWT" })}.${encode(payload)}`;
  const signature = await crypto.subtle.sign(
    spec.signParams,
    signing.key,
    new TextEncoder().encode(input),
  );
  return `${input}.${base64UrlEncode(new Uint8Array(signature))}`;
}

/** Options of `createClientAssertion`. */
export interface ClientAssertionOptions {
  /** The client's id: `iss` and `sub`. */
  clientId: string;
  /** `aud`: the authorization server's issuer identifier. */
  audience: string;
  /** PKCS#8 PEM private key. */
  privateKey: string;
  /** JWS algorithm; chosen from the key and `preferred` when absent. */
  algorithm?: string | undefined;
  /** The authorization server's `token_endpoint_auth_signing_alg_values_supported`. */
  preferred?: readonly string[] | undefined;
  /** Current time, epoch ms. */
  now: number;
  /** Lifetime in seconds (default 300). */
  lifetimeSeconds?: number;
}

/**
 * A signed client assertion: `iss` = `sub` = client id, `aud` = issuer, fresh `jti`,
 * `iat`, `exp`. The issuer, not the token endpoint, is the audience: RFC 7523bis
 * recommends it and the MCP conformance suite accepts only that.
 */
export async function createClientAssertion(options: ClientAssertionOptions): Promise<string> {
  const signing = await importSigningKey({
    pem: options.privateKey,
    algorithm: options.algorithm,
    preferred: options.preferred ?? [],
  });
  const iat = Math.floor(options.now / 1000);
  return await signJwt(signing, {
    iss: options.clientId,
    sub: options.clientId,
    aud: options.audience,
    jti: crypto.randomUUID(),
    iat,
    exp: iat + (options.lifetimeSeconds ?? 300),
  });
}
