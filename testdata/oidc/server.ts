/**
 * A real OAuth 2.1 authorization server and an MCP server it protects, for end-to-end
 * sign-in tests. Everything listens on 127.0.0.1, on ports chosen by the system.
 *
 * The authorization server is npm `oidc-provider` (a certified OpenID provider) with:
 * - dynamic client registration (RFC 7591), open (no initial access token);
 * - PKCE required for every client (S256, the only method it supports);
 * - resource indicators (RFC 8707): tokens are issued only for the MCP endpoints below,
 *   and a request without `resource` gets a token the MCP server refuses;
 * - refresh tokens for every client allowed the `refresh_token` grant (public clients
 *   included), rotated on each use;
 * - opaque access tokens with a configurable lifetime, checked by the MCP server through
 *   token introspection (RFC 7662), so a revoked grant takes effect at once;
 * - its own login page (user name and password, checked) and consent page (Allow / Deny)
 *   at `/interaction/<uid>`; with `autoApprove` both are skipped for that user, as if a
 *   session and a consent already existed (for scripted "browsers" such as curl).
 *
 * The MCP server (Streamable HTTP, JSON answers, no sessions) serves `/mcp` and
 * `/v2/mcp`, two distinct protected resources. Without a valid token for the very
 * endpoint it answers 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, and it
 * publishes `/.well-known/oauth-protected-resource/<path>` naming the authorization
 * server. It has one tool, `whoami`, that says whose token was used.
 *
 * Test controls, on the MCP server's origin: `GET /_test/stats` (what happened so far)
 * and `POST /_test/revoke` (revokes every grant, as a user would from an account page).
 *
 * Run standalone: `deno run -A testdata/oidc/server.ts [--access-token-ttl S]
 * [--auto-approve USER]`; the first stdout line is a JSON {@linkcode OidcStackInfo}. It
 * stops on SIGINT, SIGTERM or when stdin ends.
 *
 * @module
 */

import { errors, Provider } from "oidc-provider";
import http from "node:http";
import { generateKeyPairSync, randomBytes } from "node:crypto";

/** The one user the authorization server knows. */
export const TEST_USER = "alice";
/** Her password. */
export const TEST_PASSWORD = "correct horse battery staple";
/** The scope the MCP server requires. */
export const MCP_SCOPE = "mcp:tools";
/** Paths of the MCP endpoints; each is its own protected resource. */
export const MCP_PATHS = ["/mcp", "/v2/mcp"] as const;

const RESOURCE_SERVER_CLIENT = "mcp-resource-server";

/** Options of {@linkcode startOidcStack}. */
export interface OidcStackOptions {
  /** Access token lifetime in seconds (default 300). */
  accessTokenTtl?: number;
  /** Finish every login and consent at once as this user, without a page. */
  autoApprove?: string;
}

/** Where the servers are, as printed by the standalone server. */
export interface OidcStackInfo {
  /** The authorization server's issuer, e.g. `http://127.0.0.1:1234`. */
  issuer: string;
  /** The MCP endpoints, in {@linkcode MCP_PATHS} order. */
  mcpUrls: string[];
  /** Origin of the MCP server (and of the `/_test/` controls). */
  mcpOrigin: string;
  /** Login of the test user. */
  user: string;
  /** Password of the test user. */
  password: string;
  /** Access token lifetime in seconds. */
  accessTokenTtl: number;
}

/** One token endpoint request, as the authorization server handled it. */
export interface TokenRequestRecord {
  grantType: string;
  clientId: string | undefined;
  /** The `resource` parameter sent, if any. */
  resource: string | undefined;
  /** OAuth error answered, when the request failed. */
  error?: string;
}

/** What happened so far (`GET /_test/stats`). */
export interface OidcStackStats {
  tokenRequests: TokenRequestRecord[];
  /** Client ids registered dynamically. */
  registrations: string[];
  /** Login attempts on the login page, with their outcome. */
  logins: Array<{ user: string; ok: boolean }>;
  /** Consent decisions. */
  consents: Array<"allowed" | "denied">;
  /** Grants alive now. */
  activeGrants: number;
  /** Grants revoked through `/_test/revoke`. */
  revokedGrants: number;
  /** MCP requests, by outcome. */
  mcp: { authorized: number; refused: number };
}

/** A running stack. */
export interface OidcStack extends OidcStackInfo {
  stats(): OidcStackStats;
  /** Revokes every grant and every token issued under it; returns how many grants. */
  revokeAllGrants(): number;
  close(): Promise<void>;
}

interface Introspected {
  sub: string;
  clientId: string;
  scopes: string[];
}

interface StoredPayload {
  payload: Record<string, unknown>;
  expiresAt: number | undefined;
}

/** Starts the authorization server and the MCP server. */
export async function startOidcStack(options: OidcStackOptions = {}): Promise<OidcStack> {
  const accessTokenTtl = options.accessTokenTtl ?? 300;
  const stats: OidcStackStats = {
    tokenRequests: [],
    registrations: [],
    logins: [],
    consents: [],
    activeGrants: 0,
    revokedGrants: 0,
    mcp: { authorized: 0, refused: 0 },
  };

  // oidc-provider's storage: one map per model (AccessToken, Grant, Session, …).
  const models = new Map<string, Map<string, StoredPayload>>();
  const modelStore = (name: string) => {
    let store = models.get(name);
    if (!store) models.set(name, store = new Map());
    return store;
  };
  const live = (store: Map<string, StoredPayload>, id: string) => {
    const entry = store.get(id);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      store.delete(id);
      return undefined;
    }
    return entry;
  };
  class MemoryAdapter {
    readonly #store: Map<string, StoredPayload>;
    constructor(name: string) {
      this.#store = modelStore(name);
    }
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> {
      this.#store.set(id, {
        payload: structuredClone(payload),
        expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined,
      });
      return Promise.resolve();
    }
    find(id: string): Promise<Record<string, unknown> | undefined> {
      const entry = live(this.#store, id);
      return Promise.resolve(entry ? structuredClone(entry.payload) : undefined);
    }
    findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
      return this.#findBy("uid", uid);
    }
    findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined> {
      return this.#findBy("userCode", userCode);
    }
    consume(id: string): Promise<void> {
      const entry = live(this.#store, id);
      if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    }
    destroy(id: string): Promise<void> {
      this.#store.delete(id);
      return Promise.resolve();
    }
    revokeByGrantId(grantId: string): Promise<void> {
      for (const [id, entry] of this.#store) {
        if (entry.payload.grantId === grantId) this.#store.delete(id);
      }
      return Promise.resolve();
    }
    #findBy(field: string, value: string): Promise<Record<string, unknown> | undefined> {
      for (const [id, entry] of this.#store) {
        if (entry.payload[field] === value && live(this.#store, id)) {
          return Promise.resolve(structuredClone(entry.payload));
        }
      }
      return Promise.resolve(undefined);
    }
  }

  // Ports first: the issuer and the resource URLs contain them.
  const asServer = http.createServer();
  await new Promise<void>((resolve) => asServer.listen(0, "127.0.0.1", resolve));
  const asPort = (asServer.address() as { port: number }).port;
  const issuer = `http://127.0.0.1:${asPort}`;

  let mcpHandler: (request: Request) => Promise<Response> = () =>
    Promise.resolve(new Response("starting", { status: 503 }));
  const mcpServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => mcpHandler(request),
  );
  const mcpOrigin = `http://127.0.0.1:${mcpServer.addr.port}`;
  const mcpUrls = MCP_PATHS.map((p) => `${mcpOrigin}${p}`);
  const resourceServerSecret = randomBytes(24).toString("base64url");

  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: "jwk" }), use: "sig", alg: "RS256" };

  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    clients: [{
      client_id: RESOURCE_SERVER_CLIENT,
      client_secret: resourceServerSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    }],
    scopes: ["openid", "offline_access"],
    // OAuth 2.1: the code flow only.
    responseTypes: ["code"],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      introspection: {
        enabled: true,
        // Only the MCP server may ask what a token is worth.
        allowedPolicy: (_ctx: unknown, client: { clientId: string }) =>
          client.clientId === RESOURCE_SERVER_CLIENT,
      },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (!mcpUrls.includes(resource)) {
            throw new errors.InvalidTarget(`unknown resource ${resource}`);
          }
          return {
            scope: MCP_SCOPE,
            audience: resource,
            accessTokenTTL: accessTokenTtl,
            accessTokenFormat: "opaque",
          };
        },
      },
    },
    // Refresh tokens for every client that registered the refresh_token grant, whether
    // or not it asked for offline_access; they outlive the browser session.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(g: string): boolean }) =>
      client.grantTypeAllowed("refresh_token"),
    expiresWithSession: () => false,
    ttl: { AccessToken: accessTokenTtl },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub }),
    }),
    renderError: (ctx: { type: string; body: string }, out: Record<string, string>) => {
      ctx.type = "html";
      ctx.body = pageHtml(
        "Error",
        `<h1>Error</h1><p id="error">${escapeHtml(out.error ?? "")}: ${
          escapeHtml(out.error_description ?? "")
        }</p>`,
      );
    },
  });

  type Ctx = { oidc: { params?: Record<string, unknown>; client?: { clientId: string } } };
  const recordToken = (ctx: Ctx, error?: string) => {
    const params = ctx.oidc.params ?? {};
    stats.tokenRequests.push({
      grantType: String(params.grant_type),
      clientId: ctx.oidc.client?.clientId ?? stringOrUndefined(params.client_id),
      resource: stringOrUndefined(params.resource),
      ...(error !== undefined ? { error } : {}),
    });
  };
  provider.on("grant.success", (ctx: Ctx) => recordToken(ctx));
  provider.on("grant.error", (ctx: Ctx, error: { error?: string }) => {
    recordToken(ctx, error.error ?? "server_error");
  });
  provider.on("registration_create.success", (_ctx: unknown, client: { clientId: string }) => {
    stats.registrations.push(client.clientId);
  });

  const callback = provider.callback();
  asServer.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    const match = path.match(/^\/interaction\/([\w-]+)(?:\/(login|confirm|abort))?$/);
    if (!match) {
      callback(req, res);
      return;
    }
    interaction(req, res, match[1]!, match[2]).catch((error) => {
      if (!res.headersSent) {
        res.statusCode = 400;
        res.setHeader("content-type", "text/html; charset=utf-8");
      }
      res.end(pageHtml("Error", `<h1>Error</h1><p id="error">${escapeHtml(String(error))}</p>`));
    });
  });

  type Details = {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
  };

  async function interaction(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    uid: string,
    action: string | undefined,
  ): Promise<void> {
    const details: Details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error("this sign-in page belongs to another request");
    const client = await provider.Client.find(String(details.params.client_id));
    const clientName = String(client?.clientName ?? details.params.client_id);
    const send = (html: string) => {
      res.statusCode = 200;
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.setHeader("cache-control", "no-store");
      res.end(html);
    };

    if (options.autoApprove !== undefined && req.method === "GET") {
      if (details.prompt.name === "login") {
        stats.logins.push({ user: options.autoApprove, ok: true });
        await provider.interactionFinished(req, res, {
          login: { accountId: options.autoApprove },
        }, { mergeWithLastSubmission: false });
      } else {
        await consent(req, res, details);
      }
      return;
    }

    if (req.method === "GET" && action === undefined) {
      send(
        details.prompt.name === "login"
          ? loginPage(uid, clientName, undefined)
          : consentPage(uid, clientName, details),
      );
      return;
    }
    if (req.method !== "POST") throw new Error("unexpected request");
    const form = new URLSearchParams(await readBody(req));
    if (action === "login" && details.prompt.name === "login") {
      const user = form.get("username") ?? "";
      const ok = user === TEST_USER && form.get("password") === TEST_PASSWORD;
      stats.logins.push({ user, ok });
      if (!ok) {
        send(loginPage(uid, clientName, "Wrong user name or password."));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: user } }, {
        mergeWithLastSubmission: false,
      });
    } else if (action === "confirm" && details.prompt.name === "consent") {
      await consent(req, res, details);
    } else if (action === "abort") {
      stats.consents.push("denied");
      await provider.interactionFinished(req, res, {
        error: "access_denied",
        error_description: "the user denied access",
      }, { mergeWithLastSubmission: false });
    } else {
      throw new Error(`unexpected ${action} during ${details.prompt.name}`);
    }
  }

  async function consent(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    details: Details,
  ): Promise<void> {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({
        accountId: details.session?.accountId,
        clientId: details.params.client_id,
      });
    const missing = details.prompt.details;
    if (Array.isArray(missing.missingOIDCScope)) {
      grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    }
    if (Array.isArray(missing.missingOIDCClaims)) grant.addOIDCClaims(missing.missingOIDCClaims);
    const resourceScopes = missing.missingResourceScopes as Record<string, string[]> | undefined;
    for (const [resource, scopes] of Object.entries(resourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    const grantId = await grant.save();
    stats.consents.push("allowed");
    await provider.interactionFinished(req, res, { consent: { grantId } }, {
      mergeWithLastSubmission: true,
    });
  }

  function revokeAllGrants(): number {
    const grants = [...modelStore("Grant").keys()];
    for (const grantId of grants) {
      for (const [name, store] of models) {
        if (name === "Grant") continue;
        for (const [id, entry] of store) {
          if (entry.payload.grantId === grantId) store.delete(id);
        }
      }
      modelStore("Grant").delete(grantId);
    }
    stats.revokedGrants += grants.length;
    return grants.length;
  }

  /** Introspects `token` (RFC 7662); `undefined` unless it is active for `resource`. */
  async function introspect(token: string, resource: string): Promise<Introspected | undefined> {
    const response = await fetch(`${issuer}/token/introspection`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${RESOURCE_SERVER_CLIENT}:${resourceServerSecret}`)}`,
      },
      body: new URLSearchParams({ token, token_type_hint: "access_token" }),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const info = await response.json();
    const audiences = Array.isArray(info.aud) ? info.aud : [info.aud];
    if (
      info.active !== true || info.iss !== issuer || info.token_type !== "Bearer" ||
      !audiences.includes(resource)
    ) return undefined;
    return {
      sub: String(info.sub),
      clientId: String(info.client_id),
      scopes: typeof info.scope === "string" ? info.scope.split(" ") : [],
    };
  }

  mcpHandler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname === "/_test/stats") {
      return Response.json({ ...stats, activeGrants: modelStore("Grant").size });
    }
    if (url.pathname === "/_test/revoke" && request.method === "POST") {
      return Response.json({ revoked: revokeAllGrants() });
    }
    const prmPrefix = "/.well-known/oauth-protected-resource";
    if (request.method === "GET" && url.pathname.startsWith(prmPrefix)) {
      const resourcePath = url.pathname.slice(prmPrefix.length);
      if (!(MCP_PATHS as readonly string[]).includes(resourcePath)) {
        return new Response("not found", { status: 404 });
      }
      return Response.json({
        resource: `${mcpOrigin}${resourcePath}`,
        authorization_servers: [issuer],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ["header"],
        resource_name: "oidc-protected test server",
      });
    }
    if (!(MCP_PATHS as readonly string[]).includes(url.pathname)) {
      return new Response("not found", { status: 404 });
    }
    const resource = `${mcpOrigin}${url.pathname}`;
    const metadata = `${mcpOrigin}${prmPrefix}${url.pathname}`;
    const auth = request.headers.get("authorization") ?? "";
    const token = /^Bearer +(\S+)$/i.exec(auth)?.[1];
    const introspected = token === undefined ? undefined : await introspect(token, resource);
    const verdict = token === undefined
      ? "missing"
      : introspected === undefined
      ? "invalid"
      : introspected.scopes.includes(MCP_SCOPE)
      ? "ok"
      : "scope";
    if (verdict !== "ok" || introspected === undefined) {
      stats.mcp.refused++;
      await request.body?.cancel();
      const error = verdict === "missing"
        ? ""
        : verdict === "scope"
        ? `error="insufficient_scope", `
        : `error="invalid_token", `;
      return new Response(null, {
        status: verdict === "scope" ? 403 : 401,
        headers: {
          "www-authenticate":
            `Bearer ${error}scope="${MCP_SCOPE}", resource_metadata="${metadata}"`,
        },
      });
    }
    stats.mcp.authorized++;
    if (request.method !== "POST") {
      await request.body?.cancel();
      return new Response(null, { status: 405, headers: { allow: "POST" } });
    }
    let message: { id?: unknown; method?: unknown; params?: Record<string, unknown> };
    try {
      message = await request.json();
    } catch {
      return rpcError(null, -32700, "parse error");
    }
    if (message.id === undefined) return new Response(null, { status: 202 });
    switch (message.method) {
      case "initialize": {
        const asked = message.params?.protocolVersion;
        return rpcResult(message.id, {
          protocolVersion: typeof asked === "string" ? asked : "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "oidc-protected", version: "1.0.0" },
        });
      }
      case "ping":
        return rpcResult(message.id, {});
      case "tools/list":
        return rpcResult(message.id, {
          tools: [{
            name: "whoami",
            description: "Says whose token was used, and for which resource",
            inputSchema: { type: "object", properties: {} },
          }],
        });
      case "tools/call":
        if (message.params?.name !== "whoami") {
          return rpcError(message.id, -32602, "unknown tool");
        }
        return rpcResult(message.id, {
          content: [{
            type: "text",
            text: `${introspected.sub} via ${introspected.clientId} at ${resource}`,
          }],
        });
      default:
        return rpcError(message.id, -32601, "method not found");
    }
  };

  return {
    issuer,
    mcpUrls,
    mcpOrigin,
    user: TEST_USER,
    password: TEST_PASSWORD,
    accessTokenTtl,
    stats: () => structuredClone({ ...stats, activeGrants: modelStore("Grant").size }),
    revokeAllGrants,
    async close() {
      asServer.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => asServer.close(() => resolve())),
        mcpServer.shutdown(),
      ]);
    },
  };
}

function rpcResult(id: unknown, result: unknown): Response {
  return Response.json({ jsonrpc: "2.0", id, result });
}

function rpcError(id: unknown, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } });
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    req.on("end", () => resolve(new TextDecoder().decode(concat(chunks))));
    req.on("error", reject);
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function pageHtml(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><main>${body}</main></body></html>
`;
}

function loginPage(uid: string, clientName: string, error: string | undefined): string {
  return pageHtml(
    "Sign in — test identity provider",
    `<h1>Sign in</h1>
<p>to continue to <b id="client">${escapeHtml(clientName)}</b></p>
${error ? `<p id="error" role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
  <label for="username">User name</label>
  <input id="username" name="username" type="text" required>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" required>
  <button id="sign-in" type="submit">Sign in</button>
</form>`,
  );
}

function consentPage(
  uid: string,
  clientName: string,
  details: { params: Record<string, unknown>; session?: { accountId?: string } },
): string {
  const scope = String(details.params.scope ?? "");
  const resource = String(details.params.resource ?? "");
  return pageHtml(
    "Allow access? — test identity provider",
    `<h1>Allow access?</h1>
<p><b id="client">${escapeHtml(clientName)}</b> asks to act as
<b id="account">${escapeHtml(details.session?.accountId ?? "")}</b> on
<code id="resource">${escapeHtml(resource)}</code>.</p>
<p>Scope: <code id="scope">${escapeHtml(scope)}</code></p>
<form method="post" action="/interaction/${escapeHtml(uid)}/confirm">
  <button id="allow" type="submit">Allow</button>
</form>
<form method="post" action="/interaction/${escapeHtml(uid)}/abort">
  <button id="deny" type="submit">Deny</button>
</form>`,
  );
}

function parseCli(args: string[]): OidcStackOptions {
  const options: OidcStackOptions = {};
  for (let i = 0; i < args.length; i++) {
    const value = args[i + 1];
    if (args[i] === "--access-token-ttl" && value !== undefined) {
      options.accessTokenTtl = Number(value);
      i++;
    } else if (args[i] === "--auto-approve" && value !== undefined) {
      options.autoApprove = value;
      i++;
    } else {
      throw new Error(`unknown argument ${args[i]}`);
    }
  }
  return options;
}

if (import.meta.main) {
  const stack = await startOidcStack(parseCli(Deno.args));
  const info: OidcStackInfo = {
    issuer: stack.issuer,
    mcpUrls: stack.mcpUrls,
    mcpOrigin: stack.mcpOrigin,
    user: stack.user,
    password: stack.password,
    accessTokenTtl: stack.accessTokenTtl,
  };
  console.log(JSON.stringify(info));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stack.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  // The test closes stdin to stop the servers; so does its death.
  (async () => {
    for await (const _ of Deno.stdin.readable) { /* ignore input */ }
    await stop();
  })();
}
