/**
 * Types shared by the OAuth modules of `src/auth/` and by the code that wires them in
 * (token storage, the loopback listener, the transport's AuthProvider).
 *
 * Metadata documents keep their wire field names (snake_case) so that a field can be
 * looked up in its RFC without translation.
 *
 * @module
 */

import type { OAuthSettings } from "../config/types.ts";
import type { BearerChallenge } from "../mcp/transport/types.ts";

/** The subset of `fetch` the auth modules use; always called with an absolute URL string. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** Milliseconds since the epoch; injected so that expiry logic is testable. */
export type Clock = () => number;

/** A diagnostic sink for `--verbose`. Lines never contain tokens, codes or secrets. */
export type AuthLog = (line: string) => void;

/** OAuth 2.0 Protected Resource Metadata (RFC 9728), the fields mcpctl reads. */
export interface ProtectedResourceMetadata {
  /** The protected resource's identifier. */
  resource: string;
  /** Issuer identifiers of the authorization servers that protect it. */
  authorization_servers?: string[] | undefined;
  /** Scopes the resource understands. */
  scopes_supported?: string[] | undefined;
  /** How the resource accepts bearer tokens (`header`, `body`, `query`). */
  bearer_methods_supported?: string[] | undefined;
  /** Human-readable name. */
  resource_name?: string | undefined;
}

/**
 * OAuth 2.0 Authorization Server Metadata (RFC 8414; also what OpenID Connect Discovery
 * returns), the fields mcpctl reads.
 */
export interface AsMetadata {
  /** Issuer identifier. */
  issuer: string;
  /** Where the browser is sent; absent for servers that only issue tokens directly. */
  authorization_endpoint?: string | undefined;
  /** Where codes, refresh tokens and client credentials are exchanged. */
  token_endpoint: string;
  /** Dynamic Client Registration endpoint (RFC 7591). */
  registration_endpoint?: string | undefined;
  /** Token revocation endpoint (RFC 7009). */
  revocation_endpoint?: string | undefined;
  /** Scopes the server issues. */
  scopes_supported?: string[] | undefined;
  /** Response types (`code`). */
  response_types_supported?: string[] | undefined;
  /** Grant types. */
  grant_types_supported?: string[] | undefined;
  /** PKCE methods; MCP requires `S256`. */
  code_challenge_methods_supported?: string[] | undefined;
  /** Client authentication methods at the token endpoint (RFC 8414 default: basic). */
  token_endpoint_auth_methods_supported?: string[] | undefined;
  /** JWS algorithms accepted for `private_key_jwt`. */
  token_endpoint_auth_signing_alg_values_supported?: string[] | undefined;
  /** True when an https URL may be used as `client_id` (Client ID Metadata Documents). */
  client_id_metadata_document_supported?: boolean | undefined;
  /** True when the redirect carries `iss` (RFC 9207). */
  authorization_response_iss_parameter_supported?: boolean | undefined;
}

/** Everything discovery learned about how to obtain a token for one MCP server. */
export interface AuthorizationContext {
  /** The MCP server URL as given. */
  serverUrl: string;
  /**
   * The `resource` indicator (RFC 8707) sent on every authorize and token request:
   * the protected resource metadata's `resource` when there is one, else the server URL;
   * canonical (lowercase scheme and host, no fragment, no lone trailing slash).
   */
  resource: string;
  /** Protected resource metadata, when the server publishes it. */
  prm?: ProtectedResourceMetadata;
  /** Where the protected resource metadata was found. */
  prmUrl?: string;
  /** Authorization server metadata (fetched, or the 2025-03-26 default endpoints). */
  as: AsMetadata;
  /** Where the metadata was found; absent when the default endpoints were assumed. */
  asMetadataUrl?: string;
  /** The `scope` parameter of the challenge that started the sign-in. */
  scopesFromChallenge?: string;
}

/** Client authentication methods at the token endpoint that mcpctl implements. */
export type TokenEndpointAuthMethod =
  | "none"
  | "client_secret_basic"
  | "client_secret_post"
  | "private_key_jwt";

/** How a client identity was obtained. */
export type ClientSource = "preregistered" | "metadata-document" | "dynamic";

/**
 * A client identity at one authorization server. Plain JSON so that a store can cache
 * dynamic registrations; a pre-registered identity comes from configuration and should
 * not be persisted by the caller.
 */
export interface ClientRegistration {
  /** The `client_id`. */
  clientId: string;
  /** The client secret, for confidential clients (a secret: never print it). */
  clientSecret?: string;
  /** When the secret expires, epoch ms; absent when it does not. */
  clientSecretExpiresAt?: number;
  /** How the client authenticates at the token endpoint. */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** When the identity was obtained, epoch ms. */
  registeredAt: number;
  /** Redirect URIs the registration allows. */
  redirectUris?: string[];
  /**
   * True when the server registered the client as a native app, so that (RFC 8252
   * §7.3) a loopback IP redirect URI may use any port.
   */
  nativeApp?: boolean;
  /** Issuer of the authorization server the identity belongs to. */
  issuer: string;
  /** How it was obtained. */
  source: ClientSource;
}

/** Key under which a dynamic registration is cached. */
export interface RegistrationKey {
  /** The server entry's name. */
  serverName: string;
  /** The authorization server's issuer. */
  issuer: string;
}

/** Cache of dynamic client registrations, implemented by the storage layer. */
export interface RegistrationStore {
  /** The cached registration, or undefined. */
  getRegistration(key: RegistrationKey): Promise<ClientRegistration | undefined>;
  /** Saves (replaces) the registration. */
  putRegistration(key: RegistrationKey, registration: ClientRegistration): Promise<void>;
}

/** Tokens obtained from a token endpoint. Every string here is a secret. */
export interface TokenSet {
  /** The access token. */
  accessToken: string;
  /** Token type as the server spelled it (always a Bearer variant). */
  tokenType: string;
  /** The refresh token, when issued (or kept from before a refresh). */
  refreshToken?: string;
  /** Expiry, epoch ms, from `expires_in` and the injected clock. */
  expiresAt?: number;
  /** Granted scope: the response's, else the requested one (RFC 6749 §5.1). */
  scope?: string;
}

/** How a client authenticates in one token request: an identity plus key material. */
export interface TokenClient {
  /** The `client_id`. */
  clientId: string;
  /** The method to use. */
  method: TokenEndpointAuthMethod;
  /** Secret for `client_secret_basic` / `client_secret_post`. */
  clientSecret?: string;
  /** PKCS#8 PEM private key for `private_key_jwt`. */
  privateKey?: string;
  /** JWS algorithm for `private_key_jwt` (e.g. `ES256`); chosen from the key when absent. */
  signingAlgorithm?: string;
}

/** What the loopback redirect delivered. */
export interface CallbackResult {
  /** The authorization code (a secret). */
  code: string;
  /** The `state` echoed by the server, when the waiter passes it on. */
  state?: string;
  /** The `iss` parameter (RFC 9207), when present. */
  iss?: string;
}

/** Options every flow takes. */
export interface FlowBaseOptions {
  /** The MCP server URL. */
  serverUrl: string;
  /** The server entry's name (registration cache key, messages). */
  serverName: string;
  /** The entry's OAuth settings. */
  settings: OAuthSettings;
  /** HTTP client. */
  fetch: FetchLike;
  /** Clock; defaults to `Date.now`. */
  clock?: Clock | undefined;
  /** Diagnostics. */
  log?: AuthLog | undefined;
  /** Receives every secret the flow sends or obtains (client assertions, tokens), for redaction. */
  onSecret?: ((secret: string) => void) | undefined;
  /** Aborts every request of the flow. */
  signal?: AbortSignal | undefined;
  /** Per-request time limit in ms (default 30 s). */
  timeoutMs?: number | undefined;
  /** Sent as `MCP-Protocol-Version` on metadata requests to the MCP server (2025-03-26 SHOULD). */
  protocolVersion?: string | undefined;
}

/** A running redirect listener (what `startLoopback` of `loopback.ts` returns). */
export interface CallbackListener {
  /** The redirect URI it answers on. */
  redirectUri: string;
  /** Settles once with the callback, or rejects with why there is none. */
  result: Promise<CallbackResult>;
  /** Stops listening; idempotent. */
  close(): Promise<void>;
}

/**
 * The interactive half of an authorization code flow. Give either `listen` (started by
 * the flow with the state it generated, closed when the flow ends) or `redirectUri` with
 * `waitForCallback` (a listener the caller runs).
 */
export interface InteractiveOptions {
  /** Shows the authorization URL: opens a browser and/or prints it. Should not reject. */
  openBrowser(url: string): Promise<void>;
  /** Starts a listener that accepts only `expectedState`. */
  listen?: ((expectedState: string) => Promise<CallbackListener>) | undefined;
  /** The loopback (or https) redirect URI of a caller-run listener. */
  redirectUri?: string | undefined;
  /** Resolves with the callback once the redirect with this `state` arrived. */
  waitForCallback?: ((expectedState: string) => Promise<CallbackResult>) | undefined;
}

/** Options of `authorizationCodeFlow`. */
export interface AuthorizationCodeFlowOptions extends FlowBaseOptions, InteractiveOptions {
  /** The challenge that triggered the sign-in (401 or 403). */
  challenge?: BearerChallenge | undefined;
  /** Cache of dynamic registrations. */
  store: RegistrationStore;
  /** Scope of the token being replaced, kept on step-up (403 `insufficient_scope`). */
  previousScope?: string | undefined;
  /** Discovery already done (skips it). */
  context?: AuthorizationContext | undefined;
}

/** Options of `clientCredentialsFlow`. */
export interface ClientCredentialsFlowOptions extends FlowBaseOptions {
  /** The challenge that triggered the sign-in. */
  challenge?: BearerChallenge | undefined;
  /** Scope of the token being replaced, kept on step-up. */
  previousScope?: string | undefined;
  /** Discovery already done (skips it). */
  context?: AuthorizationContext | undefined;
}

/** Options of `refreshFlow`. */
export interface RefreshFlowOptions extends FlowBaseOptions {
  /** The refresh token (a secret). */
  refreshToken: string;
  /** Scope to ask for; omitted means "the same as before". */
  scope?: string | undefined;
  /** Cache of dynamic registrations (to find the client the token was issued to). */
  store: RegistrationStore;
  /** The client the token was issued to, when the caller kept it. */
  client?: ClientRegistration | undefined;
  /** Discovery already done (skips it). */
  context?: AuthorizationContext | undefined;
}

/** The result of a sign-in or refresh. */
export interface AuthorizationResult {
  /** The tokens (secrets). */
  tokens: TokenSet;
  /** What discovery found (endpoints, resource), for later refreshes. */
  context: AuthorizationContext;
  /** The client identity used. */
  client: ClientRegistration;
}
