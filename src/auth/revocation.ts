/**
 * Token revocation (RFC 7009) for `mcpctl logout`: asks the authorization server that
 * issued a sign-in's tokens to invalidate them, authenticating the client as at the
 * token endpoint. Bounded in time, and it never throws: the caller removes the tokens
 * locally whatever happens here, and reports the outcome.
 *
 * No token, secret or assertion appears in an outcome or a log line; error texts from
 * the server are redacted of them.
 *
 * @module
 */

import type { OAuthSettings } from "../config/types.ts";
import { AuthRequiredError, TimeoutError } from "../errors.ts";
import { applyClientAuthentication } from "./client_auth.ts";
import { discover, discoverIssuer } from "./discovery.ts";
import { clean, formBody, requestJson } from "./http.ts";
import { metadataDocumentClient, preregisteredClient, tokenClientFor } from "./registration.ts";
import { parseOAuthError } from "./schemas.ts";
import type {
  AsMetadata,
  AuthLog,
  AuthorizationContext,
  ClientRegistration,
  Clock,
  FetchLike,
  TokenClient,
  TokenSet,
} from "./types.ts";
import { canonicalResource, describeUrl, requireSecureUrl, sameIssuer } from "./urls.ts";

/** Time limit of a whole revocation (discovery and every request), in ms. */
export const REVOCATION_TIME_LIMIT_MS = 10_000;

/** Options of {@linkcode revokeTokens}. */
export interface RevocationOptions {
  /** The MCP server URL (discovery when no issuer is recorded). */
  serverUrl: string;
  /** The entry's OAuth settings (a pre-registered client's secret or key). */
  settings: OAuthSettings;
  /** The tokens to revoke (secrets). */
  tokens: TokenSet;
  /** The client they were issued to, as stored. */
  registration?: ClientRegistration | undefined;
  /** The issuer that issued them, as stored. */
  authServer?: string | undefined;
  /** HTTP client. */
  fetch: FetchLike;
  /** Clock for client assertions; defaults to `Date.now`. */
  clock?: Clock | undefined;
  /** Aborts the revocation (it then reports why). */
  signal?: AbortSignal | undefined;
  /** Time limit in ms (default {@linkcode REVOCATION_TIME_LIMIT_MS}). */
  timeLimitMs?: number | undefined;
  /** Diagnostics. */
  log?: AuthLog | undefined;
  /** Receives the secrets the requests carry (client assertions), for redaction of output. */
  onSecret?: ((secret: string) => void) | undefined;
}

/** What a revocation achieved. `reason` is printable: it holds no secret. */
export type RevocationOutcome =
  | {
    revoked: true;
    /** The issuer that revoked the tokens, printable. */
    issuer: string;
    /** True when the server revokes refresh tokens only (`unsupported_token_type`). */
    accessTokenKept: boolean;
  }
  | { revoked: false; reason: string };

/**
 * Revokes the refresh token (hint `refresh_token`), then the access token (hint
 * `access_token`), at the revocation endpoint of the issuer's metadata.
 *
 * @example
 * ```ts ignore
 * const outcome = await revokeTokens({ serverUrl, settings: {}, tokens, registration,
 *   authServer: "https://auth.example", fetch });
 * if (!outcome.revoked) console.error(`the server was not told: ${outcome.reason}`);
 * ```
 */
export async function revokeTokens(options: RevocationOptions): Promise<RevocationOutcome> {
  const limitMs = options.timeLimitMs ?? REVOCATION_TIME_LIMIT_MS;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TimeoutError(`no answer within ${limitMs / 1000} s`)),
    limitMs,
  );
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const secrets = [
    options.tokens.accessToken,
    options.tokens.refreshToken,
    options.registration?.clientSecret,
    options.settings.clientSecret,
    options.settings.privateKey,
  ];
  try {
    return await revoke({ ...options, signal: controller.signal, timeLimitMs: limitMs }, secrets);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { revoked: false, reason: clean(message, secrets, 300) };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function revoke(
  options: RevocationOptions,
  secrets: Array<string | undefined>,
): Promise<RevocationOutcome> {
  const http = {
    fetch: options.fetch,
    signal: options.signal,
    timeoutMs: options.timeLimitMs,
    log: options.log,
  };
  // The recorded issuer is the one that issued the tokens; rediscovering through the
  // MCP server is for entries stored before the issuer was recorded.
  const as: AsMetadata = options.authServer
    ? (await discoverIssuer(options.authServer, http)).as
    : (await discover({ serverUrl: options.serverUrl, ...http })).as;
  const endpoint = as.revocation_endpoint;
  if (!endpoint) {
    return {
      revoked: false,
      reason: `authorization server ${describeUrl(as.issuer)} has no revocation endpoint`,
    };
  }
  requireSecureUrl(endpoint, "revocation endpoint");
  const client = clientFor(options, as);
  const clock = options.clock ?? Date.now;
  const send = async (token: string, hint: "refresh_token" | "access_token") => {
    const body = formBody({ token, token_type_hint: hint });
    const headers = new Headers({
      "Content-Type": "application/x-www-form-urlencoded",
      Accept: "application/json",
    });
    const credentials = await applyClientAuthentication(client, { body, headers }, {
      issuer: as.issuer,
      signingAlgorithms: as.token_endpoint_auth_signing_alg_values_supported,
      now: clock(),
    });
    for (const secret of credentials) {
      secrets.push(secret);
      options.onSecret?.(secret);
    }
    // No redirects: a redirected POST would carry the token somewhere else.
    const response = await requestJson(endpoint, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
    }, http);
    options.log?.(`auth: POST ${describeUrl(endpoint)} (revoke ${hint}) → ${response.status}`);
    if (response.ok) return "revoked";
    const error = parseOAuthError(response.json);
    if (hint === "access_token" && error?.error === "unsupported_token_type") return "kept";
    const detail = error
      ? `${clean(error.error, secrets, 60)}${
        error.error_description ? `: ${clean(error.error_description, secrets, 200)}` : ""
      }`
      : `HTTP ${response.status}`;
    throw new AuthRequiredError(
      `${describeUrl(endpoint)} refused to revoke the ${hint.replace("_", " ")}: ${detail}`,
    );
  };
  // The refresh token first: it is the long-lived one, and revoking it usually ends
  // the whole grant.
  if (options.tokens.refreshToken) await send(options.tokens.refreshToken, "refresh_token");
  const access = await send(options.tokens.accessToken, "access_token");
  return { revoked: true, issuer: describeUrl(as.issuer), accessTokenKept: access === "kept" };
}

/** The client the tokens were issued to, with its credentials for this server. */
function clientFor(options: RevocationOptions, as: AsMetadata): TokenClient {
  const stored = options.registration;
  if (stored && !sameIssuer(stored.issuer, as.issuer)) {
    throw new AuthRequiredError(
      `the stored client registration belongs to ${describeUrl(stored.issuer)}, not ` +
        describeUrl(as.issuer),
    );
  }
  const context: AuthorizationContext = {
    serverUrl: options.serverUrl,
    resource: canonicalResource(options.serverUrl),
    as,
  };
  const now = (options.clock ?? Date.now)();
  const client = stored ?? preregisteredClient(options.settings, context, now) ??
    metadataDocumentClient(options.settings, context, now);
  if (!client) throw new AuthRequiredError("no client registration is stored for the tokens");
  return tokenClientFor(client, options.settings);
}
