/**
 * Validation of the JSON documents an authorization server or protected resource sends.
 * Unknown fields are accepted and dropped; only the fields mcpctl reads are checked.
 * `zod/mini` keeps start-up cheap for a CLI that mostly never signs in.
 *
 * @module
 */

import { z } from "zod/mini";
import type { AsMetadata, ProtectedResourceMetadata } from "./types.ts";

const strings = z.optional(z.array(z.string()));

const prmSchema = z.object({
  resource: z.string(),
  authorization_servers: strings,
  scopes_supported: strings,
  bearer_methods_supported: strings,
  resource_name: z.optional(z.string()),
});

const asSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.optional(z.string()),
  token_endpoint: z.string(),
  registration_endpoint: z.optional(z.string()),
  revocation_endpoint: z.optional(z.string()),
  scopes_supported: strings,
  response_types_supported: strings,
  grant_types_supported: strings,
  code_challenge_methods_supported: strings,
  token_endpoint_auth_methods_supported: strings,
  token_endpoint_auth_signing_alg_values_supported: strings,
  client_id_metadata_document_supported: z.optional(z.boolean()),
  authorization_response_iss_parameter_supported: z.optional(z.boolean()),
});

// Some servers send numbers as strings ("3600"); both are accepted.
const numeric = z.optional(z.union([z.number(), z.string().check(z.regex(/^\d+$/))]));

const tokenSchema = z.object({
  access_token: z.string().check(z.minLength(1)),
  token_type: z.optional(z.string()),
  expires_in: numeric,
  refresh_token: z.optional(z.string()),
  scope: z.optional(z.string()),
});

const registrationSchema = z.object({
  client_id: z.string().check(z.minLength(1)),
  client_secret: z.optional(z.string()),
  client_secret_expires_at: numeric,
  token_endpoint_auth_method: z.optional(z.string()),
  redirect_uris: strings,
  application_type: z.optional(z.string()),
});

const oauthErrorSchema = z.object({
  error: z.string(),
  error_description: z.optional(z.string()),
});

/** A token response (RFC 6749 §5.1) as validated. */
export interface TokenResponse {
  access_token: string;
  token_type?: string | undefined;
  expires_in?: number | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
}

/** A client registration response (RFC 7591 §3.2.1) as validated. */
export interface RegistrationResponse {
  client_id: string;
  client_secret?: string | undefined;
  /** Seconds since the epoch; 0 means "never". */
  client_secret_expires_at?: number | undefined;
  token_endpoint_auth_method?: string | undefined;
  redirect_uris?: string[] | undefined;
  /** `native` or `web` (OpenID Connect Dynamic Client Registration). */
  application_type?: string | undefined;
}

/** An OAuth error response (RFC 6749 §5.2). */
export interface OAuthErrorResponse {
  error: string;
  error_description?: string | undefined;
}

function toNumber(value: number | string | undefined): number | undefined {
  return typeof value === "string" ? Number(value) : value;
}

/** Validates protected resource metadata; undefined when invalid. */
export function parseProtectedResourceMetadata(
  value: unknown,
): ProtectedResourceMetadata | undefined {
  const result = prmSchema.safeParse(value);
  return result.success ? result.data : undefined;
}

/** Validates authorization server metadata; undefined when invalid. */
export function parseAsMetadata(value: unknown): AsMetadata | undefined {
  const result = asSchema.safeParse(value);
  return result.success ? result.data : undefined;
}

/** Validates a successful token response; undefined when invalid. */
export function parseTokenResponse(value: unknown): TokenResponse | undefined {
  const result = tokenSchema.safeParse(value);
  if (!result.success) return undefined;
  return { ...result.data, expires_in: toNumber(result.data.expires_in) };
}

/** Validates a registration response; undefined when invalid. */
export function parseRegistrationResponse(value: unknown): RegistrationResponse | undefined {
  const result = registrationSchema.safeParse(value);
  if (!result.success) return undefined;
  return {
    ...result.data,
    client_secret_expires_at: toNumber(result.data.client_secret_expires_at),
  };
}

/** Reads an OAuth error body; undefined when the body is not one. */
export function parseOAuthError(value: unknown): OAuthErrorResponse | undefined {
  const result = oauthErrorSchema.safeParse(value);
  return result.success ? result.data : undefined;
}
