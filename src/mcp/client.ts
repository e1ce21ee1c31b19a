/**
 * The MCP client core: JSON-RPC 2.0 over any {@linkcode Transport}, the `initialize`
 * handshake, request timeouts with cancellation, progress, and server requests.
 *
 * @module
 */

import {
  ConnectionClosedError,
  InterruptedError,
  ProtocolError,
  RpcError,
  TimeoutError,
} from "../errors.ts";
import { type Clock, systemClock, type TimerId } from "../util/async.ts";
import { VERSION } from "../version.ts";
import type { JsonRpcId, JsonRpcMessage, Transport } from "./transport/types.ts";

/** The protocol version mcpctl asks for. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";

/** Versions accepted in a server's `initialize` answer. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
];

/** Default request timeout: 60 s. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** What a server said about itself in `initialize`. */
export interface ServerInfo {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version?: string; title?: string };
  instructions?: string;
}

/** A progress notification's parameters. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a {@linkcode RequestHandler} learns besides the params. */
export interface RequestContext {
  /** Name of the server that sent the request. */
  server: string;
}

/**
 * Handles one kind of server request; its result is sent back, a throw becomes an error.
 * While a handler runs (e.g. a person fills in an elicitation form) the idle timeouts of
 * this client's own requests are held; they restart in full once it has answered.
 */
export type RequestHandler = (
  params: Record<string, unknown> | undefined,
  context: RequestContext,
) => Promise<unknown>;

/** Options for {@linkcode Client}. */
export interface ClientOptions {
  /** Server name, used in messages. */
  name: string;
  /** Default per-request timeout in ms (default 60 s). */
  timeoutMs?: number;
  /** Client capabilities to declare: only those really implemented. */
  capabilities?: Record<string, unknown>;
  /** Handlers for server → client requests, by method (`ping` is built in). */
  requestHandlers?: Record<string, RequestHandler>;
  /** Called for notifications other than progress and cancellation. */
  onNotification?: (method: string, params: Record<string, unknown> | undefined) => void;
  /** Diagnostic lines for `--verbose`. */
  log?: (line: string) => void;
  /** Injected clock (tests). */
  clock?: Clock;
}

/** Options for one request. */
export interface RequestOptions {
  /** Idle timeout in ms; reset by progress when `onProgress` is given. */
  timeoutMs?: number;
  /** Hard bound on the total time in ms, never reset. */
  maxTimeMs?: number;
  /** Receives progress; asking for it adds a `progressToken`. */
  onProgress?: (progress: Progress) => void;
  /** Aborting sends `notifications/cancelled` and rejects with the signal's reason. */
  signal?: AbortSignal;
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  onProgress: ((p: Progress) => void) | undefined;
  progressToken: string | undefined;
  resetIdle: () => void;
  cleanup: () => void;
}

/**
 * One connection to one MCP server.
 *
 * @example
 * ```ts ignore
 * import { Client } from "./client.ts";
 * import { StdioTransport } from "./transport/stdio.ts";
 * const client = new Client(new StdioTransport({ name: "x", command: "server" }), { name: "x" });
 * await client.connect();
 * const tools = await client.request("tools/list", {});
 * await client.close();
 * ```
 */
export class Client {
  readonly transport: Transport;
  #opts: ClientOptions;
  #clock: Clock;
  #nextId = 1;
  #pending = new Map<JsonRpcId, Pending>();
  #byProgressToken = new Map<string, Pending>();
  #closedError: Error | undefined;
  #closing: Promise<void> | undefined;
  #server: ServerInfo | undefined;
  /** Server requests being answered right now (see RequestHandler). */
  #answering = 0;
  #lastAnsweredAt: number | undefined;

  constructor(transport: Transport, options: ClientOptions) {
    this.transport = transport;
    this.#opts = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** The server's `initialize` answer, once connected. */
  get server(): ServerInfo | undefined {
    return this.#server;
  }

  /** Whether the connection has ended (a closed client is never reused). */
  get closed(): boolean {
    return this.#closedError !== undefined;
  }

  /** Starts the transport, runs `initialize`, checks the version, sends `initialized`. */
  async connect(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ServerInfo> {
    await this.transport.start({
      onMessage: (m) => this.#receive(m),
      onClose: (e) => this.#onClosed(e),
      onLog: (line) => this.#log(line),
    });
    const result = await this.request("initialize", {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: this.#opts.capabilities ?? {},
      clientInfo: { name: "mcpctl", version: VERSION },
    }, options);
    const info = parseInitializeResult(result);
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(info.protocolVersion)) {
      const error = new ProtocolError(
        `server "${this.#opts.name}" answered protocol version ${
          JSON.stringify(info.protocolVersion)
        }; mcpctl asked for ${LATEST_PROTOCOL_VERSION} and supports ${
          SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        }${this.transport.errorContext?.() ?? ""}`,
      );
      await this.close();
      throw error;
    }
    this.#server = info;
    await this.notify("notifications/initialized");
    return info;
  }

  /**
   * Sends a request and waits for its result. On timeout the request is cancelled
   * (`notifications/cancelled`) and the connection closed: it is never reused.
   */
  request(
    method: string,
    params?: Record<string, unknown>,
    options: RequestOptions = {},
  ): Promise<unknown> {
    if (this.#closedError) return Promise.reject(this.#closedError);
    const id = this.#nextId++;
    const timeoutMs = options.timeoutMs ?? this.#opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const progressToken = options.onProgress ? `mcpctl-${id}` : undefined;
    const sentParams = progressToken
      ? { ...params, _meta: { ...(params?._meta as object | undefined), progressToken } }
      : params;

    return new Promise<unknown>((resolve, reject) => {
      // Aborted when the request ends unanswered, so an HTTP fetch in flight stops too.
      const inFlight = new AbortController();
      let idle: TimerId | undefined;
      let total: TimerId | undefined;
      const clock = this.#clock;
      const onAbort = () => {
        const reason = options.signal?.reason;
        this.#cancel(id, "cancelled by the user");
        entry.reject(reason instanceof Error ? reason : new InterruptedError("interrupted"));
      };
      const expire = (what: string, ms: number) => {
        const error = new TimeoutError(
          `server "${this.#opts.name}" did not answer ${method} within ${formatMs(ms)}${what}` +
            (this.transport.errorContext?.() ?? ""),
          { hint: "raise the limit with --timeout MS" },
        );
        if (method !== "initialize") this.#cancel(id, "timeout");
        entry.reject(error);
        // A timed-out connection is never reused.
        void this.close();
      };
      const entry: Pending = {
        method,
        onProgress: options.onProgress,
        progressToken,
        resolve: (v) => {
          entry.cleanup();
          resolve(v);
        },
        reject: (e) => {
          entry.cleanup();
          inFlight.abort(e);
          reject(e);
        },
        resetIdle: () => {
          if (idle !== undefined) clock.clearTimeout(idle);
          idle = clock.setTimeout(
            () => this.#answering > 0 ? entry.resetIdle() : expire("", timeoutMs),
            timeoutMs,
          );
        },
        cleanup: () => {
          if (idle !== undefined) clock.clearTimeout(idle);
          if (total !== undefined) clock.clearTimeout(total);
          options.signal?.removeEventListener("abort", onAbort);
          this.#pending.delete(id);
          if (progressToken) this.#byProgressToken.delete(progressToken);
        },
      };
      this.#pending.set(id, entry);
      if (progressToken) this.#byProgressToken.set(progressToken, entry);
      entry.resetIdle();
      if (options.maxTimeMs !== undefined) {
        const max = options.maxTimeMs;
        total = clock.setTimeout(() => expire(" (--max-time)", max), max);
      }
      if (options.signal) {
        if (options.signal.aborted) return onAbort();
        options.signal.addEventListener("abort", onAbort, { once: true });
      }
      const message: JsonRpcMessage = {
        jsonrpc: "2.0",
        id,
        method,
        ...(sentParams ? { params: sentParams } : {}),
      };
      this.#log(`→ ${method} #${id}`);
      this.transport.send(message, { ...this.#sendOptions(), signal: inFlight.signal }).catch(
        (e) => {
          if (this.#pending.has(id)) entry.reject(asError(e));
        },
      );
    });
  }

  /** Sends a notification. */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.#closedError) throw this.#closedError;
    this.#log(`→ ${method}`);
    await this.transport.send(
      { jsonrpc: "2.0", method, ...(params ? { params } : {}) },
      this.#sendOptions(),
    );
  }

  /** Closes the transport; pending requests fail with ConnectionClosedError. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#onClosed(undefined);
      await this.transport.close();
    })();
    return this.#closing;
  }

  #sendOptions() {
    return this.#server ? { protocolVersion: this.#server.protocolVersion } : {};
  }

  #cancel(id: JsonRpcId, reason: string): void {
    if (this.#closedError) return;
    this.transport.send(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } },
      this.#sendOptions(),
    ).catch(() => {});
  }

  #onClosed(error: Error | undefined): void {
    if (this.#closedError) return;
    this.#closedError = error ??
      new ConnectionClosedError(`connection to server "${this.#opts.name}" is closed`);
    for (const p of [...this.#pending.values()]) p.reject(this.#closedError);
  }

  #log(line: string): void {
    this.#opts.log?.(line);
  }

  #receive(message: unknown): void {
    if (Array.isArray(message)) {
      // 2025-03-26 servers may send batches.
      for (const m of message) this.#receive(m);
      return;
    }
    if (message === null || typeof message !== "object") {
      this.#log("ignored a message that is not an object");
      return;
    }
    const m = message as Record<string, unknown>;
    const method = m.method;
    const hasId = typeof m.id === "string" || typeof m.id === "number";
    if (typeof method === "string") {
      const params = isRecord(m.params) ? m.params : undefined;
      if (hasId) void this.#answer(m.id as JsonRpcId, method, params);
      else this.#notification(method, params);
      return;
    }
    if (hasId && ("result" in m || "error" in m)) {
      const pending = this.#pending.get(m.id as JsonRpcId);
      if (!pending) {
        this.#log(`ignored a response to unknown or finished request ${JSON.stringify(m.id)}`);
        return;
      }
      this.#log(`← ${pending.method} #${String(m.id)}`);
      if ("error" in m && m.error !== undefined) {
        const e = isRecord(m.error) ? m.error : {};
        const code = typeof e.code === "number" ? e.code : -32603;
        const msg = typeof e.message === "string" ? e.message : "unknown error";
        pending.reject(new RpcError(code, msg, e.data));
      } else {
        pending.resolve(m.result);
      }
      return;
    }
    this.#log("ignored a message that is neither request, notification nor response");
  }

  #notification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === "notifications/progress" && params) {
      const token = params.progressToken;
      const pending = typeof token === "string" || typeof token === "number"
        ? this.#byProgressToken.get(String(token))
        : undefined;
      if (pending && typeof params.progress === "number") {
        pending.resetIdle();
        pending.onProgress?.({
          progress: params.progress,
          ...(typeof params.total === "number" ? { total: params.total } : {}),
          ...(typeof params.message === "string" ? { message: params.message } : {}),
        });
      }
      return;
    }
    this.#log(`← ${method}`);
    this.#opts.onNotification?.(method, params);
  }

  async #answer(
    id: JsonRpcId,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<void> {
    this.#log(`← request ${method}`);
    const handler = method === "ping"
      ? () => Promise.resolve({})
      : this.#opts.requestHandlers?.[method];
    let reply: JsonRpcMessage;
    if (!handler) {
      reply = {
        jsonrpc: "2.0",
        id,
        error: { code: -32601, message: `Method not found: ${method}` },
      };
    } else {
      // A person may take a while; a ping answers at once and must not extend anything.
      const held = method !== "ping";
      if (held) this.#answering++;
      try {
        reply = { jsonrpc: "2.0", id, result: await handler(params, { server: this.#opts.name }) };
      } catch (e) {
        const code = e instanceof RpcError ? e.code : -32603;
        const message = e instanceof RpcError
          ? e.rpcMessage
          : e instanceof Error
          ? e.message
          : String(e);
        reply = { jsonrpc: "2.0", id, error: { code, message } };
      } finally {
        if (held) this.#answering--;
      }
      if (held) { for (const p of this.#pending.values()) p.resetIdle(); }
    }
    if (this.#closedError) return;
    await this.transport.send(reply, this.#sendOptions()).catch(() => {});
    if (method !== "ping") this.#lastAnsweredAt = this.#clock.now();
  }

  /**
   * Lets the server finish acting on what it asked for. A server that asks for
   * `roots/list` right after `initialized` applies the answer asynchronously; a tool
   * call sent the same instant can race it. When the server asked something other than
   * `ping` (and only then), this waits until those answers are `ms` old.
   */
  async settle(ms = 50): Promise<void> {
    while (this.#answering > 0) await new Promise((r) => setTimeout(r, 5));
    if (this.#lastAnsweredAt === undefined) return;
    const wait = this.#lastAnsweredAt + ms - this.#clock.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

function parseInitializeResult(result: unknown): ServerInfo {
  if (!isRecord(result) || typeof result.protocolVersion !== "string") {
    throw new ProtocolError("the server's initialize answer has no protocolVersion");
  }
  const serverInfo = isRecord(result.serverInfo) ? result.serverInfo : {};
  return {
    protocolVersion: result.protocolVersion,
    capabilities: isRecord(result.capabilities) ? result.capabilities : {},
    serverInfo: {
      name: typeof serverInfo.name === "string" ? serverInfo.name : "unknown",
      ...(typeof serverInfo.version === "string" ? { version: serverInfo.version } : {}),
      ...(typeof serverInfo.title === "string" ? { title: serverInfo.title } : {}),
    },
    ...(typeof result.instructions === "string" ? { instructions: result.instructions } : {}),
  };
}

/** True for a plain JSON object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Formats a duration for messages: `1.5 s`, `250 ms`. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${Number((ms / 1000).toFixed(1))} s` : `${ms} ms`;
}
