/**
 * Sign-in orchestration with everything injected (HTTP client, browser, loopback
 * listener, registration store, clock):
 * discovery → client identity → PKCE → browser → code → token exchange.
 * Also the client credentials grant, refresh, and a step-up wrapper that stops after
 * three authorization attempts.
 *
 * @module
 */

import { AuthRequiredError, ConfigError } from "../errors.ts";
import type { BearerChallenge } from "../mcp/transport/types.ts";
import { discover } from "./discovery.ts";
import { createPkce, createState } from "./pkce.ts";
import {
  isRegistrationUsable,
  metadataDocumentClient,
  preregisteredClient,
  resolveClient,
  tokenClientFor,
} from "./registration.ts";
import { selectScope, unionScopes } from "./scopes.ts";
import {
  buildAuthorizationUrl,
  exchangeAuthorizationCode,
  refreshAccessToken,
  requestClientCredentialsToken,
  type TokenEndpointTarget,
} from "./tokens.ts";
import type {
  AuthorizationCodeFlowOptions,
  AuthorizationContext,
  AuthorizationResult,
  CallbackResult,
  ClientCredentialsFlowOptions,
  FlowBaseOptions,
  InteractiveOptions,
  RefreshFlowOptions,
  RegistrationStore,
} from "./types.ts";
import { describeUrl, isLoopbackHost, parseHttpUrl, sameIssuer } from "./urls.ts";

/** Authorization attempts per sign-in session (the conformance suite allows 3). */
export const MAX_AUTHORIZATION_ATTEMPTS = 3;

/**
 * Signs in with the authorization code grant and PKCE. Resolves with the tokens, the
 * discovery result and the client used; rejects with AuthRequiredError when the sign-in
 * is refused or unsafe, ConfigError when configuration is missing.
 */
export async function authorizationCodeFlow(
  options: AuthorizationCodeFlowOptions,
): Promise<AuthorizationResult> {
  const clock = options.clock ?? Date.now;
  if (options.redirectUri !== undefined) checkRedirectUri(options.redirectUri);
  const context = options.context ?? await discoverFor(options, options.challenge);
  const as = context.as;
  const authorizationEndpoint = as.authorization_endpoint;
  if (!authorizationEndpoint) {
    throw new AuthRequiredError(
      `authorization server ${describeUrl(as.issuer)} has no authorization endpoint`,
      { hint: 'for machine-to-machine access set oauth.grant to "client_credentials"' },
    );
  }
  requirePkce(context);
  if (as.response_types_supported && !as.response_types_supported.includes("code")) {
    throw new AuthRequiredError(
      `authorization server ${describeUrl(as.issuer)} does not offer response type "code"`,
    );
  }

  const state = createState();
  const callback = await openCallback(options, state);
  try {
    const redirectUri = callback.redirectUri;
    checkRedirectUri(redirectUri);
    const client = await resolveClient({
      serverName: options.serverName,
      context,
      settings: options.settings,
      redirectUri,
      store: options.store,
      fetch: options.fetch,
      clock,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      log: options.log,
    });
    const scope = selectScope({
      challengeScope: context.scopesFromChallenge,
      configuredScope: options.settings.scope,
      resourceScopes: context.prm?.scopes_supported,
      serverScopes: as.scopes_supported,
      previousScope: options.previousScope,
      wantRefreshToken: true,
    });
    const pkce = await createPkce();
    const url = buildAuthorizationUrl({
      authorizationEndpoint,
      clientId: client.clientId,
      redirectUri,
      codeChallenge: pkce.challenge,
      state,
      scope,
      resource: context.resource,
    });
    options.log?.(
      `auth: authorizing at ${describeUrl(authorizationEndpoint)} as ${client.source} ` +
        `client, scope ${scope ?? "(none)"}`,
    );
    // Wait first so that a fast redirect cannot arrive before anyone waits for it.
    const pending = callback.wait();
    pending.catch(() => {}); // Awaited below; this only silences an early rejection.
    await options.openBrowser(url);
    const received = await pending;
    if (received.state !== undefined && received.state !== state) {
      throw new AuthRequiredError("the authorization response carried a different state", {
        hint: "sign in again, and only from the browser window mcpctl opened",
      });
    }
    if (received.iss !== undefined && !sameIssuer(received.iss, as.issuer)) {
      throw new AuthRequiredError(
        `the authorization response came from ${describeUrl(received.iss)}, not ` +
          describeUrl(as.issuer),
      );
    }
    const tokens = await exchangeAuthorizationCode({
      target: targetOf(context),
      client: tokenClientFor(client, options.settings),
      fetch: options.fetch,
      clock,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      log: options.log,
      onSecret: options.onSecret,
      code: received.code,
      codeVerifier: pkce.verifier,
      redirectUri,
      requestedScope: scope,
    });
    return { tokens, context, client };
  } finally {
    await callback.close();
  }
}

/** The two ways of receiving the redirect, behind one shape. */
interface OpenCallback {
  redirectUri: string;
  wait(): Promise<CallbackResult>;
  close(): Promise<void>;
}

async function openCallback(options: InteractiveOptions, state: string): Promise<OpenCallback> {
  if (options.listen) {
    const listener = await options.listen(state);
    return {
      redirectUri: listener.redirectUri,
      wait: () => listener.result,
      close: () => listener.close(),
    };
  }
  const { redirectUri, waitForCallback } = options;
  if (redirectUri === undefined || !waitForCallback) {
    throw new TypeError(
      "an authorization code sign-in needs listen, or redirectUri with waitForCallback",
    );
  }
  return { redirectUri, wait: () => waitForCallback(state), close: () => Promise.resolve() };
}

/**
 * Obtains a token with the client credentials grant (no user, no browser), using
 * `oauth.clientId` with `oauth.clientSecret` or `oauth.privateKey` (`private_key_jwt`).
 */
export async function clientCredentialsFlow(
  options: ClientCredentialsFlowOptions,
): Promise<AuthorizationResult> {
  const clock = options.clock ?? Date.now;
  const settings = options.settings;
  if (!settings.clientId || (!settings.clientSecret && !settings.privateKey)) {
    throw new ConfigError(
      `the client_credentials grant needs oauth.clientId and oauth.clientSecret or ` +
        `oauth.privateKey in the configuration entry for ${options.serverName}`,
    );
  }
  const context = options.context ?? await discoverFor(options, options.challenge);
  const client = preregisteredClient(settings, context, clock());
  if (!client) throw new ConfigError("oauth.clientId is not set");
  if (client.tokenEndpointAuthMethod === "none") {
    if (settings.tokenEndpointAuthMethod === "none") {
      throw new ConfigError(
        'the client_credentials grant cannot use oauth.tokenEndpointAuthMethod "none"',
      );
    }
    // The server lists only "none", yet a confidential grant must authenticate.
    client.tokenEndpointAuthMethod = settings.privateKey
      ? "private_key_jwt"
      : "client_secret_basic";
  }
  const scope = selectScope({
    challengeScope: context.scopesFromChallenge,
    configuredScope: settings.scope,
    resourceScopes: context.prm?.scopes_supported,
    serverScopes: context.as.scopes_supported,
    previousScope: options.previousScope,
    wantRefreshToken: false,
  });
  const tokens = await requestClientCredentialsToken({
    target: targetOf(context),
    client: tokenClientFor(client, settings),
    fetch: options.fetch,
    clock,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    log: options.log,
    onSecret: options.onSecret,
    scope,
  });
  return { tokens, context, client };
}

/**
 * Refreshes an access token. Rediscovers the endpoints unless `context` is given, and
 * uses the client the token was issued to: `client`, the configured one, or the cached
 * dynamic registration. Rejects with AuthRequiredError when a fresh sign-in is needed.
 */
export async function refreshFlow(options: RefreshFlowOptions): Promise<AuthorizationResult> {
  const clock = options.clock ?? Date.now;
  const context = options.context ?? await discoverFor(options, undefined);
  const now = clock();
  const client = options.client ??
    preregisteredClient(options.settings, context, now) ??
    metadataDocumentClient(options.settings, context, now) ??
    await cachedClient(options.store, options.serverName, context, now);
  if (!client) {
    throw new AuthRequiredError(
      `no client registration for ${options.serverName} at ${describeUrl(context.as.issuer)}`,
      { hint: "sign in again" },
    );
  }
  const tokens = await refreshAccessToken({
    target: targetOf(context),
    client: tokenClientFor(client, options.settings),
    fetch: options.fetch,
    clock,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    log: options.log,
    onSecret: options.onSecret,
    refreshToken: options.refreshToken,
    scope: options.scope,
  });
  return { tokens, context, client };
}

/** Options of `createSignIn`: a flow's options minus the per-attempt ones. */
export interface SignInOptions extends FlowBaseOptions, Partial<InteractiveOptions> {
  /** Cache of dynamic registrations. */
  store: RegistrationStore;
  /** Attempt limit (default 3). */
  maxAttempts?: number | undefined;
}

/** A sign-in session: one per server per process, so retries are bounded. */
export interface SignIn {
  /** Authorization attempts made so far. */
  readonly attempts: number;
  /**
   * Signs in for a challenge, with the grant of `oauth.grant`. On a step-up challenge
   * (`insufficient_scope`) the scope already granted is kept. Rejects with
   * AuthRequiredError once the attempt limit is reached.
   */
  run(challenge?: BearerChallenge): Promise<AuthorizationResult>;
}

/**
 * Creates a sign-in session that remembers the granted scope (for step-up) and stops
 * after `maxAttempts` authorization attempts, so a server that keeps answering
 * `insufficient_scope` cannot send the user through the browser forever.
 */
export function createSignIn(options: SignInOptions): SignIn {
  const limit = options.maxAttempts ?? MAX_AUTHORIZATION_ATTEMPTS;
  let attempts = 0;
  let granted: string | undefined;
  return {
    get attempts() {
      return attempts;
    },
    async run(challenge) {
      if (attempts >= limit) {
        const wanted = challenge?.params["scope"];
        throw new AuthRequiredError(
          `gave up signing in to ${options.serverName} after ${attempts} authorization attempts`,
          {
            hint: wanted
              ? `the server still asks for scope "${wanted.slice(0, 200)}"; check that your ` +
                "account may use it"
              : "check the server's oauth settings",
          },
        );
      }
      attempts++;
      const stepUp = challenge?.params["error"] === "insufficient_scope";
      const previousScope = stepUp ? granted : undefined;
      const result = options.settings.grant === "client_credentials"
        ? await clientCredentialsFlow({ ...options, challenge, previousScope })
        : await authorizationCodeFlow({
          ...options,
          openBrowser: browser(options),
          challenge,
          previousScope,
        });
      granted = unionScopes(previousScope, result.tokens.scope);
      return result;
    },
  };
}

function browser(options: Partial<InteractiveOptions>): InteractiveOptions["openBrowser"] {
  if (!options.openBrowser) {
    throw new TypeError("an authorization code sign-in needs openBrowser");
  }
  return options.openBrowser;
}

function discoverFor(
  options: FlowBaseOptions,
  challenge: BearerChallenge | undefined,
): Promise<AuthorizationContext> {
  return discover({
    serverUrl: options.serverUrl,
    challenge,
    fetch: options.fetch,
    protocolVersion: options.protocolVersion,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    log: options.log,
  });
}

async function cachedClient(
  store: RegistrationStore,
  serverName: string,
  context: AuthorizationContext,
  now: number,
) {
  const cached = await store.getRegistration({ serverName, issuer: context.as.issuer });
  return cached && isRegistrationUsable(cached, { issuer: context.as.issuer, now })
    ? cached
    : undefined;
}

function targetOf(context: AuthorizationContext): TokenEndpointTarget {
  return {
    tokenEndpoint: context.as.token_endpoint,
    issuer: context.as.issuer,
    resource: context.resource,
    signingAlgorithms: context.as.token_endpoint_auth_signing_alg_values_supported,
  };
}

/**
 * PKCE is mandatory (MCP 2025-11-25): metadata that does not list S256 means the server
 * may ignore the challenge, so the sign-in stops. Assumed default endpoints (no
 * metadata at all) carry no such promise and still get S256.
 */
function requirePkce(context: AuthorizationContext): void {
  if (context.asMetadataUrl === undefined) return;
  if (context.as.code_challenge_methods_supported?.includes("S256")) return;
  throw new AuthRequiredError(
    `authorization server ${describeUrl(context.as.issuer)} does not list PKCE method S256 ` +
      "in code_challenge_methods_supported; mcpctl does not sign in without PKCE",
  );
}

function checkRedirectUri(value: string): void {
  const url = parseHttpUrl(value);
  const ok = url !== undefined &&
    (url.protocol === "https:" || isLoopbackHost(url.hostname)) && url.hash === "";
  if (!ok) {
    throw new ConfigError(
      `redirect URI ${describeUrl(value)} must be a loopback http URL or an https URL`,
    );
  }
}
