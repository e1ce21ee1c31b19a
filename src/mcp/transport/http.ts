/**
 * The Streamable HTTP transport (MCP 2025-03-26 and later): one POST per message,
 * answers as JSON or as an SSE stream, session ids, session expiry recovery, the
 * optional server stream (GET), resumption with `Last-Event-ID` (SEP-1699), and the
 * HTTP plumbing shared with the legacy HTTP+SSE transport (auth retry, redirects,
 * error reports free of secrets).
 *
 * @module
 */

import { DEFAULT_MAX_MESSAGE_BYTES } from "../../config/types.ts";
import {
  AuthRequiredError,
  ConfigError,
  ConnectionClosedError,
  McpctlError,
  ProtocolError,
  ServerError,
  TimeoutError,
} from "../../errors.ts";
import { createRedactor, parseBearerChallenge, type Redactor, validateHeaders } from "./headers.ts";
import { type Clock as FullClock, systemClock as fullSystemClock } from "../../util/async.ts";
import { SseDecoder, SseTooLargeError } from "./sse.ts";
import type {
  AuthProvider,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcRequest,
  SendOptions,
  Transport,
  TransportHandlers,
} from "./types.ts";

/** Timer functions, injectable so tests can observe or control waits. */
export type Clock = Pick<FullClock, "setTimeout" | "clearTimeout">;

/** The real timers. */
export const systemClock: Clock = fullSystemClock;

/** Same-origin redirects followed per request before giving up. */
export const MAX_REDIRECTS = 5;
/** Wait before resuming a stream whose server gave no `retry` value. */
export const DEFAULT_RETRY_MS = 1000;
/** Resumption attempts without progress before a request fails. */
export const DEFAULT_MAX_RECONNECTS = 3;
/** Bound on the session `DELETE` sent by `close()`. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 2000;

const EXCERPT_CHARS = 200;
const EXCERPT_READ_BYTES = 4096;
const SESSION_ID = /^[\x21-\x7e]+$/;
const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * A non-2xx HTTP answer. `status` lets callers decide policy, e.g. the legacy SSE
 * fallback (see `shouldFallBackToSse` in `legacy_sse.ts`).
 */
export class HttpStatusError extends ServerError {
  /** Error name. */
  override name = "HttpStatusError";
  /** The HTTP status code. */
  readonly status: number;
  /** The HTTP method of the failed request (`POST`, `GET`, `DELETE`). */
  readonly httpMethod: string;
  /** The JSON-RPC method carried by the failed POST, if any. */
  readonly rpcMethod: string | undefined;
  /** Builds the error; `message` must already be free of secrets. */
  constructor(
    message: string,
    init: { status: number; httpMethod: string; rpcMethod?: string | undefined },
    options?: ErrorOptions & { hint?: string },
  ) {
    super(message, options);
    this.status = init.status;
    this.httpMethod = init.httpMethod;
    this.rpcMethod = init.rpcMethod;
  }
}

/** The server could not be reached (DNS, refused connection, TLS, reset). */
export class NetworkError extends ServerError {
  /** Error name. */
  override name = "NetworkError";
}

/**
 * True when both URLs have the same origin (scheme, host, port). URLs without a
 * tuple origin (e.g. `data:`) are never same-origin.
 *
 * @example
 * ```ts
 * import { sameOrigin } from "./http.ts";
 * sameOrigin(new URL("http://a.test/x"), new URL("http://a.test:80/y")); // true
 * ```
 */
export function sameOrigin(a: URL, b: URL): boolean {
  return a.origin !== "null" && a.origin === b.origin;
}

/**
 * A URL as it may appear in messages: no user name, password, query or fragment
 * (those may hold credentials).
 *
 * @example
 * ```ts
 * import { displayUrl } from "./http.ts";
 * displayUrl("https://u:p@h.test/mcp?key=k"); // "https://h.test/mcp"
 * ```
 */
export function displayUrl(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "<invalid URL>";
  }
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/**
 * The media type of a response without parameters, lower-cased (`""` when absent).
 *
 * @example
 * ```ts
 * import { mediaType } from "./http.ts";
 * mediaType(new Response("", { headers: { "content-type": "Text/Event-Stream; charset=utf-8" } }));
 * // "text/event-stream"
 * ```
 */
export function mediaType(res: Response): string {
  const value = res.headers.get("content-type") ?? "";
  return value.split(";")[0]!.trim().toLowerCase();
}

/** Releases a response body nobody will read. Never throws. */
export async function discardBody(res: Response): Promise<void> {
  if (res.body === null || res.bodyUsed) return;
  try {
    await res.body.cancel();
  } catch { /* already errored or locked: nothing left to free */ }
}

/** Links an optional signal to a base signal: aborted when either is. */
export function linkSignals(base: AbortSignal, extra: AbortSignal | undefined): AbortSignal {
  return extra === undefined ? base : AbortSignal.any([base, extra]);
}

/**
 * The error to report for an aborted operation: the abort reason when it is one of
 * ours (e.g. a TimeoutError from the caller or ConnectionClosedError from `close()`),
 * else a generic ConnectionClosedError.
 */
export function abortError(signal: AbortSignal): McpctlError {
  const reason: unknown = signal.reason;
  return reason instanceof McpctlError ? reason : new ConnectionClosedError("request aborted");
}

/** Waits `ms` on `clock`; rejects with {@linkcode abortError} when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Settles like `promise`, or rejects with {@linkcode abortError} as soon as `signal` aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

// Replaces any http(s) URL inside free text (e.g. a fetch error) with its display form.
function scrubUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s)"'<>]+/gi, (m) => {
    const shown = displayUrl(m);
    return shown === "<invalid URL>" ? "<URL>" : shown;
  });
}

// Control characters (C0, DEL, C1) would garble a terminal or fake extra lines.
function stripControl(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\x00-\x1f\x7f-\x9f]+/g, " ").replace(/ {2,}/g, " ").trim();
}

function describeFetchError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current.message && current.message !== "fetch failed") parts.push(current.message);
    current = current.cause;
  }
  const text = parts.join(": ").replace(/error sending request for url \([^)]*\):?\s*/gi, "");
  return stripControl(scrubUrls(text)) || "network error";
}

/** One HTTP exchange for {@linkcode HttpRequester.request}. */
export interface HttpRequestSpec {
  /** HTTP method. */
  method: "GET" | "POST" | "DELETE";
  /** Target URL (redirects are resolved against it). */
  url: URL;
  /** Protocol headers set by the transport; they override configured headers. */
  headers: Record<string, string>;
  /** Request body (re-sent on a same-origin redirect). */
  body?: string;
  /** Aborts the fetch and its body. */
  signal: AbortSignal;
  /** The JSON-RPC method carried, for messages. */
  rpcMethod?: string | undefined;
  /** Whether a 401/403 may start the auth provider's flow (default true). */
  authRetry?: boolean;
}

/** Options of {@linkcode HttpRequester}. */
export interface HttpRequesterOptions {
  /** The fetch implementation. */
  fetch: typeof fetch;
  /** Configured headers (values are secrets). */
  headers: Record<string, string>;
  /** Credentials source, if any. */
  auth: AuthProvider | undefined;
  /** Receives diagnostic lines, already redacted. */
  log: (line: string) => void;
}

/**
 * The HTTP plumbing shared by the HTTP transports: adds configured and auth headers,
 * runs the 401/403 retry through the {@linkcode AuthProvider}, follows same-origin
 * redirects (refusing cross-origin ones, so no credential ever leaves the origin),
 * maps network failures to shared errors, and redacts every secret it has seen from
 * messages and log lines.
 */
export class HttpRequester {
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;
  readonly #auth: AuthProvider | undefined;
  readonly #log: (line: string) => void;
  readonly #secrets = new Set<string>();
  #redactor: Redactor = (text) => text;

  /** Creates a requester; configured header values are registered as secrets. */
  constructor(options: HttpRequesterOptions) {
    this.#fetch = options.fetch;
    this.#headers = options.headers;
    this.#auth = options.auth;
    this.#log = options.log;
    for (const value of Object.values(options.headers)) this.addSecret(value);
  }

  /** Registers a value that must never appear in messages or logs. */
  addSecret(value: string): void {
    const trimmed = value.trim();
    if (trimmed === "" || this.#secrets.has(trimmed)) return;
    this.#secrets.add(trimmed);
    // `Bearer xyz`: the credential alone may be echoed too.
    const space = trimmed.indexOf(" ");
    if (space !== -1) this.#secrets.add(trimmed.slice(space + 1).trim());
    this.#redactor = createRedactor(this.#secrets);
  }

  /** Registers the credentials a URL carries (user info, query values). */
  addUrlSecrets(url: URL): void {
    if (url.username) this.addSecret(decodeSafe(url.username));
    if (url.password) this.addSecret(decodeSafe(url.password));
    for (const value of url.searchParams.values()) this.addSecret(value);
  }

  /** Removes every registered secret from `text`. */
  redact(text: string): string {
    return this.#redactor(text);
  }

  /** Emits a diagnostic line, redacted. */
  log(line: string): void {
    this.#log(this.redact(line));
  }

  /** Whether a header was configured (case-insensitive). */
  hasConfiguredHeader(name: string): boolean {
    const lower = name.toLowerCase();
    return Object.keys(this.#headers).some((k) => k.toLowerCase() === lower);
  }

  /**
   * Performs one exchange. Resolves with the final response whatever its status,
   * except 401 (and 403 `insufficient_scope`), which go through the auth provider and
   * end in a retry or an {@linkcode AuthRequiredError}.
   *
   * @throws {NetworkError} when the server cannot be reached.
   * @throws {ServerError} on a cross-origin or broken redirect.
   * @throws {AuthRequiredError} when authorization is missing or refused.
   */
  async request(spec: HttpRequestSpec): Promise<Response> {
    let retried = false;
    for (;;) {
      const res = await this.#follow(spec);
      const challenged = res.status === 401 || res.status === 403;
      if (!challenged || spec.authRetry === false) return res;
      const params = parseBearerChallenge(res.headers.get("www-authenticate"));
      if (res.status === 403 && params["error"] !== "insufficient_scope") return res;
      await discardBody(res);
      const where = displayUrl(spec.url);
      const why = res.status === 401 ? "HTTP 401" : "HTTP 403 insufficient_scope";
      if (this.#auth === undefined) {
        const configured = this.hasConfiguredHeader("authorization");
        throw new AuthRequiredError(
          configured
            ? `server ${where} refused the configured Authorization header (${why})`
            : `server ${where} requires authorization (${why})`,
          { hint: "configure credentials for this server (OAuth or an Authorization header)" },
        );
      }
      if (retried) {
        throw new AuthRequiredError(
          `server ${where} still refuses the request after new credentials (${why})`,
        );
      }
      let renewed: boolean;
      try {
        renewed = await this.#auth.unauthorized({ status: res.status, params });
      } catch (e) {
        if (e instanceof McpctlError) throw e;
        throw new AuthRequiredError(`authorization for ${where} failed`, { cause: e });
      }
      if (!renewed) {
        throw new AuthRequiredError(`server ${where} requires authorization (${why})`);
      }
      this.log(`${spec.method} ${where}: ${why}, retrying with new credentials`);
      retried = true;
    }
  }

  async #follow(spec: HttpRequestSpec): Promise<Response> {
    let url = spec.url;
    for (let hops = 0;; hops++) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.#headers)) headers.set(name, value);
      const authorization = await this.#authorization(url);
      if (authorization !== undefined) headers.set("Authorization", authorization);
      for (const [name, value] of Object.entries(spec.headers)) headers.set(name, value);
      const init: RequestInit = {
        method: spec.method,
        headers,
        signal: spec.signal,
        redirect: "manual",
      };
      if (spec.body !== undefined) init.body = spec.body;
      let res: Response;
      try {
        res = await this.#fetch(url, init);
      } catch (e) {
        if (spec.signal.aborted) throw abortError(spec.signal);
        throw new NetworkError(
          this.redact(`cannot reach ${displayUrl(url)}: ${describeFetchError(e)}`),
        );
      }
      if (![301, 302, 303, 307, 308].includes(res.status)) return res;

      const location = res.headers.get("location");
      await discardBody(res);
      let next: URL;
      try {
        if (location === null) throw new TypeError("no Location");
        next = new URL(location, url);
      } catch {
        throw new ServerError(
          `${displayUrl(url)} answered HTTP ${res.status} without a valid Location header`,
        );
      }
      // Credentials (Authorization, Cookie, configured headers) belong to this origin
      // only; re-sending a POST elsewhere without them would not work anyway.
      if (!sameOrigin(url, next)) {
        throw new ServerError(
          `${displayUrl(url)} redirected to another origin (${url.origin} → ${next.origin}); ` +
            "not following it, so no credentials leave the server's origin",
          { hint: "use the final server URL in the configuration" },
        );
      }
      if (hops >= MAX_REDIRECTS) {
        throw new ServerError(`too many redirects from ${displayUrl(spec.url)}`);
      }
      this.addUrlSecrets(next);
      this.log(`${spec.method} ${displayUrl(url)}: HTTP ${res.status} → ${displayUrl(next)}`);
      // The same method and body are kept for every code: an MCP endpoint only takes
      // POSTs, so turning one into a GET (as browsers do on 301-303) would be useless.
      url = next;
    }
  }

  async #authorization(url: URL): Promise<string | undefined> {
    if (this.#auth === undefined) return undefined;
    let value: string | undefined;
    try {
      value = await this.#auth.authorization();
    } catch (e) {
      if (e instanceof McpctlError) throw e;
      throw new AuthRequiredError(`cannot get credentials for ${displayUrl(url)}`, { cause: e });
    }
    if (value !== undefined) this.addSecret(value);
    return value;
  }

  /**
   * Builds the error for a non-2xx answer: method, URL, status and a short excerpt of
   * the body with control characters stripped and secrets redacted. Consumes the body.
   */
  async statusError(
    res: Response,
    what: { httpMethod: string; url: URL; rpcMethod?: string | undefined },
  ): Promise<HttpStatusError> {
    const excerpt = this.#excerpt(await readHead(res));
    const label = what.rpcMethod ? ` (${what.rpcMethod})` : "";
    // HTTP/2 has no reason phrase: fall back to the standard one.
    const reason = res.statusText || REASONS[res.status];
    const status = `HTTP ${res.status}${reason ? ` ${reason.slice(0, 60)}` : ""}`;
    const message = `${what.httpMethod} ${displayUrl(what.url)}${label} failed: ${status}` +
      (excerpt ? `: ${excerpt}` : "");
    return new HttpStatusError(this.redact(stripControl(message)), {
      status: res.status,
      httpMethod: what.httpMethod,
      rpcMethod: what.rpcMethod,
    });
  }

  // Redaction comes before any cutting or cleaning, which could split or alter a
  // secret and hide it from the redactor.
  #excerpt(head: { text: string; cut: boolean }): string {
    let text = head.text;
    if (head.cut) text = this.#dropPartialSecret(text);
    text = stripControl(scrubUrls(this.redact(text)));
    return text.length > EXCERPT_CHARS ? text.slice(0, EXCERPT_CHARS) + "…" : text;
  }

  // A body read only in part may end with the first characters of a secret.
  #dropPartialSecret(text: string): string {
    for (const secret of this.#secrets) {
      for (const form of new Set([secret, encodeURIComponent(secret)])) {
        for (let k = Math.min(form.length - 1, text.length); k > 0; k--) {
          if (text.endsWith(form.slice(0, k))) {
            text = text.slice(0, text.length - k);
            break;
          }
        }
      }
    }
    return text;
  }
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// The first bytes of a body (for error reports); the rest is discarded.
async function readHead(res: Response): Promise<{ text: string; cut: boolean }> {
  if (res.body === null) return { text: "", cut: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size >= EXCERPT_READ_BYTES) {
        cut = true;
        break;
      }
    }
  } catch { /* a broken body still gives its status */ }
  await reader.cancel().catch(() => {});
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { text: new TextDecoder().decode(bytes), cut };
}

/**
 * Reads a whole body, refusing more than `max` bytes.
 *
 * @throws {ProtocolError} when the body is larger than `max` (checked against
 * `Content-Length` first, then while reading).
 * @throws {ConnectionClosedError} when the body breaks off.
 */
export async function readLimitedBody(
  res: Response,
  options: { max: number; signal: AbortSignal; what: string },
): Promise<Uint8Array> {
  const tooLarge = () =>
    new ProtocolError(`${options.what} exceeds ${options.max} bytes`, {
      hint: "raise maxMessageBytes for this server if the answer is legitimate",
    });
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > options.max) {
    await discardBody(res);
    throw tooLarge();
  }
  if (res.body === null) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > options.max) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof McpctlError) throw e;
    if (options.signal.aborted) throw abortError(options.signal);
    await reader.cancel().catch(() => {});
    throw new ConnectionClosedError(`${options.what} broke off: ${describeFetchError(e)}`);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Waits until every send in `sends` settled, at most `ms`. Transports call it before
 * aborting their requests on close, so a notification already sent (such as
 * `notifications/cancelled`) still reaches the server.
 */
export async function drainSends(
  sends: Set<Promise<void>>,
  ms: number,
  clock: Clock = systemClock,
): Promise<void> {
  if (sends.size === 0) return;
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const limit = new Promise<void>((resolve) => timer = clock.setTimeout(resolve, ms));
  try {
    await Promise.race([Promise.allSettled([...sends]), limit]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

/** Parses JSON text, or throws a ProtocolError that says what was being parsed. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProtocolError(`${what} is not valid JSON`);
  }
}

/** Where an SSE stream stands across reconnections. */
interface StreamState {
  lastEventId: string;
  retry: number | undefined;
}

/** Waiting for one request's response (or swallowing it). */
interface Tracker {
  id: JsonRpcId;
  answered: boolean;
  swallow: boolean;
  response: unknown;
  onAnswer: () => void;
}

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
  readonly #max: number;
  readonly #maxReconnects: number;
  readonly #defaultRetryMs: number;
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
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new ConfigError(`invalid server URL ${displayUrl(options.url)}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ConfigError(`server URL must use http or https, not ${url.protocol}`);
    }
    this.#url = url;
    this.description = `http: ${displayUrl(url)}`;
    const headers = options.headers ?? {};
    validateHeaders(headers, `the headers for ${displayUrl(url)}`);
    this.#optLog = options.log;
    this.#requester = new HttpRequester({
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      headers,
      auth: options.auth,
      log: (line) => (this.#optLog ?? this.#handlers?.onLog)?.(line),
    });
    this.#requester.addUrlSecrets(url);
    this.#clock = options.clock ?? systemClock;
    this.#max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#maxReconnects = options.maxReconnects ?? DEFAULT_MAX_RECONNECTS;
    this.#defaultRetryMs = options.defaultRetryMs ?? DEFAULT_RETRY_MS;
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
    return await this.#readAnswer(res, message, signal, mode.swallow);
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

  async #readAnswer(
    res: Response,
    request: JsonRpcRequest,
    signal: AbortSignal,
    swallow: boolean,
  ): Promise<unknown> {
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => answered = resolve);
    const tracker: Tracker = {
      id: request.id,
      answered: false,
      swallow,
      response: undefined,
      onAnswer: () => answered(),
    };
    const type = mediaType(res);
    const what = `the answer to ${request.method} from ${displayUrl(this.#url)}`;
    if (type === "text/event-stream") {
      const stream = this.#followStream(res, tracker, signal, request.method);
      // After the response the stream may go on (late notifications): keep reading it
      // in the background; close() aborts it.
      this.#track(stream.catch((e) => {
        if (tracker.answered && !signal.aborted) this.#log(`${what}: ${messageOf(e)}`);
      }));
      await Promise.race([stream, answer]);
      return tracker.response;
    }
    if (type !== "application/json" && type !== "") {
      await discardBody(res);
      throw new ProtocolError(
        `${what} has Content-Type ${JSON.stringify(type.slice(0, 80))}, ` +
          "expected application/json or text/event-stream",
      );
    }
    const bytes = await readLimitedBody(res, { max: this.#max, signal, what });
    const text = new TextDecoder().decode(bytes);
    if (type === "" && text.trim() === "") {
      // Accepted without a body: the response may still come on the server stream.
      this.#log(`${what} had no body; expecting the response on the server stream`);
      return undefined;
    }
    this.#dispatch(parseJson(text, what), tracker);
    if (!tracker.answered) throw new ProtocolError(`${what} does not contain its response`);
    return tracker.response;
  }

  // Reads a request's SSE stream; when it ends before the response, resumes it with
  // GET + Last-Event-ID after the server's retry delay.
  async #followStream(
    first: Response,
    tracker: Tracker,
    signal: AbortSignal,
    label: string,
  ): Promise<void> {
    const state: StreamState = { lastEventId: "", retry: undefined };
    let res: Response | undefined = first;
    let attempts = 0;
    for (;;) {
      if (res !== undefined) {
        const progressed = await this.#readSse(
          res,
          state,
          signal,
          (m) => this.#dispatch(m, tracker),
        );
        if (tracker.answered) return;
        if (progressed) attempts = 0;
        res = undefined;
      }
      if (state.lastEventId === "") {
        throw new ConnectionClosedError(
          `the stream for ${label} from ${displayUrl(this.#url)} ended before its response` +
            " (no event id to resume from)",
        );
      }
      if (attempts >= this.#maxReconnects) {
        throw new ConnectionClosedError(
          `the stream for ${label} from ${displayUrl(this.#url)} ended before its response` +
            ` (gave up after ${attempts} reconnection attempts)`,
        );
      }
      attempts++;
      const wait = state.retry ?? this.#defaultRetryMs;
      this.#log(`stream for ${label} ended before its response; resuming in ${wait} ms`);
      await sleep(wait, signal, this.#clock);
      try {
        res = await this.#resume(state.lastEventId, signal, label);
      } catch (e) {
        if (!(e instanceof NetworkError) || signal.aborted) throw e;
        this.#log(`resuming the stream for ${label} failed: ${e.message}`);
      }
    }
  }

  async #resume(lastEventId: string, signal: AbortSignal, label: string): Promise<Response> {
    const res = await this.#requester.request({
      method: "GET",
      url: this.#url,
      headers: {
        ...this.#protocolHeaders(this.#sessionId),
        "Accept": "text/event-stream",
        "Last-Event-ID": lastEventId,
      },
      signal,
    });
    const type = mediaType(res);
    if (res.status >= 200 && res.status <= 299 && type === "text/event-stream") {
      this.#log(`GET ${displayUrl(this.#url)} resumed the stream for ${label}`);
      return res;
    }
    await discardBody(res);
    const why = res.status >= 200 && res.status <= 299
      ? `Content-Type ${JSON.stringify(type.slice(0, 80))}`
      : `HTTP ${res.status}`;
    throw new ConnectionClosedError(
      `the stream for ${label} from ${displayUrl(this.#url)} ended before its response` +
        ` and resuming it failed (${why})`,
    );
  }

  // Reads one SSE response to its end. Returns whether a message arrived. A broken
  // connection counts as an end (the caller may resume); an oversized event or bad
  // JSON is a ProtocolError.
  async #readSse(
    res: Response,
    state: StreamState,
    signal: AbortSignal,
    onMessage: (message: unknown) => void,
  ): Promise<boolean> {
    if (res.body === null) return false;
    let progressed = false;
    const what = `an event from ${displayUrl(this.#url)}`;
    const decoder = new SseDecoder((event) => {
      // Empty data is a priming event (SEP-1699): it only carries an id and retry.
      if (event.event !== "message" || event.data.trim() === "") return;
      const message = parseJson(event.data, what);
      progressed = true;
      onMessage(message);
    }, {
      maxEventBytes: this.#max,
      onId: (id) => state.lastEventId = id,
      onRetry: (ms) => state.retry = ms,
    });
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          decoder.end();
          break;
        }
        decoder.push(value);
      }
    } catch (e) {
      await reader.cancel().catch(() => {});
      if (signal.aborted) throw abortError(signal);
      if (e instanceof McpctlError) {
        if (e instanceof SseTooLargeError) {
          throw new ProtocolError(`${what}: ${e.message}`, {
            hint: "raise maxMessageBytes for this server if the message is legitimate",
          });
        }
        throw e;
      }
      this.#log(`stream from ${displayUrl(this.#url)} broke: ${describeFetchError(e)}`);
    } finally {
      reader.releaseLock();
    }
    return progressed;
  }

  // Delivers each message (batches are split), noting and possibly swallowing the
  // tracked response. A throwing handler must not break the stream.
  #dispatch(parsed: unknown, tracker?: Tracker): void {
    const items = Array.isArray(parsed) ? parsed : [parsed];
    for (const item of items) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        this.#log("skipped a JSON value that is not a message");
        continue;
      }
      if (tracker !== undefined && isResponseTo(item, tracker.id)) {
        tracker.answered = true;
        tracker.onAnswer();
        if (tracker.swallow) {
          tracker.response = item;
          continue;
        }
      }
      try {
        this.#handlers?.onMessage(item);
      } catch (e) {
        this.#log(`message handler failed: ${messageOf(e)}`);
      }
    }
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
      this.#runServerStream(signal).catch((e) => {
        if (!signal.aborted) this.#log(`server stream stopped: ${messageOf(e)}`);
      }),
    );
  }

  // The optional GET stream: best effort, never fatal; reopened (resuming when the
  // server gave an event id) until it fails maxReconnects times without progress.
  async #runServerStream(signal: AbortSignal): Promise<void> {
    const state: StreamState = { lastEventId: "", retry: undefined };
    let failures = 0;
    for (;;) {
      const headers: Record<string, string> = {
        ...this.#protocolHeaders(this.#sessionId),
        "Accept": "text/event-stream",
      };
      if (state.lastEventId !== "") headers["Last-Event-ID"] = state.lastEventId;
      const res = await this.#requester.request({
        method: "GET",
        url: this.#url,
        headers,
        signal,
        // A background stream must never start a sign-in on its own.
        authRetry: false,
      });
      const type = mediaType(res);
      if (res.status < 200 || res.status > 299 || type !== "text/event-stream") {
        await discardBody(res);
        this.#log(
          `no server stream at ${displayUrl(this.#url)} (HTTP ${res.status}${
            type ? ` ${type.slice(0, 80)}` : ""
          })`,
        );
        return;
      }
      this.#log(`server stream open at ${displayUrl(this.#url)}`);
      const progressed = await this.#readSse(res, state, signal, (m) => this.#dispatch(m));
      if (progressed) failures = 0;
      if (++failures > this.#maxReconnects) {
        this.#log("server stream ended; not reopening it");
        return;
      }
      const wait = state.retry ?? this.#defaultRetryMs;
      this.#log(`server stream ended; reopening in ${wait} ms`);
      await sleep(wait, signal, this.#clock);
    }
  }
}

function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return "method" in message && "id" in message && message.id !== undefined &&
    message.id !== null;
}

function methodOf(message: JsonRpcMessage): string | undefined {
  return "method" in message ? message.method : undefined;
}

function isResponseTo(item: object, id: JsonRpcId): boolean {
  return !("method" in item) && "id" in item && item.id === id;
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
