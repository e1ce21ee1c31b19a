/**
 * The answer to a Streamable HTTP POST carrying a request: a JSON body or an SSE
 * stream, from which every message is delivered while the request's own response is
 * watched for (and, for an internal request, kept back).
 *
 * @module
 */

import { ProtocolError } from "../../errors.ts";
import { discardBody, mediaType, parseJson, readLimitedBody } from "./http_body.ts";
import { messageOf } from "./http_errors.ts";
import { followStream, type StreamContext } from "./http_stream.ts";
import { displayUrl } from "./http_url.ts";
import type { JsonRpcId, JsonRpcRequest } from "./types.ts";

/** Waiting for one request's response (or swallowing it). */
export interface ResponseTracker {
  /** The request's id. */
  id: JsonRpcId;
  /** Whether the response arrived. */
  answered: boolean;
  /** Keep the response instead of delivering it. */
  swallow: boolean;
  /** The response, when swallowed. */
  response: unknown;
  /** Called when the response arrives. */
  onAnswer: () => void;
}

/** Options of {@linkcode dispatchMessages}. */
export interface DispatchOptions {
  /** The request whose response is watched for, if any. */
  tracker?: ResponseTracker | undefined;
  /** Hands one message to the transport's owner; may throw. */
  deliver: (message: object) => void;
  /** Receives diagnostic lines. */
  log: (line: string) => void;
}

/** Options of {@linkcode readAnswer}. */
export interface AnswerOptions {
  /** The request the POST carried. */
  request: JsonRpcRequest;
  /** Aborts reading. */
  signal: AbortSignal;
  /** Keep the response back and return it, instead of delivering it. */
  swallow: boolean;
  /** The transport's stream settings (URL, limits, requester for resuming). */
  streams: StreamContext;
  /** Hands one message to the transport's owner; may throw. */
  deliver: (message: object) => void;
  /** Keeps a task running in the background until the transport closes. */
  track: (task: Promise<void>) => void;
}

/**
 * Delivers each message of a parsed body or event (batches are split), noting and
 * possibly swallowing the tracked response. A throwing `deliver` must not break the
 * stream: its failure is logged.
 */
export function dispatchMessages(parsed: unknown, options: DispatchOptions): void {
  const { tracker, log } = options;
  const items = Array.isArray(parsed) ? parsed : [parsed];
  for (const item of items) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      log("skipped a JSON value that is not a message");
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
      options.deliver(item);
    } catch (e) {
      log(`message handler failed: ${messageOf(e)}`);
    }
  }
}

/**
 * Reads the 2xx answer to a request's POST. Resolves once the response was delivered
 * (with it when swallowed), or with undefined when the server accepted the request
 * without a body (the response may come on the server stream). An SSE answer may go
 * on after the response: it is read on in the background.
 *
 * @throws {ProtocolError} on a wrong content type, bad JSON, an oversized message or
 * a JSON body without the response.
 * @throws {ConnectionClosedError} when the answer stream ended without the response.
 */
export async function readAnswer(res: Response, options: AnswerOptions): Promise<unknown> {
  const { request, signal, streams } = options;
  const log = (line: string) => streams.requester.log(line);
  let answered!: () => void;
  const answer = new Promise<void>((resolve) => answered = resolve);
  const tracker: ResponseTracker = {
    id: request.id,
    answered: false,
    swallow: options.swallow,
    response: undefined,
    onAnswer: () => answered(),
  };
  const dispatch = (parsed: unknown) =>
    dispatchMessages(parsed, { tracker, deliver: options.deliver, log });
  const type = mediaType(res);
  const what = `the answer to ${request.method} from ${displayUrl(streams.url)}`;
  if (type === "text/event-stream") {
    const stream = followStream(streams, {
      first: res,
      label: request.method,
      signal,
      onMessage: dispatch,
      answered: () => tracker.answered,
    });
    // After the response the stream may go on (late notifications): keep reading it
    // in the background; close() aborts it.
    options.track(stream.catch((e) => {
      if (tracker.answered && !signal.aborted) log(`${what}: ${messageOf(e)}`);
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
  const bytes = await readLimitedBody(res, { max: streams.maxMessageBytes, signal, what });
  const text = new TextDecoder().decode(bytes);
  if (type === "" && text.trim() === "") {
    // Accepted without a body: the response may still come on the server stream.
    log(`${what} had no body; expecting the response on the server stream`);
    return undefined;
  }
  dispatch(parseJson(text, what));
  if (!tracker.answered) throw new ProtocolError(`${what} does not contain its response`);
  return tracker.response;
}

function isResponseTo(item: object, id: JsonRpcId): boolean {
  return !("method" in item) && "id" in item && item.id === id;
}
