/**
 * The loopback redirect listener of a browser sign-in (RFC 8252 §7.3): an HTTP server
 * on 127.0.0.1 that takes exactly one `/callback` request, hands over its `code`, and
 * shuts itself down.
 *
 * @module
 */

import { AuthRequiredError, ConfigError, InterruptedError, TimeoutError } from "../errors.ts";
import type { CallbackResult } from "./types.ts";

/** Default wait for the browser to come back: 5 minutes. */
export const DEFAULT_LOOPBACK_TIMEOUT_MS = 5 * 60_000;

/** Options of {@linkcode startLoopback}. */
export interface LoopbackOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The `state` sent in the authorization request; the callback must return it. */
  expectedState: string;
  /** Give up with a {@linkcode TimeoutError} after this long. Default 5 minutes. */
  timeoutMs?: number;
  /** Abort to stop waiting; `result` rejects with an {@linkcode InterruptedError}. */
  signal?: AbortSignal;
  /** Progress lines for verbose output. They never contain the code. */
  log?: (line: string) => void;
}

/** A running listener. */
export interface Loopback {
  /** `http://127.0.0.1:<port>/callback`, to send as `redirect_uri`. */
  redirectUri: string;
  /** Settles once: the code (with `state`, and `iss` when sent), or why there is none. */
  result: Promise<CallbackResult>;
  /** Stops the listener (if still running) and waits until it has; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the listener, bound to 127.0.0.1 only.
 *
 * The first request to `/callback` is the only one that counts: with the right `state`
 * and a `code` it resolves `result`; a wrong `state`, an `error` parameter or a missing
 * code reject it with an {@linkcode AuthRequiredError}. Later requests get 410 and change
 * nothing; other paths get 404 and do not count. On the first callback, timeout or
 * abort the server shuts down by itself; a `result` nobody awaits never becomes an
 * unhandled rejection.
 *
 * @throws {ConfigError} when a fixed `port` is taken.
 *
 * @example
 * ```ts
 * import { startLoopback } from "./loopback.ts";
 * const state = crypto.randomUUID();
 * const loopback = await startLoopback({ expectedState: state });
 * // send the user to the authorization URL with redirect_uri=loopback.redirectUri
 * try {
 *   const { code } = await loopback.result;
 * } finally {
 *   await loopback.close();
 * }
 * ```
 */
export function startLoopback(options: LoopbackOptions): Promise<Loopback> {
  try {
    return Promise.resolve(listen(options));
  } catch (error) {
    return Promise.reject(error);
  }
}

function listen(options: LoopbackOptions): Loopback {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOOPBACK_TIMEOUT_MS;
  if (options.signal?.aborted) throw new InterruptedError("sign-in interrupted");
  const callback = createCallbackHandler({ expectedState: options.expectedState, log });
  let stopping: Promise<void> | undefined;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen: () => {},
    }, (request) => {
      const response = callback.handle(request);
      // Shutting down here still sends this response; new connections are refused.
      if (callback.settled) void stop();
      return response;
    });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new ConfigError(
        `cannot listen for the sign-in callback: port ${options.port} is in use`,
        {
          cause: error,
          hint: "choose another oauth.callbackPort, or stop what uses it",
        },
      );
    }
    throw error;
  }
  const redirectUri = `http://127.0.0.1:${server.addr.port}/callback`;
  log(`waiting for the sign-in callback on ${redirectUri}`);

  function stop(): Promise<void> {
    if (stopping === undefined) {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // A failed shutdown leaves nothing the caller could act on; never reject here.
      stopping = server.shutdown().then(() => server.finished).catch(() => {});
    }
    return stopping;
  }
  function onAbort(): void {
    callback.reject(new InterruptedError("sign-in interrupted"));
    void stop();
  }
  const timer = setTimeout(() => {
    callback.reject(
      new TimeoutError(`sign-in was not completed within ${formatDuration(timeoutMs)}`, {
        hint: "run the command again and finish signing in in the browser",
      }),
    );
    void stop();
  }, timeoutMs);
  options.signal?.addEventListener("abort", onAbort, { once: true });

  return {
    redirectUri,
    result: callback.result,
    close(): Promise<void> {
      callback.reject(new AuthRequiredError("sign-in was cancelled before the browser returned"));
      return stop();
    },
  };
}

/** Options of {@linkcode createCallbackHandler}. */
export interface CallbackHandlerOptions {
  /** The `state` the callback must carry. */
  expectedState: string;
  /** Progress lines; never given the code. */
  log?: (line: string) => void;
}

/** The request logic of the listener, apart from the server. */
export interface CallbackHandler {
  /** Answers one request. */
  handle(request: Request): Response;
  /** Settles with the first callback's outcome. */
  result: Promise<CallbackResult>;
  /** True once `result` is settled. */
  readonly settled: boolean;
  /** Rejects `result` unless already settled. */
  reject(error: Error): void;
}

/**
 * The request handling of {@linkcode startLoopback}, usable with any server (and in
 * tests without one).
 *
 * @example
 * ```ts
 * import { createCallbackHandler } from "./loopback.ts";
 * const handler = createCallbackHandler({ expectedState: "s" });
 * handler.handle(new Request("http://127.0.0.1/callback?state=s&code=c")).status; // 200
 * console.log(await handler.result); // { code: "c" }
 * ```
 */
export function createCallbackHandler(options: CallbackHandlerOptions): CallbackHandler {
  const log = options.log ?? (() => {});
  let settled = false;
  let resolveResult!: (value: CallbackResult) => void;
  let rejectResult!: (error: Error) => void;
  const result = new Promise<CallbackResult>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  // Callers may close without awaiting `result`; that must not crash the process.
  result.catch(() => {});

  function fail(error: Error): void {
    if (settled) return;
    settled = true;
    rejectResult(error);
  }

  function handle(request: Request): Response {
    const url = new URL(request.url);
    if (url.pathname !== "/callback") return page(404, "Not found", "");
    if (request.method !== "GET") {
      return page(405, "Method not allowed", "", { allow: "GET" });
    }
    if (settled) {
      log("refused a second sign-in callback");
      return page(410, "Already used", "This sign-in link was already used. Return to mcpctl.");
    }
    settled = true;
    const params = url.searchParams;
    const error = params.get("error");
    if (!constantTimeEqual(params.get("state") ?? "", options.expectedState)) {
      log("refused the sign-in callback: state mismatch");
      rejectResult(
        new AuthRequiredError(
          "state mismatch in the sign-in callback: it does not belong to this sign-in" +
            (error !== null ? ` (it reported error ${clean(error, 100)})` : ""),
          { hint: "run the command again and use the newest browser tab" },
        ),
      );
      return page(
        400,
        "Sign-in refused",
        "This callback does not belong to the sign-in in progress.",
      );
    }
    if (error !== null) {
      const description = params.get("error_description");
      const text = clean(error, 100) +
        (description !== null ? `: ${clean(description, 300)}` : "");
      log(`the authorization server refused the sign-in: ${text}`);
      rejectResult(new AuthRequiredError(`the authorization server refused the sign-in: ${text}`));
      return page(400, "Sign-in failed", `The authorization server reported: ${text}`);
    }
    const code = params.get("code");
    if (code === null || code === "") {
      log("refused the sign-in callback: no code");
      rejectResult(new AuthRequiredError("the sign-in callback carried no authorization code"));
      return page(400, "Sign-in failed", "The callback carried no authorization code.");
    }
    log("received the sign-in callback");
    const iss = params.get("iss");
    resolveResult({ code, state: options.expectedState, ...(iss !== null ? { iss } : {}) });
    return page(200, "Signed in to mcpctl", "You can close this tab.");
  }

  return {
    handle,
    result,
    get settled() {
      return settled;
    },
    reject: fail,
  };
}

function page(
  status: number,
  title: string,
  text: string,
  extraHeaders: Record<string, string> = {},
): Response {
  const heading = status === 200 ? "Signed in to mcpctl; you can close this tab" : title;
  const body = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(heading)}</h1>${
    text && status !== 200 ? `<p>${escapeHtml(text)}</p>` : ""
  }</body></html>
`;
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      // The page URL holds the code: keep it out of any Referer, and run nothing.
      "referrer-policy": "no-referrer",
      "content-security-policy": "default-src 'none'",
      "x-content-type-options": "nosniff",
      "connection": "close",
      ...extraHeaders,
    },
  });
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Drops control characters (terminal escapes) from untrusted text and bounds its length. */
function clean(text: string, max: number): string {
  // deno-lint-ignore no-control-regex
  const stripped = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "");
  return stripped.length > max ? stripped.slice(0, max) + "…" : stripped;
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

function formatDuration(ms: number): string {
  if (ms >= 60_000) {
    const minutes = Math.round(ms / 6_000) / 10;
    return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  }
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}
