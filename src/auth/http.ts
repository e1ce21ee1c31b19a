/**
 * The one HTTP helper of the auth modules: a request with a time limit, a bounded body
 * and JSON parsing, mapping transport failures to the shared error types.
 *
 * @module
 */

import { ServerError, TimeoutError } from "../errors.ts";
import { Redactor } from "../util/redact.ts";
import type { FetchLike } from "./types.ts";
import { describeUrl } from "./urls.ts";

/** Default per-request time limit. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Largest accepted metadata or token response body (1 MiB is plenty for JSON documents). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How to send a request. */
export interface HttpOptions {
  /** The HTTP client. */
  fetch: FetchLike;
  /** Aborts the request. */
  signal?: AbortSignal | undefined;
  /** Time limit in ms. */
  timeoutMs?: number | undefined;
}

/** A response with its body read. */
export interface JsonResponse {
  /** HTTP status. */
  status: number;
  /** True for 2xx. */
  ok: boolean;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** Response headers. */
  headers: Headers;
}

/**
 * Sends one request and reads a JSON body. Rejects with TimeoutError past the limit,
 * with the caller's abort reason when its signal fired, and with ServerError when the
 * host cannot be reached or the body is too large. Non-2xx answers resolve normally.
 */
export async function requestJson(
  url: string,
  init: RequestInit,
  options: HttpOptions,
): Promise<JsonResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError("timed out")), timeoutMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (options.signal?.aborted) throw options.signal.reason;
    let response: Response;
    try {
      response = await options.fetch(url, { ...init, signal: controller.signal });
    } catch (error) {
      throw failure(error, url, controller, options, timeoutMs);
    }
    let text: string;
    try {
      text = await readBounded(response, url, MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof ServerError) throw error;
      throw failure(error, url, controller, options, timeoutMs);
    }
    let json: unknown = undefined;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Not JSON (an HTML error page, a catch-all SPA route): callers treat it as absent.
    }
    return { status: response.status, ok: response.ok, json, headers: response.headers };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function failure(
  error: unknown,
  url: string,
  controller: AbortController,
  options: HttpOptions,
  timeoutMs: number,
): unknown {
  if (options.signal?.aborted) return options.signal.reason;
  if (controller.signal.aborted) {
    return new TimeoutError(`${describeUrl(url)} did not answer within ${timeoutMs / 1000} s`);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ServerError(`could not reach ${describeUrl(url)}: ${reason}`, { cause: error });
}

async function readBounded(response: Response, url: string, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new ServerError(`response from ${describeUrl(url)} exceeds ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** Form-encodes a body (`application/x-www-form-urlencoded`) from defined values only. */
export function formBody(params: Record<string, string | undefined>): URLSearchParams {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) body.set(name, value);
  }
  return body;
}

/**
 * Removes secrets (in every derived form, see `src/util/redact.ts`) and control
 * characters from server-supplied text, and shortens it. Redaction comes first: a cut
 * could leave a secret's start.
 */
export function clean(
  text: string,
  secrets: Iterable<string | undefined> | Redactor,
  max: number,
): string {
  const redactor = secrets instanceof Redactor ? secrets : new Redactor(secrets);
  // deno-lint-ignore no-control-regex
  const out = redactor.redact(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
  return out.length > max ? out.slice(0, max) + "…" : out;
}
