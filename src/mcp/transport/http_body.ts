/**
 * Response bodies for the HTTP transports: the media type, bounded reading of a whole
 * body or of its first bytes, JSON parsing that says what was parsed, and releasing a
 * body nobody will read.
 *
 * @module
 */

import { ConnectionClosedError, McpctlError, ProtocolError } from "../../errors.ts";
import { abortError } from "./abort.ts";
import { describeFetchError } from "./http_errors.ts";

/**
 * The media type of a response without parameters, lower-cased (`""` when absent).
 *
 * @example
 * ```ts
 * import { mediaType } from "./http_body.ts";
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

/**
 * The first bytes of a body as text (for error reports), at least `maxBytes` unless
 * the body is shorter; `cut` tells whether more was left unread. The rest is discarded
 * and a broken body yields what arrived before the break.
 */
export async function readBodyHead(
  res: Response,
  maxBytes: number,
): Promise<{ text: string; cut: boolean }> {
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
      if (size >= maxBytes) {
        cut = true;
        break;
      }
    }
  } catch { /* a broken body still gives its status */ }
  await reader.cancel().catch(() => {});
  return { text: new TextDecoder().decode(concat(chunks, size)), cut };
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
  return concat(chunks, size);
}

/** Parses JSON text, or throws a ProtocolError that says what was being parsed. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProtocolError(`${what} is not valid JSON`);
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
