/**
 * Client authentication at the token endpoint: which method to use and how to apply it.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { createClientAssertion, JWT_BEARER_ASSERTION_TYPE } from "./jwt.ts";
import type { TokenClient, TokenEndpointAuthMethod } from "./types.ts";

/** Methods mcpctl implements. */
export const TOKEN_ENDPOINT_AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  "none",
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
];

/** True when `method` is one mcpctl implements. */
export function isTokenEndpointAuthMethod(method: string): method is TokenEndpointAuthMethod {
  return (TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(method);
}

/** Inputs of `chooseTokenEndpointAuthMethod`. */
export interface AuthMethodChoice {
  /** The server's `token_endpoint_auth_methods_supported`, if published. */
  supported?: readonly string[] | undefined;
  /** Whether a client secret is available. */
  hasSecret: boolean;
  /** Whether a private key is available. */
  hasPrivateKey: boolean;
}

/**
 * The method to use when neither the registration nor the configuration fixes one:
 * the strongest method we hold credentials for that the server lists (RFC 8414
 * default when it lists nothing: `client_secret_basic`); failing that, the strongest
 * we hold credentials for.
 *
 * @example
 * ```ts
 * import { chooseTokenEndpointAuthMethod } from "./client_auth.ts";
 * chooseTokenEndpointAuthMethod({ supported: ["client_secret_post"], hasSecret: true,
 *   hasPrivateKey: false }); // "client_secret_post"
 * ```
 */
export function chooseTokenEndpointAuthMethod(choice: AuthMethodChoice): TokenEndpointAuthMethod {
  const supported = choice.supported ?? ["client_secret_basic"];
  const usable: TokenEndpointAuthMethod[] = [
    ...(choice.hasPrivateKey ? ["private_key_jwt" as const] : []),
    ...(choice.hasSecret ? ["client_secret_basic" as const, "client_secret_post" as const] : []),
    "none",
  ];
  return usable.find((m) => supported.includes(m)) ?? usable[0] ?? "none";
}

/** Encodes one credential as RFC 6749 §2.3.1 requires before base64: form-urlencoding. */
export function formUrlEncode(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

/** The `Authorization` header value for `client_secret_basic`. */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const pair = `${formUrlEncode(clientId)}:${formUrlEncode(clientSecret)}`;
  // Form-encoding leaves only ASCII, so btoa is safe.
  return `Basic ${btoa(pair)}`;
}

/** Where and how to authenticate. */
export interface ClientAuthTarget {
  /** The authorization server's issuer: the JWT assertion's audience. */
  issuer: string;
  /** The server's `token_endpoint_auth_signing_alg_values_supported`. */
  signingAlgorithms?: readonly string[] | undefined;
  /** Current time, epoch ms. */
  now: number;
}

/**
 * Adds the client's credentials to a token request body and headers, per its method.
 * Resolves to the secrets it added, exactly as sent (the `Basic` header value, the
 * client secret, the JWT assertion), for redaction. Throws ConfigError when the method
 * needs a secret or key that is not configured.
 */
export async function applyClientAuthentication(
  client: TokenClient,
  request: { body: URLSearchParams; headers: Headers },
  target: ClientAuthTarget,
): Promise<string[]> {
  switch (client.method) {
    case "none":
      request.body.set("client_id", client.clientId);
      return [];
    case "client_secret_basic": {
      const secret = requireSecret(client);
      const header = basicAuthorization(client.clientId, secret);
      request.headers.set("Authorization", header);
      return [secret, header];
    }
    case "client_secret_post":
      request.body.set("client_id", client.clientId);
      request.body.set("client_secret", requireSecret(client));
      return [requireSecret(client)];
    case "private_key_jwt": {
      if (!client.privateKey) {
        throw new ConfigError(
          "token endpoint authentication private_key_jwt needs oauth.privateKey",
        );
      }
      const assertion = await createClientAssertion({
        clientId: client.clientId,
        audience: target.issuer,
        privateKey: client.privateKey,
        algorithm: client.signingAlgorithm,
        preferred: target.signingAlgorithms,
        now: target.now,
      });
      request.body.set("client_id", client.clientId);
      request.body.set("client_assertion_type", JWT_BEARER_ASSERTION_TYPE);
      request.body.set("client_assertion", assertion);
      return [assertion];
    }
  }
}

function requireSecret(client: TokenClient): string {
  if (client.clientSecret === undefined) {
    throw new ConfigError(
      `token endpoint authentication ${client.method} needs oauth.clientSecret`,
    );
  }
  return client.clientSecret;
}
