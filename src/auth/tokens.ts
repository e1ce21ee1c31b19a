/**
 * The authorization request URL and the token endpoint: code exchange, refresh and the
 * client credentials grant, each carrying `resource` (RFC 8707).
 *
 * Nothing here logs or puts into an error message a token, code, verifier, secret or
 * key; error descriptions from the server are redacted of them as well.
 *
 * @module
 */

import { AuthRequiredError, ServerError } from "../errors.ts";
import { applyClientAuthentication } from "./client_auth.ts";
import { Redactor } from "../util/redact.ts";
import { clean, formBody, requestJson } from "./http.ts";
import { parseOAuthError, parseTokenResponse } from "./schemas.ts";
import type { AuthLog, Clock, FetchLike, TokenClient, TokenSet } from "./types.ts";
import { describeUrl } from "./urls.ts";

export { needsRefresh, REFRESH_MARGIN_MS } from "./expiry.ts";

/** Parameters of the authorization request (RFC 6749 §4.1.1 + PKCE + RFC 8707). */
export interface AuthorizationRequest {
  /** The authorization endpoint (may carry its own query parameters). */
  authorizationEndpoint: string;
  /** `client_id`. */
  clientId: string;
  /** `redirect_uri`. */
  redirectUri: string;
  /** S256 `code_challenge`. */
  codeChallenge: string;
  /** `state`. */
  state: string;
  /** `scope`; omitted when undefined. */
  scope?: string | undefined;
  /** `resource`. */
  resource: string;
}

/**
 * The URL to open in the browser.
 *
 * @example
 * ```ts
 * import { buildAuthorizationUrl } from "./tokens.ts";
 * const url = buildAuthorizationUrl({
 *   authorizationEndpoint: "https://as.example/authorize", clientId: "c",
 *   redirectUri: "http://127.0.0.1:8765/callback", codeChallenge: "x", state: "s",
 *   resource: "https://mcp.example/mcp",
 * });
 * new URL(url).searchParams.get("code_challenge_method"); // "S256"
 * ```
 */
export function buildAuthorizationUrl(request: AuthorizationRequest): string {
  const url = new URL(request.authorizationEndpoint);
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
    state: request.state,
    scope: request.scope,
    resource: request.resource,
  };
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.href;
}

/** Where a token request goes. */
export interface TokenEndpointTarget {
  /** The token endpoint URL. */
  tokenEndpoint: string;
  /** The issuer (audience of JWT client assertions). */
  issuer: string;
  /** The `resource` indicator. */
  resource: string;
  /** The server's `token_endpoint_auth_signing_alg_values_supported`. */
  signingAlgorithms?: readonly string[] | undefined;
}

/** Options shared by every token request. */
export interface TokenRequestOptions {
  /** Where to send it. */
  target: TokenEndpointTarget;
  /** Who is asking. */
  client: TokenClient;
  /** HTTP client. */
  fetch: FetchLike;
  /** Clock for `expiresAt` and assertion times; defaults to `Date.now`. */
  clock?: Clock | undefined;
  /** Aborts the request. */
  signal?: AbortSignal | undefined;
  /** Time limit in ms. */
  timeoutMs?: number | undefined;
  /** Diagnostics. */
  log?: AuthLog | undefined;
  /** Receives every secret the request carries or returns (for redaction of output). */
  onSecret?: ((secret: string) => void) | undefined;
}

/** Options of `exchangeAuthorizationCode`. */
export interface CodeExchangeOptions extends TokenRequestOptions {
  /** The authorization code. */
  code: string;
  /** The PKCE verifier. */
  codeVerifier: string;
  /** The redirect URI of the authorization request. */
  redirectUri: string;
  /** The scope that was requested (the granted scope when the response omits it). */
  requestedScope?: string | undefined;
}

/** Exchanges an authorization code (grant `authorization_code`). */
export function exchangeAuthorizationCode(options: CodeExchangeOptions): Promise<TokenSet> {
  return tokenRequest(options, {
    grant_type: "authorization_code",
    code: options.code,
    code_verifier: options.codeVerifier,
    redirect_uri: options.redirectUri,
  }, { requestedScope: options.requestedScope, secrets: [options.code, options.codeVerifier] });
}

/** Options of `refreshAccessToken`. */
export interface RefreshOptions extends TokenRequestOptions {
  /** The refresh token. */
  refreshToken: string;
  /** Scope to ask for; omitted keeps the original grant's scope. */
  scope?: string | undefined;
}

/**
 * Uses a refresh token (grant `refresh_token`, with `resource`). The old refresh token
 * is kept when the server does not rotate it.
 */
export async function refreshAccessToken(options: RefreshOptions): Promise<TokenSet> {
  const tokens = await tokenRequest(options, {
    grant_type: "refresh_token",
    refresh_token: options.refreshToken,
    scope: options.scope,
  }, { requestedScope: options.scope, secrets: [options.refreshToken] });
  return tokens.refreshToken ? tokens : { ...tokens, refreshToken: options.refreshToken };
}

/** Options of `requestClientCredentialsToken`. */
export interface ClientCredentialsOptions extends TokenRequestOptions {
  /** Scope to ask for. */
  scope?: string | undefined;
}

/** Asks for a token with the client's own credentials (grant `client_credentials`). */
export function requestClientCredentialsToken(
  options: ClientCredentialsOptions,
): Promise<TokenSet> {
  return tokenRequest(options, { grant_type: "client_credentials", scope: options.scope }, {
    requestedScope: options.scope,
    secrets: [],
  });
}

async function tokenRequest(
  options: TokenRequestOptions,
  params: Record<string, string | undefined>,
  extra: { requestedScope: string | undefined; secrets: string[] },
): Promise<TokenSet> {
  const now = (options.clock ?? Date.now)();
  const body = formBody({ ...params, resource: options.target.resource });
  const headers = new Headers({
    "Content-Type": "application/x-www-form-urlencoded",
    Accept: "application/json",
  });
  const credentials = await applyClientAuthentication(options.client, { body, headers }, {
    issuer: options.target.issuer,
    signingAlgorithms: options.target.signingAlgorithms,
    now,
  });
  const secrets = new Redactor([
    ...extra.secrets,
    ...credentials,
    options.client.clientSecret,
    options.client.privateKey,
  ]);
  for (const secret of [...extra.secrets, ...credentials]) options.onSecret?.(secret);
  const endpoint = options.target.tokenEndpoint;
  // No redirects: a redirected POST would carry the code or secret somewhere else.
  const response = await requestJson(endpoint, {
    method: "POST",
    headers,
    body,
    redirect: "manual",
  }, options);
  options.log?.(
    `auth: POST ${describeUrl(endpoint)} (${params["grant_type"]}) → ${response.status}`,
  );
  const oauthError = parseOAuthError(response.json);
  // Some servers (GitHub) answer errors with 200, hence the check on every status.
  if (!response.ok || (oauthError && !hasAccessToken(response.json))) {
    throw tokenError(endpoint, response.status, oauthError, secrets);
  }
  const parsed = parseTokenResponse(response.json);
  if (!parsed) {
    throw new ServerError(`token endpoint ${describeUrl(endpoint)} sent an invalid token response`);
  }
  const tokenType = parsed.token_type ?? "Bearer";
  if (tokenType.toLowerCase() !== "bearer") {
    throw new AuthRequiredError(
      `token endpoint ${describeUrl(endpoint)} issued a ${
        JSON.stringify(tokenType.slice(0, 40))
      } token; mcpctl uses Bearer tokens only`,
    );
  }
  const tokens: TokenSet = { accessToken: parsed.access_token, tokenType };
  options.onSecret?.(tokens.accessToken);
  if (parsed.refresh_token) {
    tokens.refreshToken = parsed.refresh_token;
    options.onSecret?.(parsed.refresh_token);
  }
  if (parsed.expires_in !== undefined && Number.isFinite(parsed.expires_in)) {
    tokens.expiresAt = now + parsed.expires_in * 1000;
  }
  const scope = parsed.scope ?? extra.requestedScope;
  if (scope !== undefined) tokens.scope = scope;
  return tokens;
}

function hasAccessToken(json: unknown): boolean {
  return typeof json === "object" && json !== null && "access_token" in json;
}

function tokenError(
  endpoint: string,
  status: number,
  error: { error: string; error_description?: string | undefined } | undefined,
  secrets: Redactor,
): Error {
  if (!error) {
    return new ServerError(`token endpoint ${describeUrl(endpoint)} answered HTTP ${status}`);
  }
  const code = clean(error.error, secrets, 60);
  const description = error.error_description
    ? `: ${clean(error.error_description, secrets, 300)}`
    : "";
  return new AuthRequiredError(
    `the authorization server refused the token request: ${code}${description}`,
    { hint: hintFor(error.error) },
  );
}

function hintFor(code: string): string {
  switch (code) {
    case "invalid_client":
    case "unauthorized_client":
      return "check oauth.clientId, oauth.clientSecret / oauth.privateKey and " +
        "oauth.tokenEndpointAuthMethod in the server's configuration entry";
    case "invalid_grant":
      return "the sign-in is no longer valid; sign in again";
    case "invalid_scope":
      return "check oauth.scope in the server's configuration entry";
    default:
      return "sign in again; if it keeps failing, check the server's oauth settings";
  }
}
