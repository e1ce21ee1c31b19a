/**
 * The HTTP requester shared by the Streamable HTTP and legacy HTTP+SSE transports:
 * configured and auth headers, the 401/403 retry, redirects under the same-origin
 * rule, network error mapping, and redaction of every secret it has seen.
 *
 * @module
 */

import { AuthRequiredError, McpctlError, ServerError } from "../../errors.ts";
import { abortError } from "./abort.ts";
import { Redactor } from "../../util/redact.ts";
import { parseBearerChallenge, validateHeaders } from "./headers.ts";
import { discardBody, readBodyHead } from "./http_body.ts";
import {
  describeFetchError,
  EXCERPT_READ_BYTES,
  type HttpStatusError,
  httpStatusError,
  NetworkError,
} from "./http_errors.ts";
import { displayUrl, parseServerUrl, sameOrigin } from "./http_url.ts";
import type { AuthProvider } from "./types.ts";

/** Same-origin redirects followed per request before giving up. */
export const MAX_REDIRECTS = 5;

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
/** Options of {@linkcode openRequester}. */
export interface OpenRequesterOptions {
  /** The server URL, as configured. */
  url: string;
  /** Configured headers (values are secrets). */
  headers?: Record<string, string> | undefined;
  /** The fetch implementation; default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  /** Credentials source, if any. */
  auth?: AuthProvider | undefined;
  /** Receives diagnostic lines, already redacted. */
  log: (line: string) => void;
}

/**
 * What both HTTP transports do first: check the URL (http or https) and the header
 * names and values, and make the requester that redacts them, URL credentials included.
 *
 * @throws {ConfigError} on a URL that is not http(s) or invalid headers.
 */
export function openRequester(
  options: OpenRequesterOptions,
): { url: URL; requester: HttpRequester } {
  const url = parseServerUrl(options.url);
  const headers = options.headers ?? {};
  validateHeaders(headers, `the headers for ${displayUrl(url)}`);
  const requester = new HttpRequester({
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    headers,
    auth: options.auth,
    log: options.log,
  });
  requester.addUrlSecrets(url);
  return { url, requester };
}

export class HttpRequester {
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;
  readonly #auth: AuthProvider | undefined;
  readonly #log: (line: string) => void;
  readonly #redactor = new Redactor();

  /** Creates a requester; configured header values are registered as secrets. */
  constructor(options: HttpRequesterOptions) {
    this.#fetch = options.fetch;
    this.#headers = options.headers;
    this.#auth = options.auth;
    this.#log = options.log;
    this.#redactor.addHeaders(options.headers);
  }

  /** Registers a value that must never appear in messages or logs (`Bearer xyz` covers `xyz`). */
  addSecret(value: string): void {
    this.#redactor.add(value);
  }

  /** Registers the credentials a URL carries (user info, query values). */
  addUrlSecrets(url: URL): void {
    this.#redactor.addUrl(url);
  }

  /** Removes every registered secret from `text`. */
  redact(text: string): string {
    return this.#redactor.redact(text);
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

  /**
   * Builds the error for a non-2xx answer: method, URL, status and a short excerpt of
   * the body, read as text, with control characters stripped and secrets redacted.
   * Consumes the body.
   */
  async statusError(
    res: Response,
    what: { httpMethod: string; url: URL; rpcMethod?: string | undefined },
  ): Promise<HttpStatusError> {
    const body = await readBodyHead(res, EXCERPT_READ_BYTES);
    return httpStatusError(res, {
      ...what,
      body,
      redaction: { redact: (text) => this.redact(text), secrets: this.#redactor.forms() },
    });
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
}
