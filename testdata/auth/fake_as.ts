/**
 * A fake OAuth authorization server and protected resource for the auth tests, on
 * 127.0.0.1 with random ports. It checks what a real server would (PKCE S256, client
 * authentication of every method incl. JWT signatures, redirect URI, `resource`) and
 * answers OAuth errors when something is wrong, recording every request. Dynamically
 * registered clients must use a registered redirect URI; for `application_type:
 * native` a loopback IP one may use any port (RFC 8252 §7.3). Tokens can be revoked
 * (RFC 7009) at `/revoke`.
 *
 * @module
 */

import type {
  CallbackResult,
  ClientRegistration,
  RegistrationKey,
  RegistrationStore,
} from "../../src/auth/types.ts";

/** One recorded request. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** Form or JSON body, as text. */
  body: string;
}

/** A client the fake knows. */
export interface FakeClient {
  id: string;
  method: "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt";
  secret?: string;
  /** Public key for `private_key_jwt`. */
  publicKey?: CryptoKey;
  /** WebCrypto verify parameters for that key. */
  verify?: AlgorithmIdentifier | EcdsaParams | RsaPssParams;
  /** Registered redirect URIs; any is accepted when absent. */
  redirectUris?: string[];
  /** `application_type` of a dynamic registration. */
  applicationType?: string;
}

/** One revocation request the fake accepted. */
export interface RecordedRevocation {
  clientId: string;
  token: string;
  /** `token_type_hint` as sent. */
  hint: string | null;
  /** What the token was. */
  kind: "refresh_token" | "access_token" | "unknown";
}

/** Options of `startFakeAs`. */
export interface FakeAsOptions {
  /** Issuer path, e.g. `/tenant1`. */
  prefix?: string;
  /** Which well-known URL answers: RFC 8414 (default), OIDC inserted, OIDC appended, none. */
  metadataAt?: "oauth" | "oidc" | "oidc-appended" | "none";
  /** Merged over the default metadata; an `undefined` value removes the field. */
  metadata?: Record<string, unknown>;
  /** Pre-registered clients. */
  clients?: FakeClient[];
  /** What dynamic registration answers (default: a public client). */
  registration?: { secret?: string; method?: string; status?: number; error?: string };
  /** Answer every token request with this OAuth error. */
  tokenError?: { status: number; error: string; description?: string };
  /** `expires_in` of issued access tokens, in seconds (default 3600). */
  accessTtlSeconds?: number;
  /** Invalidate a refresh token once it has been used (rotation). */
  rotateRefreshTokens?: boolean;
}

/** What the fake knows about an access token it issued. */
export interface IssuedAccessToken {
  clientId: string;
  /** The `resource` of the token request. */
  resource: string;
  scope: string | null;
  /** Expiry, epoch ms (real clock). */
  expiresAt: number;
  grant: string;
}

/** Behaviour that tests change while the fake runs. */
export interface FakeAsControls {
  /** `expires_in` of access tokens issued from now on, in seconds. */
  accessTtlSeconds: number;
  /** Answer refresh requests with `invalid_grant`. */
  refuseRefresh: boolean;
  /** Wait this long before answering a token request (to make clients overlap). */
  tokenDelayMs: number;
  /**
   * Refuse every token request with `invalid_client`, quoting the request (its
   * `Authorization` header and its body, as received) in `error_description`: a
   * careless server that echoes credentials.
   */
  echoTokenRequests: boolean;
}

/** A running fake authorization server. */
export interface FakeAs {
  origin: string;
  issuer: string;
  requests: RecordedRequest[];
  /** Problems found in requests (also sent back as OAuth errors). */
  problems: string[];
  /** Access and refresh tokens issued so far. */
  issued: string[];
  /** Parameters of every token request, after authentication. */
  tokenParams: URLSearchParams[];
  /** Client ids as authenticated per token request, with the method used. */
  authenticated: Array<{ clientId: string; method: string }>;
  /** Accepted revocation requests, in order. */
  revocations: RecordedRevocation[];
  /** Registration requests (bodies as parsed JSON), in order. */
  registrations: Record<string, unknown>[];
  /** Live access tokens (a resource server checks bearer tokens here). */
  accessTokens: Map<string, IssuedAccessToken>;
  /** Mutable behaviour. */
  controls: FakeAsControls;
  /** Issues tokens directly, as if a sign-in of `clientId` for `resource` had happened. */
  mint(
    clientId: string,
    resource: string,
    scope?: string | null,
  ): { accessToken: string; refreshToken: string; expiresIn: number };
  /** Forgets every access token issued so far (refresh tokens stay valid). */
  revokeAccessTokens(): void;
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  challenge: string;
  redirectUri: string;
  resource: string | null;
  scope: string | null;
}

/** Starts the fake authorization server. */
export function startFakeAs(options: FakeAsOptions = {}): FakeAs {
  const prefix = options.prefix ?? "";
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const issued: string[] = [];
  const tokenParams: URLSearchParams[] = [];
  const authenticated: Array<{ clientId: string; method: string }> = [];
  const revocations: RecordedRevocation[] = [];
  const registrations: Record<string, unknown>[] = [];
  const clients = new Map((options.clients ?? []).map((c) => [c.id, c]));
  const codes = new Map<string, PendingCode>();
  const refreshTokens = new Map<string, { clientId: string; scope: string | null }>();
  const accessTokens = new Map<string, IssuedAccessToken>();
  const controls: FakeAsControls = {
    accessTtlSeconds: options.accessTtlSeconds ?? 3600,
    refuseRefresh: false,
    tokenDelayMs: 0,
    echoTokenRequests: false,
  };
  let origin = "";

  function issue(clientId: string, resource: string, scope: string | null, grant: string) {
    const access = `at-${crypto.randomUUID()}`;
    const refresh = `rt-${crypto.randomUUID()}`;
    const expiresIn = controls.accessTtlSeconds;
    issued.push(access, refresh);
    refreshTokens.set(refresh, { clientId, scope });
    accessTokens.set(access, {
      clientId,
      resource,
      scope,
      expiresAt: Date.now() + expiresIn * 1000,
      grant,
    });
    return { accessToken: access, refreshToken: refresh, expiresIn };
  }

  const metadataPath = options.metadataAt === "oidc"
    ? `/.well-known/openid-configuration${prefix}`
    : options.metadataAt === "oidc-appended"
    ? `${prefix}/.well-known/openid-configuration`
    : options.metadataAt === "none"
    ? undefined
    : `/.well-known/oauth-authorization-server${prefix}`;

  function metadata(): Record<string, unknown> {
    const doc: Record<string, unknown> = {
      issuer: `${origin}${prefix}`,
      authorization_endpoint: `${origin}${prefix}/authorize`,
      token_endpoint: `${origin}${prefix}/token`,
      registration_endpoint: `${origin}${prefix}/register`,
      revocation_endpoint: `${origin}${prefix}/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
    };
    for (const [k, v] of Object.entries(options.metadata ?? {})) {
      if (v === undefined) delete doc[k];
      else doc[k] = v;
    }
    return doc;
  }

  function oauthError(status: number, error: string, description: string): Response {
    problems.push(`${error}: ${description}`);
    return Response.json({ error, error_description: description }, { status });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const body = request.method === "POST" ? await request.text() : "";
    requests.push({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body,
    });
    if (request.method === "GET" && url.pathname === metadataPath) {
      return Response.json(metadata());
    }
    if (request.method === "GET" && url.pathname === `${prefix}/authorize`) {
      return authorize(url.searchParams);
    }
    if (request.method === "POST" && url.pathname === `${prefix}/token`) {
      if (controls.echoTokenRequests) {
        const description = `bad client; you sent authorization=${
          request.headers.get("authorization") ?? "(none)"
        } body=${body}`;
        return oauthError(401, "invalid_client", description);
      }
      return await token(request.headers, new URLSearchParams(body));
    }
    if (request.method === "POST" && url.pathname === `${prefix}/register`) {
      return register(body);
    }
    if (request.method === "POST" && url.pathname === `${prefix}/revoke`) {
      return await revoke(request.headers, new URLSearchParams(body));
    }
    return new Response("not found", { status: 404 });
  }

  function authorize(q: URLSearchParams): Response {
    const redirect = q.get("redirect_uri");
    if (!redirect) return new Response("no redirect_uri", { status: 400 });
    const back = new URL(redirect);
    const fail = (error: string) => {
      problems.push(`authorize: ${error}`);
      back.searchParams.set("error", error);
      return new Response(null, { status: 302, headers: { Location: back.href } });
    };
    const clientId = q.get("client_id") ?? "";
    if (q.get("response_type") !== "code") return fail("unsupported_response_type");
    if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
      return fail("invalid_request");
    }
    const known: Partial<FakeClient> | undefined = clients.get(clientId) ??
      (clientId.startsWith("https://") ? {} : undefined);
    if (!known) return fail("unauthorized_client");
    if (known.redirectUris && !redirectAllowed(known, redirect)) {
      // Never redirect to an unregistered URI: the error stays at the server.
      problems.push(`authorize: redirect_uri ${redirect} is not registered`);
      return new Response("redirect_uri is not registered", { status: 400 });
    }
    const code = `code-${crypto.randomUUID()}`;
    codes.set(code, {
      clientId,
      challenge: q.get("code_challenge") ?? "",
      redirectUri: redirect,
      resource: q.get("resource"),
      scope: q.get("scope"),
    });
    back.searchParams.set("code", code);
    const state = q.get("state");
    if (state !== null) back.searchParams.set("state", state);
    return new Response(null, { status: 302, headers: { Location: back.href } });
  }

  async function revoke(headers: Headers, params: URLSearchParams): Promise<Response> {
    const who = await authenticate(headers, params);
    if (typeof who === "string") return oauthError(401, "invalid_client", who);
    const token = params.get("token");
    if (!token) return oauthError(400, "invalid_request", "no token parameter");
    const refresh = refreshTokens.get(token);
    const access = accessTokens.get(token);
    const owner = refresh?.clientId ?? access?.clientId;
    if (owner !== undefined && owner !== who.clientId) {
      return oauthError(400, "unauthorized_client", "the token belongs to another client");
    }
    // RFC 7009 §2.2: an unknown token is answered with 200 as well.
    refreshTokens.delete(token);
    accessTokens.delete(token);
    revocations.push({
      clientId: who.clientId,
      token,
      hint: params.get("token_type_hint"),
      kind: refresh ? "refresh_token" : access ? "access_token" : "unknown",
    });
    return new Response(null, { status: 200 });
  }

  async function authenticate(
    headers: Headers,
    params: URLSearchParams,
  ): Promise<{ clientId: string } | string> {
    const basic = headers.get("authorization");
    let clientId: string;
    let method: FakeClient["method"];
    let secret: string | undefined;
    if (basic?.startsWith("Basic ")) {
      const decoded = atob(basic.slice(6));
      const colon = decoded.indexOf(":");
      const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
      clientId = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
      method = "client_secret_basic";
    } else if (params.has("client_assertion")) {
      const result = await verifyAssertion(params);
      if (typeof result === "string") return result;
      clientId = result.clientId;
      method = "private_key_jwt";
    } else if (params.has("client_secret")) {
      clientId = params.get("client_id") ?? "";
      secret = params.get("client_secret") ?? "";
      method = "client_secret_post";
    } else {
      clientId = params.get("client_id") ?? "";
      method = "none";
    }
    const client = clients.get(clientId) ??
      (clientId.startsWith("https://") ? { id: clientId, method: "none" as const } : undefined);
    if (!client) return `unknown client ${clientId}`;
    if (client.method !== method) return `client ${clientId} must use ${client.method}`;
    if (client.secret !== undefined && client.secret !== secret) return "wrong client secret";
    authenticated.push({ clientId, method });
    return { clientId };
  }

  async function verifyAssertion(
    params: URLSearchParams,
  ): Promise<{ clientId: string } | string> {
    if (params.get("client_assertion_type") !== JWT_BEARER) return "bad client_assertion_type";
    const [h, p, s] = (params.get("client_assertion") ?? "").split(".");
    if (!h || !p || !s) return "malformed assertion";
    const payload = JSON.parse(new TextDecoder().decode(fromBase64Url(p)));
    const header = JSON.parse(new TextDecoder().decode(fromBase64Url(h)));
    const client = clients.get(payload.iss);
    if (!client?.publicKey || !client.verify) return "assertion from unknown client";
    const ok = await crypto.subtle.verify(
      client.verify,
      client.publicKey,
      fromBase64Url(s),
      new TextEncoder().encode(`${h}.${p}`),
    );
    if (!ok) return "assertion signature does not verify";
    if (typeof header.alg !== "string") return "assertion has no alg";
    if (payload.sub !== payload.iss) return "assertion sub differs from iss";
    if (payload.aud !== `${origin}${prefix}`) return `assertion aud is ${payload.aud}`;
    const now = Date.now() / 1000;
    if (!(payload.exp > now) || !(payload.iat <= now + 5)) return "assertion times are wrong";
    if (typeof payload.jti !== "string" || payload.jti === "") return "assertion has no jti";
    if (params.get("client_id") !== null && params.get("client_id") !== payload.iss) {
      return "client_id differs from assertion";
    }
    return { clientId: payload.iss };
  }

  async function token(headers: Headers, params: URLSearchParams): Promise<Response> {
    if (controls.tokenDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, controls.tokenDelayMs));
    }
    if (options.tokenError) {
      const e = options.tokenError;
      return Response.json({ error: e.error, error_description: e.description }, {
        status: e.status,
      });
    }
    const who = await authenticate(headers, params);
    if (typeof who === "string") return oauthError(401, "invalid_client", who);
    tokenParams.push(params);
    const resource = params.get("resource");
    if (!resource) return oauthError(400, "invalid_target", "no resource parameter");
    let scope = params.get("scope");
    switch (params.get("grant_type")) {
      case "authorization_code": {
        const pending = codes.get(params.get("code") ?? "");
        if (!pending) return oauthError(400, "invalid_grant", "unknown code");
        codes.delete(params.get("code") ?? "");
        if (pending.clientId !== who.clientId) return oauthError(400, "invalid_grant", "client");
        if (pending.redirectUri !== params.get("redirect_uri")) {
          return oauthError(400, "invalid_grant", "redirect_uri differs");
        }
        const verifier = params.get("code_verifier") ?? "";
        if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) {
          return oauthError(400, "invalid_grant", "malformed code_verifier");
        }
        if (await s256(verifier) !== pending.challenge) {
          return oauthError(400, "invalid_grant", "PKCE verification failed");
        }
        if (pending.resource !== resource) {
          return oauthError(400, "invalid_target", "resource differs from authorize");
        }
        scope = pending.scope;
        break;
      }
      case "refresh_token": {
        if (controls.refuseRefresh) {
          return oauthError(400, "invalid_grant", "refresh refused by the test");
        }
        const old = refreshTokens.get(params.get("refresh_token") ?? "");
        if (!old || old.clientId !== who.clientId) {
          return oauthError(400, "invalid_grant", "unknown refresh token");
        }
        if (options.rotateRefreshTokens) refreshTokens.delete(params.get("refresh_token") ?? "");
        scope = scope ?? old.scope;
        break;
      }
      case "client_credentials":
        if (clients.get(who.clientId)?.method === "none") {
          return oauthError(401, "invalid_client", "public clients cannot");
        }
        break;
      default:
        return oauthError(400, "unsupported_grant_type", String(params.get("grant_type")));
    }
    const grant = params.get("grant_type") ?? "";
    const minted = issue(who.clientId, resource, scope, grant);
    return Response.json({
      access_token: minted.accessToken,
      token_type: "Bearer",
      expires_in: minted.expiresIn,
      ...(grant === "client_credentials" ? {} : { refresh_token: minted.refreshToken }),
      ...(scope ? { scope } : {}),
    });
  }

  function register(body: string): Response {
    const reg = options.registration ?? {};
    if (reg.status) {
      return Response.json({ error: reg.error ?? "invalid_client_metadata" }, {
        status: reg.status,
      });
    }
    const request = JSON.parse(body);
    registrations.push(request);
    const id = `dyn-${crypto.randomUUID()}`;
    const method =
      (reg.method ?? (reg.secret ? "client_secret_basic" : "none")) as FakeClient["method"];
    const applicationType = request.application_type === "native" ? "native" : "web";
    clients.set(id, {
      id,
      method,
      ...(reg.secret ? { secret: reg.secret } : {}),
      redirectUris: request.redirect_uris,
      applicationType,
    });
    return Response.json({
      client_id: id,
      ...(reg.secret ? { client_secret: reg.secret, client_secret_expires_at: 0 } : {}),
      ...(reg.method ? { token_endpoint_auth_method: reg.method } : {}),
      redirect_uris: request.redirect_uris,
      client_name: request.client_name,
      application_type: applicationType,
    }, { status: 201 });
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    issuer: `${origin}${prefix}`,
    requests,
    problems,
    issued,
    tokenParams,
    authenticated,
    revocations,
    registrations,
    accessTokens,
    controls,
    mint: (clientId, resource, scope = null) => issue(clientId, resource, scope, "minted"),
    revokeAccessTokens: () => accessTokens.clear(),
    close: () => server.shutdown(),
  };
}

const JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/**
 * Exact match, or for a native client a loopback IP literal redirect that differs only
 * in the port (RFC 8252 §7.3; `localhost` is not a loopback IP literal).
 */
function redirectAllowed(client: Partial<FakeClient>, redirect: string): boolean {
  const registered = client.redirectUris ?? [];
  if (registered.includes(redirect)) return true;
  if (client.applicationType !== "native") return false;
  const portless = (value: string): string | undefined => {
    const url = URL.parse(value);
    if (!url || url.protocol !== "http:") return undefined;
    if (url.hostname !== "127.0.0.1" && url.hostname !== "[::1]") return undefined;
    url.port = "";
    return url.href;
  };
  const wanted = portless(redirect);
  return wanted !== undefined && registered.some((r) => portless(r) === wanted);
}

async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Options of `startFakeResource`. */
export interface FakeResourceOptions {
  /** Path → protected resource metadata document. */
  documents: Record<string, unknown>;
}

/** A running fake MCP server that only serves metadata. */
export interface FakeResource {
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a fake protected resource serving `documents`; everything else is 404. */
export function startFakeResource(options: FakeResourceOptions): FakeResource {
  const requests: RecordedRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const url = new URL(request.url);
    requests.push({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body: "",
    });
    const doc = options.documents[url.pathname];
    return doc === undefined ? new Response("not found", { status: 404 }) : Response.json(doc);
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}

/** A browser stand-in: it follows the authorization URL and captures the redirect. */
export interface FakeBrowser {
  redirectUri: string;
  openBrowser(url: string): Promise<void>;
  waitForCallback(expectedState: string): Promise<CallbackResult>;
  /** Every authorization URL opened. */
  opened: URL[];
}

/**
 * Creates a browser stand-in. The redirect URI is never listened on: the "browser"
 * reads the AS's 302 `Location` instead of following it.
 */
export function fakeBrowser(redirectUri = "http://127.0.0.1:8765/callback"): FakeBrowser {
  const opened: URL[] = [];
  let deliver: ((result: CallbackResult | Error) => void) | undefined;
  let delivered: CallbackResult | Error | undefined;
  return {
    redirectUri,
    opened,
    async openBrowser(url) {
      opened.push(new URL(url));
      const response = await fetch(url, { redirect: "manual" });
      await response.body?.cancel();
      const location = response.headers.get("location");
      const outcome: CallbackResult | Error = location === null
        ? new Error(`authorize answered ${response.status}`)
        : callbackFrom(new URL(location));
      if (deliver) deliver(outcome);
      else delivered = outcome;
    },
    waitForCallback(expectedState) {
      return new Promise<CallbackResult>((resolve, reject) => {
        deliver = (outcome) => {
          deliver = undefined;
          if (outcome instanceof Error) reject(outcome);
          else if (outcome.state !== expectedState) reject(new Error("state mismatch"));
          else resolve(outcome);
        };
        if (delivered) {
          const d = delivered;
          delivered = undefined;
          deliver(d);
        }
      });
    },
  };
}

function callbackFrom(location: URL): CallbackResult | Error {
  const error = location.searchParams.get("error");
  if (error) return new Error(`authorization error ${error}`);
  const code = location.searchParams.get("code");
  if (!code) return new Error("no code");
  const state = location.searchParams.get("state");
  return { code, ...(state !== null ? { state } : {}) };
}

/** An in-memory registration store that counts writes. */
export interface MemoryStore extends RegistrationStore {
  entries: Map<string, ClientRegistration>;
  readonly puts: number;
}

/** Creates an in-memory registration store. */
export function memoryStore(): MemoryStore {
  const entries = new Map<string, ClientRegistration>();
  const id = (key: RegistrationKey) => `${key.serverName} ${key.issuer}`;
  let puts = 0;
  return {
    entries,
    get puts() {
      return puts;
    },
    getRegistration(key) {
      return Promise.resolve(entries.get(id(key)));
    },
    putRegistration(key, registration) {
      puts++;
      entries.set(id(key), registration);
      return Promise.resolve();
    },
  };
}

/** PEM-encodes a PKCS#8 private key. */
export async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", key));
  const b64 = btoa(String.fromCharCode(...der));
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
}
