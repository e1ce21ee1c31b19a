/**
 * A protected MCP server for the sign-in tests: a stateless Streamable HTTP endpoint on
 * 127.0.0.1 that accepts only bearer tokens issued by its own in-process fake
 * authorization server (`fake_as.ts`) for its own resource, and not yet expired or
 * revoked. Anything else gets 401 with
 * `WWW-Authenticate: Bearer resource_metadata="…"`. It publishes its protected resource
 * metadata (RFC 9728) and records every request with the bearer token it carried.
 *
 * Tools: `echo {text}`, `image` (a 1×1 PNG, for `--save-dir`), `fail500` (HTTP 500 whose
 * body quotes the request's Authorization header, as a careless server might), and
 * `tool_error` (`isError: true`).
 *
 * @module
 */

import { type FakeAs, type FakeAsOptions, startFakeAs } from "./fake_as.ts";

/** Options of {@linkcode startProtectedServer}. */
export interface ProtectedServerOptions {
  /** Options of the fake authorization server (refresh tokens rotate unless overridden). */
  as?: FakeAsOptions;
  /** `scopes_supported` of the protected resource metadata (default `["mcp:tools"]`). */
  scopes?: string[];
  /** Path of the MCP endpoint (default `/mcp`). */
  path?: string;
}

/** One request to the MCP endpoint (or its metadata). */
export interface ResourceRequest {
  method: string;
  path: string;
  /** The `Authorization` header as received, or null. */
  authorization: string | null;
  /** Every header as received (lower-case names). */
  headers: Record<string, string>;
  /** JSON-RPC method of a POST. */
  rpcMethod?: string;
  /** Status answered. */
  status: number;
}

/** A running protected server and its authorization server. */
export interface ProtectedServer {
  /** The MCP endpoint URL. */
  url: string;
  /** The resource identifier tokens must be issued for. */
  resource: string;
  /** The authorization server (its `requests`, `controls`, `mint`, …). */
  as: FakeAs;
  /** Requests to this server, in order. */
  requests: ResourceRequest[];
  /** Token requests the authorization server received with this `grant_type`. */
  grants(grantType: string): number;
  /** Makes every access token issued so far unknown (refresh tokens stay valid). */
  revokeAccessTokens(): void;
  close(): Promise<void>;
}

const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Starts the authorization server and the protected MCP server. */
export function startProtectedServer(options: ProtectedServerOptions = {}): ProtectedServer {
  const path = options.path ?? "/mcp";
  const scopes = options.scopes ?? ["mcp:tools"];
  const as = startFakeAs({
    rotateRefreshTokens: true,
    ...options.as,
    metadata: {
      token_endpoint_auth_methods_supported: [
        "none",
        "client_secret_basic",
        "client_secret_post",
        "private_key_jwt",
      ],
      token_endpoint_auth_signing_alg_values_supported: ["ES256", "RS256"],
      ...options.as?.metadata,
    },
  });
  const requests: ResourceRequest[] = [];
  let origin = "";
  const prmPath = `/.well-known/oauth-protected-resource${path}`;

  function challenge(hadToken: boolean): Response {
    const params = [
      `resource_metadata="${origin}${prmPath}"`,
      `scope="${scopes.join(" ")}"`,
      ...(hadToken ? [`error="invalid_token"`] : []),
    ];
    return new Response("unauthorized", {
      status: 401,
      headers: { "www-authenticate": `Bearer ${params.join(", ")}` },
    });
  }

  function authorized(header: string | null): boolean {
    const token = header?.match(/^Bearer (\S+)$/)?.[1];
    if (token === undefined) return false;
    const info = as.accessTokens.get(token);
    return info !== undefined && info.resource === `${origin}${path}` &&
      info.expiresAt > Date.now();
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => headers[k] = v);
    const text = request.method === "POST" ? await request.text() : "";
    let body: { method?: string; id?: string | number; params?: Record<string, unknown> } = {};
    try {
      if (text) body = JSON.parse(text);
    } catch { /* answered below */ }
    const record: ResourceRequest = {
      method: request.method,
      path: url.pathname,
      authorization: request.headers.get("authorization"),
      headers,
      ...(typeof body.method === "string" ? { rpcMethod: body.method } : {}),
      status: 0,
    };
    requests.push(record);
    const response = answer(request, url, body);
    record.status = response.status;
    return response;
  }

  function answer(
    request: Request,
    url: URL,
    body: { method?: string; id?: string | number; params?: Record<string, unknown> },
  ): Response {
    if (request.method === "GET" && url.pathname === prmPath) {
      return Response.json({
        resource: `${origin}${path}`,
        authorization_servers: [as.issuer],
        scopes_supported: scopes,
        bearer_methods_supported: ["header"],
      });
    }
    if (url.pathname !== path) return new Response("not found", { status: 404 });
    const authorization = request.headers.get("authorization");
    if (!authorized(authorization)) return challenge(authorization !== null);
    if (request.method !== "POST") return new Response("no", { status: 405 });
    if (body.method === undefined) return new Response("bad request", { status: 400 });
    if (body.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown) => Response.json({ jsonrpc: "2.0", id: body.id, result });
    switch (body.method) {
      case "initialize":
        return reply({
          protocolVersion: typeof body.params?.protocolVersion === "string"
            ? body.params.protocolVersion
            : "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "protected-fixture", version: "1.0.0" },
        });
      case "ping":
        return reply({});
      case "tools/list":
        return reply({
          tools: [
            {
              name: "echo",
              inputSchema: { type: "object", properties: { text: { type: "string" } } },
            },
            { name: "image", inputSchema: { type: "object" } },
            { name: "fail500", inputSchema: { type: "object" } },
            { name: "tool_error", inputSchema: { type: "object" } },
          ],
        });
      case "tools/call": {
        const name = body.params?.name;
        const args = (body.params?.arguments ?? {}) as Record<string, unknown>;
        if (name === "echo") {
          return reply({ content: [{ type: "text", text: String(args.text ?? "") }] });
        }
        if (name === "image") {
          return reply({ content: [{ type: "image", data: PNG_1X1, mimeType: "image/png" }] });
        }
        if (name === "fail500") {
          return new Response(`internal error while serving ${authorization}`, {
            status: 500,
            headers: { "content-type": "text/plain" },
          });
        }
        if (name === "tool_error") {
          return reply({ content: [{ type: "text", text: "it went wrong" }], isError: true });
        }
        return Response.json({
          jsonrpc: "2.0",
          id: body.id,
          error: { code: -32602, message: `unknown tool ${String(name)}` },
        });
      }
      default:
        return Response.json({
          jsonrpc: "2.0",
          id: body.id,
          error: { code: -32601, message: `Method not found: ${body.method}` },
        });
    }
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    url: `${origin}${path}`,
    resource: `${origin}${path}`,
    as,
    requests,
    grants(grantType) {
      return as.requests.filter((r) =>
        r.method === "POST" && r.path.endsWith("/token") &&
        new URLSearchParams(r.body).get("grant_type") === grantType
      ).length;
    },
    revokeAccessTokens: () => as.revokeAccessTokens(),
    async close() {
      await server.shutdown();
      await as.close();
    },
  };
}
