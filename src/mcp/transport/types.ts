/**
 * The contract every transport (stdio, Streamable HTTP, legacy SSE) fulfils. The client
 * core speaks only to this interface, so callers never care which transport they got.
 *
 * @module
 */

/** A JSON-RPC id: string or integer, never null. */
export type JsonRpcId = string | number;

/** A JSON-RPC request (has an id and a method). */
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC notification (a method, no id). */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC response: `result` or `error`. */
export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

/** Any single JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** What a transport reports to its owner. */
export interface TransportHandlers {
  /** A message (already parsed, not yet validated beyond being a JSON object or array). */
  onMessage(message: unknown): void;
  /**
   * The connection ended. `error` says why when it was not a deliberate close; it is
   * one of the shared error types from `src/errors.ts` (ConnectionClosedError,
   * ServerError, TimeoutError, AuthRequiredError…), so callers never branch on transport.
   */
  onClose(error?: Error): void;
  /** A diagnostic line for `--verbose` (already free of secrets). */
  onLog?(line: string): void;
}

/** Per-send options. */
export interface SendOptions {
  /** Aborts a send in flight (HTTP: the fetch). */
  signal?: AbortSignal;
  /** The protocol version negotiated by `initialize`, once known (HTTP sends it as a header). */
  protocolVersion?: string;
}

/**
 * A bidirectional message channel to one MCP server.
 *
 * Lifecycle: `start(handlers)` once, then any number of `send`, then `close()`.
 * `close()` is idempotent and always releases every resource (child processes are reaped,
 * sockets and streams closed) before it resolves.
 */
export interface Transport {
  /** Short human description, e.g. `stdio: npx server` or `http: https://host/mcp`. */
  readonly description: string;
  /** Transport kind, for `--json` output. */
  readonly kind: "stdio" | "http" | "sse";
  /** Opens the channel (spawns the process, or prepares the HTTP client). */
  start(handlers: TransportHandlers): Promise<void>;
  /** Sends one message. Rejects with a shared error type when it cannot be delivered. */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /** Closes the channel and releases everything. Idempotent. */
  close(): Promise<void>;
  /**
   * Context to append to an error report about this connection (a timeout, a refused
   * protocol version), e.g. `; last stderr lines: …` of a stdio server; `""` if none.
   */
  errorContext?(): string;
}

/** A parsed `WWW-Authenticate: Bearer` challenge (what a 401/403 said). */
export interface BearerChallenge {
  /** The HTTP status that carried it (401 or 403). */
  status: number;
  /** Parameters such as `resource_metadata`, `scope`, `error`, lower-cased names. */
  params: Record<string, string>;
}

/**
 * Supplies credentials to HTTP transports. Implemented by `src/auth/`, wired in by the
 * server manager; transports only call it. No token ever goes anywhere but the
 * `Authorization` header of requests to the server it was issued for.
 */
export interface AuthProvider {
  /** The current `Authorization` header value (e.g. `Bearer …`), or undefined. */
  authorization(): Promise<string | undefined>;
  /**
   * Called on a 401, or a 403 with `insufficient_scope`. Resolves true when new
   * credentials were obtained and the request should be retried once; false (or a
   * thrown AuthRequiredError) otherwise.
   */
  unauthorized(challenge: BearerChallenge): Promise<boolean>;
}
