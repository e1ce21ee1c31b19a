/**
 * The Streamable HTTP transport (MCP 2025-03-26 and later): one POST per message,
 * answers as JSON or as an SSE stream, session ids and the protocol version header,
 * session expiry recovery (404 → re-initialize), and the optional server stream (GET).
 * The shared HTTP plumbing lives in `http_request.ts`, the streams and their
 * resumption (SEP-1699) in `http_stream.ts`.
 *
 * @module
 */

import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/types.ts";
import { ConnectionClosedError, ProtocolError, ServerError, TimeoutError } from "../../errors.ts";
import {
  abortError,
  type Clock,
  DEFAULT_CLOSE_TIMEOUT_MS,
  drainSends,
  linkSignals,
  raceAbort,
  systemClock,
} from "./abort.ts";
import { dispatchMessages, readAnswer } from "./http_answer.ts";
import { discardBody, mediaType } from "./http_body.ts";
import { EXCERPT_CHARS, HttpStatusError, messageOf, stripControl } from "./http_errors.ts";
import { type HttpRequester, openRequester } from "./http_request.ts";
import { runServerStream, type StreamContext } from "./http_stream.ts";
import { displayUrl } from "./http_url.ts";
import type {
  AuthProvider,
  JsonRpcMessage,
  JsonRpcRequest,
  SendOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";

/** Wait before resuming a stream whose server gave no `retry` value. */
export const DEFAULT_RETRY_MS = 1000;
/** Resumption attempts without progress before a request fails. */
export const DEFAULT_MAX_RECONNECTS = 3;

const SESSION_ID = /^[\x21-\x7e]+$/;

/** Options of {@linkcode HttpTransport}. */
export interface HttpTransportOptions {
  /** The MCP endpoint. */
  url: string;
  /** Extra request headers from config or `--header` (values are secrets). */
  headers?: Record<string, string> | undefined;
  /** The fetch implementation (tests inject one); default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  /** Credentials source. */
  auth?: AuthProvider | undefined;
  /** Largest JSON body or SSE event accepted; default 1 MiB. */
  maxMessageBytes?: number | undefined;
  /** Receives diagnostic lines (default: the handlers' `onLog`). */
  log?: ((line: string) => void) | undefined;
  /** Timers for retry waits and the close timeout. */
  clock?: Clock | undefined;
  /** Resumption attempts without progress before a request fails; default 3. */
  maxReconnects?: number | undefined;
  /** Wait before resuming when the server gave no `retry`; default 1000 ms. */
  defaultRetryMs?: number | undefined;
  /** Bound on the session DELETE at close; default 2000 ms. */
  closeTimeoutMs?: number | undefined;
}

/**
 * The Streamable HTTP transport.
 *
 * `send()` of a request resolves once the request's response has been passed to
 * `onMessage` (messages the server sends before it are dispatched first), or rejects
 * with a shared error when the response cannot arrive. Notifications and responses
 * resolve once the server accepted them.
 *
 * Session expiry (404 on a request that carried `Mcp-Session-Id`) is handled inside:
 * the last `initialize` is replayed under the id `reinit-N` (its response is swallowed),
 * `notifications/initialized` follows, and the message is sent once more.
 *
 * Redirects: same-origin redirects are followed (up to 5, method and body kept);
 * cross-origin redirects are refused with a ServerError naming both origins, so
 * `Authorization`, cookies and configured headers never reach another origin.
 *
 * @example
 * ```ts
 * import { HttpTransport } from "./http.ts";
 * const t = new HttpTransport({ url: "http://127.0.0.1:8080/mcp" });
 * await t.start({ onMessage: console.log, onClose: () => {} });
 * await t.close();
 * ```
 */
export class HttpTransport implements Transport {
  /** Transport kind. */
  readonly kind = "http" as const;
  /** `http: <url>` without credentials. */
  readonly description: string;
  readonly #url: URL;
  readonly #requester: HttpRequester;
  readonly #optLog: ((line: string) => void) | undefined;
  readonly #clock: Clock;
  readonly #streams: StreamContext;
  readonly #closeTimeoutMs: number;
  #handlers: TransportHandlers | undefined;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #lastInitialize: JsonRpcRequest | undefined;
  #reinitCount = 0;
  #reinit: Promise<void> | undefined;
  readonly #closing = new AbortController();
  #closed: Promise<void> | undefined;
  readonly #background = new Set<Promise<void>>();
  readonly #notifying = new Set<Promise<void>>();
  #serverStream: AbortController | undefined;

  /**
   * Checks the options; nothing is sent before the first `send`.
   *
   * @throws {ConfigError} on a URL that is not http(s) or invalid headers.
   */
  constructor(options: HttpTransportOptions) {
    this.#optLog = options.log;
    const { url, requester } = openRequester({
      url: options.url,
      headers: options.headers,
      fetch: options.fetch,
      auth: options.auth,
      log: (line) => (this.#optLog ?? this.#handlers?.onLog)?.(line),
    });
    this.#url = url;
    this.#requester = requester;
    this.description = `http: ${displayUrl(url)}`;
    this.#clock = options.clock ?? systemClock;
    this.#streams = {
      requester: this.#requester,
      url,
      clock: this.#clock,
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      maxReconnects: options.maxReconnects ?? DEFAULT_MAX_RECONNECTS,
      defaultRetryMs: options.defaultRetryMs ?? DEFAULT_RETRY_MS,
      protocolHeaders: () => this.#protocolHeaders(this.#sessionId),
    };
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
  }

  /** The current session id, if the server issued one (for diagnostics and tests). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Records the handlers; HTTP needs no connection until the first send. */
  start(handlers: TransportHandlers): Promise<void> {
    if (this.#closing.signal.aborted) {
      return Promise.reject(new ConnectionClosedError("connection is closed"));
    }
    this.#handlers = handlers;
    return Promise.resolve();
  }

  /**
   * POSTs one message. For a request, resolves after its response was dispatched.
   *
   * @throws {HttpStatusError} on a non-2xx answer (with status and body excerpt).
   * @throws {ProtocolError} on a wrong content type, bad JSON or an oversized message.
   * @throws {ConnectionClosedError} when the answer stream ended without the response.
   * @throws {AuthRequiredError} when the server wants credentials we do not have.
   */
  async send(message: JsonRpcMessage, options: SendOptions = {}): Promise<void> {
    if (this.#closing.signal.aborted) throw new ConnectionClosedError("connection is closed");
    if (options.protocolVersion !== undefined) this.#protocolVersion = options.protocolVersion;
    const signal = linkSignals(this.#closing.signal, options.signal);
    if (signal.aborted) throw abortError(signal);
    if (isRequest(message) && message.method === "initialize") this.#lastInitialize = message;
    const posting = this.#post(message, signal, { allowReinit: true, swallow: false });
    if (!isRequest(message)) this.#trackNotification(posting);
    await posting;
    if (!isRequest(message) && methodOf(message) === "notifications/initialized") {
      this.#openServerStream();
    }
  }

  /**
   * Aborts every fetch and stream, ends the session with DELETE (a 405 or any failure
   * is ignored; bounded by a short timeout), then reports `onClose()`. Idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<void> {
    await drainSends(this.#notifying, this.#closeTimeoutMs, this.#clock);
    this.#closing.abort(new ConnectionClosedError("connection closed"));
    const session = this.#sessionId;
    if (session !== undefined) {
      const timeout = new AbortController();
      const timer = this.#clock.setTimeout(
        () => timeout.abort(new TimeoutError("ending the session timed out")),
        this.#closeTimeoutMs,
      );
      try {
        const res = await this.#requester.request({
          method: "DELETE",
          url: this.#url,
          headers: this.#protocolHeaders(session),
          signal: timeout.signal,
          authRetry: false,
        });
        await discardBody(res);
        this.#log(`DELETE ${displayUrl(this.#url)}: HTTP ${res.status}`);
      } catch (e) {
        this.#log(`ending the session failed: ${messageOf(e)}`);
      } finally {
        this.#clock.clearTimeout(timer);
      }
    }
    await Promise.allSettled([...this.#background]);
    this.#handlers?.onClose();
  }

  #log(line: string): void {
    this.#requester.log(line);
  }

  #protocolHeaders(session: string | undefined, withVersion = true): Record<string, string> {
    const headers: Record<string, string> = {};
    if (session !== undefined) headers["Mcp-Session-Id"] = session;
    if (withVersion && this.#protocolVersion !== undefined) {
      headers["MCP-Protocol-Version"] = this.#protocolVersion;
    }
    return headers;
  }

  // A notification sent just before close() (notifications/cancelled after a timeout or
  // Ctrl-C) is let through before everything is aborted.
  #trackNotification(posting: Promise<unknown>): void {
    const settled = posting.then(() => {}, () => {});
    this.#notifying.add(settled);
    void settled.finally(() => this.#notifying.delete(settled));
  }

  #track(task: Promise<void>): void {
    this.#background.add(task);
    task.finally(() => this.#background.delete(task));
  }

  // One POST, with session expiry recovery. Returns the response when `swallow`.
  async #post(
    message: JsonRpcMessage,
    signal: AbortSignal,
    mode: { allowReinit: boolean; swallow: boolean },
  ): Promise<unknown> {
    const initialize = isRequest(message) && message.method === "initialize";
    const rpcMethod = methodOf(message);
    // A fresh initialize never carries the old session (nor a negotiated version).
    const session = initialize ? undefined : this.#sessionId;
    const res = await this.#requester.request({
      method: "POST",
      url: this.#url,
      headers: {
        ...this.#protocolHeaders(session, !initialize),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
      },
      body: JSON.stringify(message),
      signal,
      rpcMethod,
    });
    this.#log(
      `POST ${displayUrl(this.#url)} ${rpcMethod ?? "response"}: HTTP ${res.status}` +
        (mediaType(res) ? ` ${mediaType(res)}` : ""),
    );
    if (res.status === 404 && session !== undefined) {
      await discardBody(res);
      if (!mode.allowReinit) {
        throw new HttpStatusError(
          `session at ${displayUrl(this.#url)} not found (HTTP 404) even after re-initializing`,
          { status: 404, httpMethod: "POST", rpcMethod },
        );
      }
      await this.#reinitialize(session, signal);
      return await this.#post(message, signal, { ...mode, allowReinit: false });
    }
    if (res.status < 200 || res.status > 299) {
      throw await this.#requester.statusError(res, {
        httpMethod: "POST",
        url: this.#url,
        rpcMethod,
      });
    }
    if (initialize) await this.#takeSession(res);
    if (!isRequest(message)) {
      // Notifications and responses: 202 expected, any 2xx fine, any body ignored.
      await discardBody(res);
      return undefined;
    }
    return await readAnswer(res, {
      request: message,
      signal,
      swallow: mode.swallow,
      streams: this.#streams,
      deliver: (m) => this.#deliver(m),
      track: (task) => this.#track(task),
    });
  }

  async #takeSession(res: Response): Promise<void> {
    const id = res.headers.get("mcp-session-id");
    if (id === null) {
      this.#sessionId = undefined;
      return;
    }
    if (!SESSION_ID.test(id)) {
      await discardBody(res);
      throw new ProtocolError(
        `server ${displayUrl(this.#url)} sent an invalid Mcp-Session-Id (not visible ASCII)`,
      );
    }
    // A session id works like a bearer credential: keep it out of messages.
    this.#requester.addSecret(id);
    this.#sessionId = id;
    this.#log("session established");
  }

  // Hands one message to the owner; dispatchMessages logs a handler that throws.
  #deliver(message: object): void {
    this.#handlers?.onMessage(message);
  }

  async #reinitialize(expired: string, signal: AbortSignal): Promise<void> {
    if (this.#reinit === undefined && this.#sessionId === expired) {
      this.#reinit = this.#runReinit().finally(() => this.#reinit = undefined);
    }
    if (this.#reinit !== undefined) await raceAbort(this.#reinit, signal);
  }

  async #runReinit(): Promise<void> {
    this.#log(`session at ${displayUrl(this.#url)} expired (HTTP 404); starting a new one`);
    this.#sessionId = undefined;
    this.#serverStream?.abort();
    const init = this.#lastInitialize;
    if (init === undefined) {
      throw new ServerError(
        `session at ${displayUrl(this.#url)} expired and there is no initialize to repeat`,
      );
    }
    // Not tied to the request that found the expiry: others may be waiting on it too.
    const signal = this.#closing.signal;
    const replay: JsonRpcRequest = { ...init, id: `reinit-${++this.#reinitCount}` };
    const response = await this.#post(replay, signal, { allowReinit: false, swallow: true });
    const error = errorOf(response);
    if (error !== undefined) {
      throw new ServerError(
        this.#requester.redact(
          stripControl(`re-initializing the session failed: ${error.slice(0, EXCERPT_CHARS)}`),
        ),
      );
    }
    await this.#post(
      { jsonrpc: "2.0", method: "notifications/initialized" },
      signal,
      { allowReinit: false, swallow: false },
    );
    this.#openServerStream();
  }

  #openServerStream(): void {
    if (this.#closing.signal.aborted) return;
    this.#serverStream?.abort();
    const own = new AbortController();
    this.#serverStream = own;
    const signal = AbortSignal.any([this.#closing.signal, own.signal]);
    this.#track(
      runServerStream(this.#streams, {
        signal,
        onMessage: (parsed) =>
          dispatchMessages(parsed, { deliver: (m) => this.#deliver(m), log: (l) => this.#log(l) }),
      }).catch((e) => {
        if (!signal.aborted) this.#log(`server stream stopped: ${messageOf(e)}`);
      }),
    );
  }
}

function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return "method" in message && "id" in message && message.id !== undefined &&
    message.id !== null;
}

function methodOf(message: JsonRpcMessage): string | undefined {
  return "method" in message ? message.method : undefined;
}

function errorOf(response: unknown): string | undefined {
  if (response === null || typeof response !== "object" || !("error" in response)) {
    return undefined;
  }
  const error = response.error;
  if (error !== null && typeof error === "object" && "message" in error) {
    return String(error.message);
  }
  return "unknown error";
}
