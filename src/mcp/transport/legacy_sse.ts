/**
 * The legacy HTTP+SSE transport of MCP 2024-11-05: a long-lived GET event stream whose
 * first `endpoint` event names the URL to POST messages to; replies arrive on the
 * stream as `message` events. Also the policy deciding when to fall back to it.
 *
 * @module
 */

import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/types.ts";
import { ConnectionClosedError, McpctlError, ProtocolError, TimeoutError } from "../../errors.ts";
import {
  abortError,
  type Clock,
  DEFAULT_CLOSE_TIMEOUT_MS,
  drainSends,
  linkSignals,
  raceAbort,
  systemClock,
} from "./abort.ts";
import { discardBody, mediaType, parseJson } from "./http_body.ts";
import { HttpStatusError } from "./http_errors.ts";
import { type HttpRequester, openRequester } from "./http_request.ts";
import { displayUrl, sameOrigin } from "./http_url.ts";
import { SseDecoder, SseTooLargeError } from "./sse.ts";
import type {
  AuthProvider,
  JsonRpcMessage,
  SendOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";

/** How long `start()` waits for the `endpoint` event by default. */
export const DEFAULT_ENDPOINT_TIMEOUT_MS = 10_000;

/**
 * True when a Streamable HTTP attempt failed in the way a 2024-11-05 server fails: the
 * POST carrying `initialize` was answered 400, 404 or 405. Never for 401/403 (that is
 * an auth matter) nor for network failures.
 *
 * @example
 * ```ts
 * import { shouldFallBackToSse } from "./legacy_sse.ts";
 * import { HttpStatusError } from "./http_errors.ts";
 * const e = new HttpStatusError("x", { status: 405, httpMethod: "POST", rpcMethod: "initialize" });
 * shouldFallBackToSse(e); // true
 * ```
 */
export function shouldFallBackToSse(error: unknown): boolean {
  return error instanceof HttpStatusError && error.httpMethod === "POST" &&
    error.rpcMethod === "initialize" && [400, 404, 405].includes(error.status);
}

/** Options of {@linkcode LegacySseTransport}. */
export interface LegacySseTransportOptions {
  /** The SSE endpoint (GET). */
  url: string;
  /** Extra request headers (values are secrets). */
  headers?: Record<string, string> | undefined;
  /** The fetch implementation; default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  /** Credentials source. */
  auth?: AuthProvider | undefined;
  /** Largest SSE event accepted; default 1 MiB. */
  maxMessageBytes?: number | undefined;
  /** Receives diagnostic lines (default: the handlers' `onLog`). */
  log?: ((line: string) => void) | undefined;
  /** How long to wait for the `endpoint` event; default 10 s. */
  endpointTimeoutMs?: number | undefined;
  /** Timers for the endpoint wait. */
  clock?: Clock | undefined;
}

/**
 * The 2024-11-05 HTTP+SSE transport. `start()` resolves once the `endpoint` event
 * arrived; the endpoint must be on the same origin as the SSE URL, so credentials
 * never go to a host the user did not configure. The end of the event stream ends the
 * connection: `onClose(ConnectionClosedError)`.
 *
 * @example
 * ```ts
 * import { LegacySseTransport } from "./legacy_sse.ts";
 * const t = new LegacySseTransport({ url: "http://127.0.0.1:8080/sse" });
 * await t.start({ onMessage: console.log, onClose: () => {} });
 * await t.close();
 * ```
 */
export class LegacySseTransport implements Transport {
  /** Transport kind. */
  readonly kind = "sse" as const;
  /** `sse: <url>` without credentials. */
  readonly description: string;
  readonly #url: URL;
  readonly #requester: HttpRequester;
  readonly #optLog: ((line: string) => void) | undefined;
  readonly #max: number;
  readonly #endpointTimeoutMs: number;
  readonly #clock: Clock;
  #handlers: TransportHandlers | undefined;
  #endpoint: URL | undefined;
  readonly #closing = new AbortController();
  #reading: Promise<void> | undefined;
  #closed: Promise<void> | undefined;
  #reported = false;
  readonly #notifying = new Set<Promise<void>>();
  #endpointWaiter: { resolve(url: URL): void; reject(error: Error): void } | undefined;

  /**
   * Checks the options; nothing is sent before `start`.
   *
   * @throws {ConfigError} on a URL that is not http(s) or invalid headers.
   */
  constructor(options: LegacySseTransportOptions) {
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
    this.description = `sse: ${displayUrl(url)}`;
    this.#max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#endpointTimeoutMs = options.endpointTimeoutMs ?? DEFAULT_ENDPOINT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Opens the event stream and waits for the `endpoint` event. On failure everything
   * is released and the error is thrown (no `onClose`).
   *
   * @throws {HttpStatusError} when the GET is answered non-2xx.
   * @throws {ProtocolError} on a wrong content type or a cross-origin endpoint.
   * @throws {TimeoutError} when no endpoint arrives in time.
   */
  async start(handlers: TransportHandlers): Promise<void> {
    if (this.#closing.signal.aborted || this.#reading !== undefined) {
      throw new ConnectionClosedError("transport already started or closed");
    }
    this.#handlers = handlers;
    // The timeout bounds the whole opening (a GET that never answers included).
    const timeout = new AbortController();
    const timer = this.#clock.setTimeout(() => {
      timeout.abort(
        new TimeoutError(
          `server ${displayUrl(this.#url)} sent no endpoint event within ` +
            `${this.#endpointTimeoutMs} ms`,
        ),
      );
    }, this.#endpointTimeoutMs);
    const signal = AbortSignal.any([this.#closing.signal, timeout.signal]);
    const endpoint = new Promise<URL>((resolve, reject) => {
      this.#endpointWaiter = { resolve, reject };
    });
    endpoint.catch(() => {}); // observed through raceAbort below; never unhandled
    try {
      const res = await this.#requester.request({
        method: "GET",
        url: this.#url,
        headers: { "Accept": "text/event-stream" },
        signal,
      });
      if (res.status < 200 || res.status > 299) {
        throw await this.#requester.statusError(res, { httpMethod: "GET", url: this.#url });
      }
      const type = mediaType(res);
      if (type !== "text/event-stream") {
        await discardBody(res);
        throw new ProtocolError(
          `GET ${displayUrl(this.#url)} answered Content-Type ` +
            `${JSON.stringify(type.slice(0, 80))}, expected text/event-stream`,
        );
      }
      this.#reading = this.#read(res, signal);
      this.#endpoint = await raceAbort(endpoint, signal);
      this.#endpointWaiter = undefined;
      this.#requester.addUrlSecrets(this.#endpoint);
      this.#log(`endpoint ${displayUrl(this.#endpoint)}`);
    } catch (e) {
      this.#endpointWaiter = undefined;
      this.#reported = true; // a failed start is reported by the rejection alone
      this.#closing.abort(new ConnectionClosedError("connection closed"));
      await this.#reading;
      throw e;
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /**
   * POSTs one message to the endpoint; resolves when the server accepted it (2xx, body
   * ignored). Replies come on the event stream.
   *
   * @throws {HttpStatusError} on a non-2xx answer.
   * @throws {ConnectionClosedError} when the stream is gone.
   */
  async send(message: JsonRpcMessage, options: SendOptions = {}): Promise<void> {
    const endpoint = this.#endpoint;
    if (endpoint === undefined || this.#closing.signal.aborted) {
      throw this.#closing.signal.aborted
        ? abortError(this.#closing.signal)
        : new ConnectionClosedError("connection is not open");
    }
    const signal = linkSignals(this.#closing.signal, options.signal);
    const rpcMethod = "method" in message ? message.method : undefined;
    const posting = this.#requester.request({
      method: "POST",
      url: endpoint,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
      signal,
      rpcMethod,
    });
    // Let a notification sent just before close() (notifications/cancelled) through.
    if (!("id" in message) || message.id === undefined) {
      const settled = posting.then(() => {}, () => {});
      this.#notifying.add(settled);
      void settled.finally(() => this.#notifying.delete(settled));
    }
    const res = await posting;
    if (res.status < 200 || res.status > 299) {
      throw await this.#requester.statusError(res, {
        httpMethod: "POST",
        url: endpoint,
        rpcMethod,
      });
    }
    await discardBody(res);
  }

  /** Aborts the stream and any POST in flight, then reports `onClose()`. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<void> {
    await drainSends(this.#notifying, DEFAULT_CLOSE_TIMEOUT_MS, this.#clock);
    this.#closing.abort(new ConnectionClosedError("connection closed"));
    await this.#reading;
    this.#report(undefined);
  }

  #log(line: string): void {
    this.#requester.log(line);
  }

  #report(error: Error | undefined): void {
    if (this.#reported) return;
    this.#reported = true;
    this.#handlers?.onClose(error);
  }

  // Ends the connection because of `error`: before the endpoint arrived this fails
  // start(); afterwards it is reported through onClose.
  #fail(error: Error): void {
    if (this.#endpointWaiter !== undefined) {
      this.#endpointWaiter.reject(error);
      return;
    }
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(error instanceof McpctlError ? error : new ConnectionClosedError("closed"));
    this.#report(error);
  }

  async #read(res: Response, signal: AbortSignal): Promise<void> {
    if (res.body === null) {
      this.#fail(new ConnectionClosedError(`GET ${displayUrl(this.#url)} returned no stream`));
      return;
    }
    const where = displayUrl(this.#url);
    const decoder = new SseDecoder((event) => this.#onEvent(event.event, event.data), {
      maxEventBytes: this.#max,
    });
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        decoder.push(value);
      }
      decoder.end();
      this.#fail(new ConnectionClosedError(`server ${where} closed the event stream`));
    } catch (e) {
      await reader.cancel().catch(() => {});
      if (signal.aborted) return;
      if (e instanceof SseTooLargeError) {
        this.#fail(
          new ProtocolError(`an event from ${where}: ${e.message}`, {
            hint: "raise maxMessageBytes for this server if the message is legitimate",
          }),
        );
      } else if (e instanceof McpctlError) {
        this.#fail(e);
      } else {
        this.#fail(new ConnectionClosedError(`the event stream from ${where} broke`));
      }
    } finally {
      reader.releaseLock();
    }
  }

  #onEvent(type: string, data: string): void {
    if (type === "endpoint") {
      if (this.#endpointWaiter === undefined) {
        this.#log("ignored a repeated endpoint event");
        return;
      }
      let target: URL;
      try {
        target = new URL(data.trim(), this.#url);
      } catch {
        throw new ProtocolError(`server ${displayUrl(this.#url)} sent an invalid endpoint URL`);
      }
      if (!sameOrigin(this.#url, target)) {
        throw new ProtocolError(
          `server ${displayUrl(this.#url)} named an endpoint on another origin ` +
            `(${this.#url.origin} → ${target.origin}); refusing it`,
        );
      }
      this.#endpointWaiter.resolve(target);
      this.#endpointWaiter = undefined;
      return;
    }
    if (type !== "message" || data.trim() === "") return;
    const parsed = parseJson(data, `a message from ${displayUrl(this.#url)}`);
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        this.#log("skipped a JSON value that is not a message");
        continue;
      }
      try {
        this.#handlers?.onMessage(item);
      } catch (e) {
        this.#log(`message handler failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
