/**
 * Client identity at an authorization server, in the MCP order:
 * 1. pre-registered credentials from the configuration (`oauth.clientId`, secret, key);
 * 2. a Client ID Metadata Document URL as `client_id`, when the server supports them
 *    and one is configured;
 * 3. a cached dynamic registration, else Dynamic Client Registration (RFC 7591);
 * 4. else an error that says what to configure.
 *
 * @module
 */

import type { OAuthSettings } from "../config/types.ts";
import { AuthRequiredError, ConfigError, ServerError } from "../errors.ts";
import { chooseTokenEndpointAuthMethod, isTokenEndpointAuthMethod } from "./client_auth.ts";
import { clean, requestJson } from "./http.ts";
import { parseOAuthError, parseRegistrationResponse } from "./schemas.ts";
import type {
  AuthLog,
  AuthorizationContext,
  ClientRegistration,
  Clock,
  FetchLike,
  RegistrationStore,
  TokenClient,
  TokenEndpointAuthMethod,
} from "./types.ts";
import { describeUrl, parseHttpUrl, sameLoopbackRedirect } from "./urls.ts";

/** The `client_name` mcpctl registers under. */
export const CLIENT_NAME = "mcpctl";

/** Options of `resolveClient`. */
export interface ClientIdentityOptions {
  /** The server entry's name (cache key, messages). */
  serverName: string;
  /** What discovery found. */
  context: AuthorizationContext;
  /** The entry's OAuth settings. */
  settings: OAuthSettings;
  /** The redirect URI of this sign-in; without it no dynamic registration happens. */
  redirectUri?: string | undefined;
  /** Cache of dynamic registrations. */
  store: RegistrationStore;
  /** HTTP client. */
  fetch: FetchLike;
  /** Clock; defaults to `Date.now`. */
  clock?: Clock | undefined;
  /** Aborts the registration request. */
  signal?: AbortSignal | undefined;
  /** Time limit in ms. */
  timeoutMs?: number | undefined;
  /** Diagnostics. */
  log?: AuthLog | undefined;
}

/** The client identity to use, registering dynamically when needed. */
export async function resolveClient(options: ClientIdentityOptions): Promise<ClientRegistration> {
  const now = (options.clock ?? Date.now)();
  const { context, settings } = options;
  const configured = preregisteredClient(settings, context, now) ??
    metadataDocumentClient(settings, context, now);
  if (configured) return configured;

  const key = { serverName: options.serverName, issuer: context.as.issuer };
  const cached = await options.store.getRegistration(key);
  if (
    cached &&
    isRegistrationUsable(cached, { issuer: key.issuer, redirectUri: options.redirectUri, now })
  ) {
    return cached;
  }
  const endpoint = context.as.registration_endpoint;
  if (!endpoint || options.redirectUri === undefined) {
    throw missingClientError(options);
  }
  const registration = await registerClient({ ...options, registrationEndpoint: endpoint });
  await options.store.putRegistration(key, registration);
  return registration;
}

/** The configured client (`oauth.clientId`), or undefined. */
export function preregisteredClient(
  settings: OAuthSettings,
  context: AuthorizationContext,
  now: number,
): ClientRegistration | undefined {
  if (!settings.clientId) return undefined;
  const method = configuredMethod(settings) ?? chooseTokenEndpointAuthMethod({
    supported: context.as.token_endpoint_auth_methods_supported,
    hasSecret: settings.clientSecret !== undefined,
    hasPrivateKey: settings.privateKey !== undefined,
  });
  return {
    clientId: settings.clientId,
    ...(settings.clientSecret !== undefined ? { clientSecret: settings.clientSecret } : {}),
    tokenEndpointAuthMethod: method,
    registeredAt: now,
    issuer: context.as.issuer,
    source: "preregistered",
  };
}

/**
 * The Client ID Metadata Document client (`oauth.clientMetadataUrl` as `client_id`),
 * when the server says `client_id_metadata_document_supported: true`; else undefined.
 */
export function metadataDocumentClient(
  settings: OAuthSettings,
  context: AuthorizationContext,
  now: number,
): ClientRegistration | undefined {
  const url = settings.clientMetadataUrl;
  if (!url || context.as.client_id_metadata_document_supported !== true) return undefined;
  const parsed = parseHttpUrl(url);
  if (!parsed || parsed.protocol !== "https:" || parsed.pathname === "/") {
    throw new ConfigError(
      `oauth.clientMetadataUrl must be an https URL with a path, not ${describeUrl(url)}`,
    );
  }
  return {
    clientId: url,
    tokenEndpointAuthMethod: configuredMethod(settings) ??
      (settings.privateKey !== undefined ? "private_key_jwt" : "none"),
    registeredAt: now,
    issuer: context.as.issuer,
    source: "metadata-document",
  };
}

/** True when a cached registration still fits this sign-in. */
export function isRegistrationUsable(
  registration: ClientRegistration,
  target: { issuer: string; redirectUri?: string | undefined; now: number },
): boolean {
  if (registration.issuer !== target.issuer) return false;
  const expires = registration.clientSecretExpiresAt;
  if (expires !== undefined && expires <= target.now) return false;
  // Registrations are bound to their redirect URIs. A native app's loopback IP redirect
  // may use any port (RFC 8252 §7.3), so a new callback port needs no new registration.
  const wanted = target.redirectUri;
  if (wanted !== undefined && registration.redirectUris !== undefined) {
    return registration.redirectUris.some((uri) =>
      uri === wanted || (registration.nativeApp === true && sameLoopbackRedirect(uri, wanted))
    );
  }
  return true;
}

/** The client metadata sent to a registration endpoint (RFC 7591 §2). */
export function registrationRequest(redirectUri: string): Record<string, unknown> {
  return {
    client_name: CLIENT_NAME,
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    // A native app: the server then accepts the loopback redirect on any port.
    application_type: "native",
  };
}

/** Registers mcpctl as a public client (RFC 7591). */
export async function registerClient(
  options: ClientIdentityOptions & { registrationEndpoint: string },
): Promise<ClientRegistration> {
  const endpoint = options.registrationEndpoint;
  const redirectUri = options.redirectUri;
  if (redirectUri === undefined) throw missingClientError(options);
  const now = (options.clock ?? Date.now)();
  const response = await requestJson(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(registrationRequest(redirectUri)),
    redirect: "manual",
  }, options);
  options.log?.(`auth: POST ${describeUrl(endpoint)} (registration) → ${response.status}`);
  if (!response.ok) {
    const error = parseOAuthError(response.json);
    const detail = error
      ? `${clean(error.error, [], 60)}${
        error.error_description ? `: ${clean(error.error_description, [], 300)}` : ""
      }`
      : `HTTP ${response.status}`;
    throw new AuthRequiredError(
      `dynamic client registration at ${describeUrl(endpoint)} was refused: ${detail}`,
      { hint: configureHint(options) },
    );
  }
  const body = parseRegistrationResponse(response.json);
  if (!body) {
    throw new ServerError(
      `registration endpoint ${describeUrl(endpoint)} sent an invalid registration response`,
    );
  }
  const registration: ClientRegistration = {
    clientId: body.client_id,
    tokenEndpointAuthMethod: registeredMethod(body, options.context),
    registeredAt: now,
    redirectUris: body.redirect_uris ?? [redirectUri],
    issuer: options.context.as.issuer,
    source: "dynamic",
  };
  // Only a server that confirms the type (RFC 7591 §3.2.1 echoes registered metadata)
  // is trusted to accept another port; many ignore the field and match exactly.
  if (body.application_type === "native") registration.nativeApp = true;
  if (body.client_secret !== undefined) registration.clientSecret = body.client_secret;
  if (body.client_secret_expires_at) {
    registration.clientSecretExpiresAt = body.client_secret_expires_at * 1000;
  }
  return registration;
}

/** The token endpoint credentials of a client identity. */
export function tokenClientFor(
  registration: ClientRegistration,
  settings: OAuthSettings,
): TokenClient {
  const client: TokenClient = {
    clientId: registration.clientId,
    method: registration.tokenEndpointAuthMethod,
  };
  const secret = registration.clientSecret ??
    (registration.source === "preregistered" ? settings.clientSecret : undefined);
  if (secret !== undefined) client.clientSecret = secret;
  if (registration.source !== "dynamic" && settings.privateKey !== undefined) {
    client.privateKey = settings.privateKey;
  }
  if (settings.signingAlgorithm !== undefined) client.signingAlgorithm = settings.signingAlgorithm;
  return client;
}

function registeredMethod(
  body: { client_secret?: string | undefined; token_endpoint_auth_method?: string | undefined },
  context: AuthorizationContext,
): TokenEndpointAuthMethod {
  const method = body.token_endpoint_auth_method;
  if (method !== undefined) {
    if (isTokenEndpointAuthMethod(method) && method !== "private_key_jwt") return method;
    throw new AuthRequiredError(
      `the authorization server registered mcpctl for token endpoint authentication ` +
        `${JSON.stringify(method.slice(0, 40))}, which a dynamically registered mcpctl ` +
        "cannot use",
    );
  }
  // RFC 7591 defaults an omitted method to client_secret_basic; we asked for "none", so
  // a secret alone is ambiguous and the server's advertised methods decide.
  return body.client_secret === undefined ? "none" : chooseTokenEndpointAuthMethod({
    supported: context.as.token_endpoint_auth_methods_supported,
    hasSecret: true,
    hasPrivateKey: false,
  });
}

function configuredMethod(settings: OAuthSettings): TokenEndpointAuthMethod | undefined {
  const method = settings.tokenEndpointAuthMethod;
  if (method === undefined) return undefined;
  if (isTokenEndpointAuthMethod(method)) return method;
  throw new ConfigError(
    `unsupported oauth.tokenEndpointAuthMethod ${JSON.stringify(method)}; use none, ` +
      "client_secret_basic, client_secret_post or private_key_jwt",
  );
}

function missingClientError(options: ClientIdentityOptions): ConfigError {
  const issuer = describeUrl(options.context.as.issuer);
  const cimd = options.context.as.client_id_metadata_document_supported === true;
  const reason = options.redirectUri === undefined
    ? `no client is registered for ${options.serverName} at ${issuer}`
    : `the authorization server ${issuer} does not offer dynamic client registration` +
      (cimd ? "" : " or client ID metadata documents");
  return new ConfigError(`cannot sign in to ${options.serverName}: ${reason}`, {
    hint: configureHint(options),
  });
}

function configureHint(options: ClientIdentityOptions): string {
  const redirect = options.redirectUri ? ` with redirect URI ${options.redirectUri}` : "";
  const cimd = options.context.as.client_id_metadata_document_supported === true
    ? ", or set oauth.clientMetadataUrl to the https URL of a client ID metadata document"
    : "";
  return `register mcpctl with the authorization server${redirect}, then set ` +
    `oauth.clientId (and oauth.clientSecret, if one was issued) in the configuration entry ` +
    `for ${options.serverName} or pass --client-id${cimd}`;
}
