/**
 * The SSE streams of the Streamable HTTP transport: reading one to its end, resuming
 * a request's stream with `Last-Event-ID` after the server's `retry` delay (SEP-1699),
 * and keeping the optional server stream (GET) open.
 *
 * @module
 */

import { ConnectionClosedError, McpctlError, ProtocolError } from "../../errors.ts";
import { abortError, type Clock, sleep } from "./abort.ts";
import { discardBody, mediaType, parseJson } from "./http_body.ts";
import { describeFetchError, NetworkError } from "./http_errors.ts";
import type { HttpRequester } from "./http_request.ts";
import { displayUrl } from "./http_url.ts";
import { SseDecoder, SseTooLargeError } from "./sse.ts";

/** What the stream functions need from their transport. */
export interface StreamContext {
  /** Sends the GETs; receives the log lines. */
  requester: HttpRequester;
  /** The MCP endpoint. */
  url: URL;
  /** Timers for the waits before reconnecting. */
  clock: Clock;
  /** Largest JSON body or SSE event accepted. */
  maxMessageBytes: number;
  /** Reconnection attempts without progress before giving up. */
  maxReconnects: number;
  /** Wait before reconnecting when the server gave no `retry`. */
  defaultRetryMs: number;
  /** The session and protocol version headers as they stand at the time of the call. */
  protocolHeaders(): Record<string, string>;
}

/** Options of {@linkcode followStream}. */
export interface FollowStreamOptions {
  /** The POST's answer, an SSE stream. */
  first: Response;
  /** The request's method, for messages. */
  label: string;
  /** Aborts reading and waiting. */
  signal: AbortSignal;
  /** Receives each message (possibly a batch). */
  onMessage: (message: unknown) => void;
  /** Whether the request's response has arrived. */
  answered: () => boolean;
}

/** Options of {@linkcode runServerStream}. */
export interface ServerStreamOptions {
  /** Ends the stream. */
  signal: AbortSignal;
  /** Receives each message (possibly a batch). */
  onMessage: (message: unknown) => void;
}

// Where an SSE stream stands across reconnections.
interface StreamState {
  lastEventId: string;
  retry: number | undefined;
}

/**
 * Reads a request's SSE stream until its response arrived; when the stream ends
 * before, resumes it with GET + `Last-Event-ID` after the server's retry delay.
 *
 * @throws {ConnectionClosedError} when the stream cannot be resumed (no event id, too
 * many attempts without progress, or a resumption refused).
 * @throws {ProtocolError} on an oversized event or bad JSON.
 */
export async function followStream(
  context: StreamContext,
  options: FollowStreamOptions,
): Promise<void> {
  const { signal, label } = options;
  const state: StreamState = { lastEventId: "", retry: undefined };
  let res: Response | undefined = options.first;
  let attempts = 0;
  for (;;) {
    if (res !== undefined) {
      const progressed = await readSse(context, {
        res,
        state,
        signal,
        onMessage: options.onMessage,
      });
      if (options.answered()) return;
      if (progressed) attempts = 0;
      res = undefined;
    }
    if (state.lastEventId === "") {
      throw new ConnectionClosedError(
        `the stream for ${label} from ${displayUrl(context.url)} ended before its response` +
          " (no event id to resume from)",
      );
    }
    if (attempts >= context.maxReconnects) {
      throw new ConnectionClosedError(
        `the stream for ${label} from ${displayUrl(context.url)} ended before its response` +
          ` (gave up after ${attempts} reconnection attempts)`,
      );
    }
    attempts++;
    const wait = state.retry ?? context.defaultRetryMs;
    context.requester.log(`stream for ${label} ended before its response; resuming in ${wait} ms`);
    await sleep(wait, signal, context.clock);
    try {
      res = await resume(context, { lastEventId: state.lastEventId, signal, label });
    } catch (e) {
      if (!(e instanceof NetworkError) || signal.aborted) throw e;
      context.requester.log(`resuming the stream for ${label} failed: ${e.message}`);
    }
  }
}

/**
 * The optional GET stream: best effort, never fatal; reopened (resuming when the
 * server gave an event id) until it fails `maxReconnects` times without progress.
 * Returns when the server offers no stream or it is given up.
 */
export async function runServerStream(
  context: StreamContext,
  options: ServerStreamOptions,
): Promise<void> {
  const { url, requester } = context;
  const { signal } = options;
  const state: StreamState = { lastEventId: "", retry: undefined };
  let failures = 0;
  for (;;) {
    const headers: Record<string, string> = {
      ...context.protocolHeaders(),
      "Accept": "text/event-stream",
    };
    if (state.lastEventId !== "") headers["Last-Event-ID"] = state.lastEventId;
    const res = await requester.request({
      method: "GET",
      url,
      headers,
      signal,
      // A background stream must never start a sign-in on its own.
      authRetry: false,
    });
    const type = mediaType(res);
    if (res.status < 200 || res.status > 299 || type !== "text/event-stream") {
      await discardBody(res);
      requester.log(
        `no server stream at ${displayUrl(url)} (HTTP ${res.status}${
          type ? ` ${type.slice(0, 80)}` : ""
        })`,
      );
      return;
    }
    requester.log(`server stream open at ${displayUrl(url)}`);
    const progressed = await readSse(context, {
      res,
      state,
      signal,
      onMessage: options.onMessage,
    });
    if (progressed) failures = 0;
    if (++failures > context.maxReconnects) {
      requester.log("server stream ended; not reopening it");
      return;
    }
    const wait = state.retry ?? context.defaultRetryMs;
    requester.log(`server stream ended; reopening in ${wait} ms`);
    await sleep(wait, signal, context.clock);
  }
}

async function resume(
  context: StreamContext,
  options: { lastEventId: string; signal: AbortSignal; label: string },
): Promise<Response> {
  const { url, requester } = context;
  const res = await requester.request({
    method: "GET",
    url,
    headers: {
      ...context.protocolHeaders(),
      "Accept": "text/event-stream",
      "Last-Event-ID": options.lastEventId,
    },
    signal: options.signal,
  });
  const type = mediaType(res);
  if (res.status >= 200 && res.status <= 299 && type === "text/event-stream") {
    requester.log(`GET ${displayUrl(url)} resumed the stream for ${options.label}`);
    return res;
  }
  await discardBody(res);
  const why = res.status >= 200 && res.status <= 299
    ? `Content-Type ${JSON.stringify(type.slice(0, 80))}`
    : `HTTP ${res.status}`;
  throw new ConnectionClosedError(
    `the stream for ${options.label} from ${displayUrl(url)} ended before its response` +
      ` and resuming it failed (${why})`,
  );
}

// Reads one SSE response to its end. Returns whether a message arrived. A broken
// connection counts as an end (the caller may resume); an oversized event or bad
// JSON is a ProtocolError.
async function readSse(
  context: StreamContext,
  options: {
    res: Response;
    state: StreamState;
    signal: AbortSignal;
    onMessage: (message: unknown) => void;
  },
): Promise<boolean> {
  const { res, state, signal, onMessage } = options;
  if (res.body === null) return false;
  let progressed = false;
  const what = `an event from ${displayUrl(context.url)}`;
  const decoder = new SseDecoder((event) => {
    // Empty data is a priming event (SEP-1699): it only carries an id and retry.
    if (event.event !== "message" || event.data.trim() === "") return;
    const message = parseJson(event.data, what);
    progressed = true;
    onMessage(message);
  }, {
    maxEventBytes: context.maxMessageBytes,
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
    context.requester.log(
      `stream from ${displayUrl(context.url)} broke: ${describeFetchError(e)}`,
    );
  } finally {
    reader.releaseLock();
  }
  return progressed;
}
