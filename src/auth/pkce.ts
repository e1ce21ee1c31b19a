/**
 * PKCE (RFC 7636) with the S256 method, and the `state` value, both from the platform's
 * cryptographic random source.
 *
 * @module
 */

/** The unreserved characters of RFC 3986, the verifier alphabet. */
const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";

/** Default verifier length: well inside 43–128, about 380 bits of entropy. */
export const DEFAULT_VERIFIER_LENGTH = 64;

/** A PKCE pair. The verifier is a secret until the token request. */
export interface Pkce {
  /** Code verifier (secret). */
  verifier: string;
  /** `BASE64URL(SHA256(verifier))`. */
  challenge: string;
  /** Always `S256`. */
  method: "S256";
}

/**
 * A code verifier of `length` (43–128) unreserved characters, uniformly random.
 *
 * @example
 * ```ts
 * import { createCodeVerifier } from "./pkce.ts";
 * createCodeVerifier().length; // 64
 * ```
 */
export function createCodeVerifier(length: number = DEFAULT_VERIFIER_LENGTH): string {
  if (!Number.isInteger(length) || length < 43 || length > 128) {
    throw new RangeError("a PKCE code verifier has 43 to 128 characters");
  }
  // Rejection sampling: bytes >= 198 (3 × 66) would bias the first characters.
  const limit = UNRESERVED.length * Math.floor(256 / UNRESERVED.length);
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit) out += UNRESERVED[byte % UNRESERVED.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** The S256 code challenge of a verifier. */
export async function codeChallengeS256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64UrlEncode(new Uint8Array(digest));
}

/** A fresh verifier with its S256 challenge. */
export async function createPkce(): Promise<Pkce> {
  const verifier = createCodeVerifier();
  return { verifier, challenge: await codeChallengeS256(verifier), method: "S256" };
}

/** An unguessable `state` value (256 random bits, base64url). */
export function createState(): string {
  return base64UrlEncode(crypto.getRandomValues(new Uint8Array(32)));
}

/** Base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
