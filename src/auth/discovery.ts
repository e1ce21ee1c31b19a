/**
 * Discovery: from an MCP server URL (and the challenge of its 401/403) to the
 * authorization server's endpoints.
 *
 * 1. Protected resource metadata (RFC 9728): the challenge's `resource_metadata`, then
 *    `/.well-known/oauth-protected-resource<path>`, then the root well-known URL.
 * 2. Its `resource` must cover the server URL; otherwise nothing is sent to any
 *    authorization server (a server must not be able to borrow another's tokens).
 * 3. Authorization server metadata at the RFC 8414 / OpenID locations, in the order
 *    the MCP specification gives; the issuer must match.
 * 4. 2025-03-26 servers without protected resource metadata: metadata at the server's
 *    origin, else the default endpoints `/authorize`, `/token`, `/register`.
 *
 * @module
 */

import { AuthRequiredError, ConfigError, ServerError } from "../errors.ts";
import type { BearerChallenge } from "../mcp/transport/types.ts";
import { requestJson } from "./http.ts";
import { parseAsMetadata, parseProtectedResourceMetadata } from "./schemas.ts";
import type {
  AsMetadata,
  AuthLog,
  AuthorizationContext,
  FetchLike,
  ProtectedResourceMetadata,
} from "./types.ts";
import {
  canonicalResource,
  describeUrl,
  parseHttpUrl,
  requireSecureUrl,
  resourceCovers,
  sameIssuer,
} from "./urls.ts";

const PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource";
const OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server";
const OIDC_WELL_KNOWN = "/.well-known/openid-configuration";

/** Options of `discover`. */
export interface DiscoveryOptions {
  /** The MCP server URL. */
  serverUrl: string;
  /** The challenge of the 401/403 that started the sign-in, if any. */
  challenge?: BearerChallenge | undefined;
  /** HTTP client. */
  fetch: FetchLike;
  /** Sent as `MCP-Protocol-Version` on requests to the MCP server's origin. */
  protocolVersion?: string | undefined;
  /** Aborts discovery. */
  signal?: AbortSignal | undefined;
  /** Per-request time limit in ms. */
  timeoutMs?: number | undefined;
  /** Diagnostics. */
  log?: AuthLog | undefined;
}

/**
 * Where to look for protected resource metadata, in order: the challenge's
 * `resource_metadata`, the path-specific well-known URL, the root well-known URL.
 *
 * @example
 * ```ts
 * import { protectedResourceMetadataUrls } from "./discovery.ts";
 * protectedResourceMetadataUrls("https://h/mcp");
 * // ["https://h/.well-known/oauth-protected-resource/mcp",
 * //  "https://h/.well-known/oauth-protected-resource"]
 * ```
 */
export function protectedResourceMetadataUrls(
  serverUrl: string,
  challenge?: BearerChallenge,
): string[] {
  const server = parseHttpUrl(serverUrl);
  if (!server) throw new ConfigError(`not an http(s) URL: ${describeUrl(serverUrl)}`);
  const urls: string[] = [];
  const fromChallenge = challenge?.params["resource_metadata"];
  if (fromChallenge) {
    // Relative values are not allowed, but resolving them costs nothing and helps.
    const resolved = URL.canParse(fromChallenge, server)
      ? parseHttpUrl(new URL(fromChallenge, server).href)
      : undefined;
    if (resolved) urls.push(resolved.href);
  }
  const path = server.pathname === "/" ? "" : server.pathname;
  if (path !== "" || server.search !== "") {
    urls.push(`${server.origin}${PRM_WELL_KNOWN}${path}${server.search}`);
  }
  urls.push(`${server.origin}${PRM_WELL_KNOWN}`);
  return [...new Set(urls)];
}

/**
 * Where to look for authorization server metadata of an issuer, in the MCP order:
 * with a path `/t1`, `/.well-known/oauth-authorization-server/t1`,
 * `/.well-known/openid-configuration/t1`, `/t1/.well-known/openid-configuration`;
 * without one, the two root well-known URLs.
 */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const url = parseHttpUrl(issuer);
  if (!url) throw new AuthRequiredError(`not an http(s) issuer: ${describeUrl(issuer)}`);
  const path = url.pathname.replace(/\/+$/, "");
  if (path === "") {
    return [`${url.origin}${OAUTH_WELL_KNOWN}`, `${url.origin}${OIDC_WELL_KNOWN}`];
  }
  return [
    `${url.origin}${OAUTH_WELL_KNOWN}${path}`,
    `${url.origin}${OIDC_WELL_KNOWN}${path}`,
    `${url.origin}${path}${OIDC_WELL_KNOWN}`,
  ];
}

/** The endpoints a 2025-03-26 server without metadata is assumed to have. */
export function defaultEndpoints(serverUrl: string): AsMetadata {
  const server = parseHttpUrl(serverUrl);
  if (!server) throw new ConfigError(`not an http(s) URL: ${describeUrl(serverUrl)}`);
  return {
    issuer: server.origin,
    authorization_endpoint: `${server.origin}/authorize`,
    token_endpoint: `${server.origin}/token`,
    registration_endpoint: `${server.origin}/register`,
  };
}

/**
 * Throws AuthRequiredError unless the metadata's `resource` covers the server URL
 * (same origin, path prefix, after canonicalisation).
 */
export function checkResource(prm: ProtectedResourceMetadata, serverUrl: string): void {
  if (parseHttpUrl(prm.resource) && resourceCovers(prm.resource, serverUrl)) return;
  throw new AuthRequiredError(
    `protected resource metadata names resource ${describeUrl(prm.resource)}, not ` +
      `${canonicalResource(serverUrl)}`,
    {
      hint: "the server's metadata describes another resource; mcpctl will not ask for " +
        "a token that another server could use",
    },
  );
}

/**
 * Finds everything needed to sign in to `serverUrl`. Throws AuthRequiredError when the
 * metadata is unsafe to follow (resource mismatch, non-https endpoints, issuer
 * mismatch), ServerError when an authorization server publishes no usable metadata.
 */
export async function discover(options: DiscoveryOptions): Promise<AuthorizationContext> {
  const server = parseHttpUrl(options.serverUrl);
  if (!server) throw new ConfigError(`not an http(s) URL: ${describeUrl(options.serverUrl)}`);
  const scope = options.challenge?.params["scope"]?.trim();
  const base = {
    serverUrl: options.serverUrl,
    ...(scope ? { scopesFromChallenge: scope } : {}),
  };

  const found = await findProtectedResourceMetadata(options);
  if (!found) {
    log(options, "no protected resource metadata: using 2025-03-26 discovery");
    const asMetadataUrl = `${server.origin}${OAUTH_WELL_KNOWN}`;
    const fetched = await fetchAsMetadata(asMetadataUrl, options);
    // A 2025-03-26 server may mount its AS under a path, so the issuer is not checked here.
    const as = fetched ?? defaultEndpoints(options.serverUrl);
    checkEndpoints(as);
    return {
      ...base,
      resource: canonicalResource(options.serverUrl),
      as,
      ...(fetched ? { asMetadataUrl } : {}),
    };
  }

  const { prm, url: prmUrl } = found;
  checkResource(prm, options.serverUrl);
  const issuer = prm.authorization_servers?.[0];
  if (!issuer) {
    throw new ServerError(
      `protected resource metadata at ${describeUrl(prmUrl)} names no ` +
        "authorization server",
    );
  }
  const { as, url } = await discoverIssuer(issuer, options);
  return {
    ...base,
    resource: canonicalResource(prm.resource),
    prm,
    prmUrl,
    as,
    asMetadataUrl: url,
  };
}

/**
 * Fetches the metadata of a known issuer (RFC 8414 / OpenID locations, in the MCP
 * order) and checks it: the issuer must match, and every endpoint must be https or
 * loopback. Throws AuthRequiredError when it is unsafe to use, ServerError when no
 * location answers with metadata.
 */
export async function discoverIssuer(
  issuer: string,
  options: Omit<DiscoveryOptions, "serverUrl" | "challenge" | "protocolVersion">,
): Promise<{ as: AsMetadata; url: string }> {
  requireSecureUrl(issuer, "authorization server");
  const tried: string[] = [];
  for (const url of authorizationServerMetadataUrls(issuer)) {
    tried.push(url);
    const as = await fetchAsMetadata(url, options);
    if (!as) continue;
    if (!sameIssuer(as.issuer, issuer)) {
      throw new AuthRequiredError(
        `authorization server metadata at ${describeUrl(url)} names issuer ` +
          `${describeUrl(as.issuer)}, not ${describeUrl(issuer)}`,
      );
    }
    checkEndpoints(as);
    return { as, url };
  }
  throw new ServerError(
    `authorization server ${describeUrl(issuer)} publishes no metadata (tried ` +
      `${tried.map(describeUrl).join(", ")})`,
  );
}

async function findProtectedResourceMetadata(
  options: DiscoveryOptions,
): Promise<{ prm: ProtectedResourceMetadata; url: string } | undefined> {
  for (const url of protectedResourceMetadataUrls(options.serverUrl, options.challenge)) {
    const response = await get(url, options);
    if (!response.ok) continue;
    const prm = parseProtectedResourceMetadata(response.json);
    if (prm) return { prm, url };
    log(options, `${describeUrl(url)}: not valid protected resource metadata, ignored`);
  }
  return undefined;
}

async function fetchAsMetadata(
  url: string,
  options: RequestOptions,
): Promise<AsMetadata | undefined> {
  const response = await get(url, options);
  if (!response.ok) return undefined;
  const as = parseAsMetadata(response.json);
  if (!as) log(options, `${describeUrl(url)}: not valid authorization server metadata, ignored`);
  return as;
}

async function get(url: string, options: RequestOptions) {
  const headers = new Headers({ Accept: "application/json" });
  const server = options.serverUrl === undefined ? undefined : parseHttpUrl(options.serverUrl);
  if (options.protocolVersion && server && new URL(url).origin === server.origin) {
    headers.set("MCP-Protocol-Version", options.protocolVersion);
  }
  const response = await requestJson(url, { method: "GET", headers }, options);
  log(options, `GET ${describeUrl(url)} → ${response.status}`);
  return response;
}

/** What one metadata request needs: the MCP server only when it is a discovery of it. */
type RequestOptions =
  & Omit<DiscoveryOptions, "serverUrl" | "challenge">
  & Partial<Pick<DiscoveryOptions, "serverUrl">>;

function checkEndpoints(as: AsMetadata): void {
  if (as.authorization_endpoint) {
    requireSecureUrl(as.authorization_endpoint, "authorization endpoint");
  }
  requireSecureUrl(as.token_endpoint, "token endpoint");
  if (as.registration_endpoint) {
    requireSecureUrl(as.registration_endpoint, "registration endpoint");
  }
}

function log(options: { log?: AuthLog | undefined }, line: string): void {
  options.log?.(`auth: ${line}`);
}
