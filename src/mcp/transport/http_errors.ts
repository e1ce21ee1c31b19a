/**
 * The errors of the HTTP transports and their messages: {@linkcode HttpStatusError}
 * for non-2xx answers (with standard reason phrases and a short, secret-free, readable
 * excerpt of the body), {@linkcode NetworkError} for unreachable servers, and the
 * cleaning that makes server or platform text safe to print.
 *
 * @module
 */

import { ServerError } from "../../errors.ts";
import { REDACTED, type Redactor } from "./headers.ts";
import { displayUrl, scrubUrls } from "./http_url.ts";

/** Longest body excerpt in an error message, in characters (an ellipsis follows). */
export const EXCERPT_CHARS = 200;
/** How much of an error body is read for its excerpt, in bytes; the rest is discarded. */
export const EXCERPT_READ_BYTES = 4096;

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
 * Replaces runs of control characters (C0, DEL, C1), which would garble a terminal or
 * fake extra lines, with one space; trims the result.
 */
export function stripControl(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\x00-\x1f\x7f-\x9f]+/g, " ").replace(/ {2,}/g, " ").trim();
}

/**
 * A one-line description of a fetch failure and its causes, with URLs reduced to
 * their display form and the platform's noise ("fetch failed") left out.
 */
export function describeFetchError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current.message && current.message !== "fetch failed") parts.push(current.message);
    current = current.cause;
  }
  const text = parts.join(": ").replace(/error sending request for url \([^)]*\):?\s*/gi, "");
  return stripControl(scrubUrls(text)) || "network error";
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The secrets a printed text must not show. */
export interface Redaction {
  /** Replaces every known secret in a text. */
  redact: Redactor;
  /** Every form of the secrets, to spot one cut short at the end of a partial body. */
  secrets: Iterable<string>;
}

/** Options of {@linkcode bodyExcerpt}. */
export interface ExcerptOptions {
  /** Whether the text is only the start of the body. */
  cut: boolean;
  /** Whether the body is HTML or XML, to be read as text. */
  markup: boolean;
  /** The secrets to keep out. */
  redaction: Redaction;
}

/**
 * The excerpt of an error body shown in messages: secrets redacted, markup reduced to
 * its text, URLs in display form, control characters and whitespace runs folded into
 * single spaces, then cut to {@linkcode EXCERPT_CHARS}.
 *
 * @example
 * ```ts
 * import { bodyExcerpt } from "./http_errors.ts";
 * const redaction = { redact: (t: string) => t.replaceAll("k3y", "<redacted>"), secrets: ["k3y"] };
 * bodyExcerpt("<h1>Bad\n  gateway</h1>\n<p>key k3y</p>", { cut: false, markup: true, redaction });
 * // "Bad gateway key <redacted>"
 * ```
 */
export function bodyExcerpt(text: string, options: ExcerptOptions): string {
  const { redact, secrets } = options.redaction;
  // Redaction comes before any cutting or cleaning, which could split or alter a
  // secret and hide it from the redactor.
  if (options.cut) text = dropPartialSecret(text, secrets);
  text = redact(text);
  if (options.markup) text = markupText(text);
  text = stripControl(scrubUrls(text)).replace(/\s+/g, " ").trim();
  // Cleaning joins what was apart (a decoded entity, folded line breaks): a secret may
  // only now be whole, and must be caught before the cut could split it.
  text = redact(text);
  return text.length > EXCERPT_CHARS ? text.slice(0, EXCERPT_CHARS) + "…" : text;
}

/** Options of {@linkcode httpStatusError}. */
export interface StatusErrorOptions {
  /** The HTTP method of the failed request. */
  httpMethod: string;
  /** The URL it was sent to. */
  url: URL;
  /** The JSON-RPC method it carried, if any. */
  rpcMethod?: string | undefined;
  /** The first bytes of the body (see `readBodyHead` in `http_body.ts`). */
  body: { text: string; cut: boolean };
  /** The secrets to keep out of the message. */
  redaction: Redaction;
}

/**
 * The error for a non-2xx answer: method, URL, status with its reason phrase and a
 * short excerpt of the body, free of secrets and control characters.
 */
export function httpStatusError(res: Response, options: StatusErrorOptions): HttpStatusError {
  const { text, cut } = options.body;
  const excerpt = bodyExcerpt(text, {
    cut,
    markup: isMarkup(res, text),
    redaction: options.redaction,
  });
  const label = options.rpcMethod ? ` (${options.rpcMethod})` : "";
  // HTTP/2 has no reason phrase: fall back to the standard one.
  const reason = res.statusText || REASONS[res.status];
  const status = `HTTP ${res.status}${reason ? ` ${reason.slice(0, 60)}` : ""}`;
  const message = `${options.httpMethod} ${displayUrl(options.url)}${label} failed: ${status}` +
    (excerpt ? `: ${excerpt}` : "");
  return new HttpStatusError(options.redaction.redact(stripControl(message)), {
    status: res.status,
    httpMethod: options.httpMethod,
    rpcMethod: options.rpcMethod,
  });
}

// HTML or XML by its type, or by its look when the type is missing or wrong.
function isMarkup(res: Response, text: string): boolean {
  return /html|xml/i.test(res.headers.get("content-type") ?? "") || /^\s*</.test(text);
}

// A body read only in part may end with the first characters of a secret.
function dropPartialSecret(text: string, secrets: Iterable<string>): string {
  for (const secret of secrets) {
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

// Comments, scripts and styles are no text; each runs to its end, or to the end of a
// body read only in part.
const NOT_TEXT = /<!--[\s\S]*?(?:-->|$)|<(script|style)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi;
// Tags, doctypes, processing instructions, and a tag cut off at the end. `a < b` is
// text: a tag name starts right after the `<`.
const TAG = /<[/!?]?[a-z][^>]*(?:>|$)/gi;
const ENTITY = /&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi;
const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

// The text of an HTML or XML page. Each tag leaves a space, so no two words run
// together.
function markupText(text: string): string {
  // The redaction placeholder looks like a tag: park it on a character the text
  // cannot hold (NUL goes first) while the tags go.
  const parked = text.replaceAll("\0", " ").replaceAll(REDACTED, "\0");
  const stripped = parked.replace(NOT_TEXT, " ").replace(TAG, " ").replaceAll("\0", REDACTED);
  return stripped.replace(ENTITY, decodeEntity);
}

function decodeEntity(entity: string, name: string): string {
  if (!name.startsWith("#")) return NAMED_ENTITIES[name] ?? entity;
  const hex = name[1] === "x" || name[1] === "X";
  const code = hex ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
  const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
  return valid ? String.fromCodePoint(code) : "\ufffd";
}
