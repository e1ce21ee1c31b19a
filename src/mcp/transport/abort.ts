/**
 * Cancellation and waiting for the HTTP transports: linked signals, the error an abort
 * reports, abortable sleeps and races, and the bounded drain of pending sends on close.
 *
 * @module
 */

import { ConnectionClosedError, McpctlError } from "../../errors.ts";
import { type Clock as FullClock, systemClock as fullSystemClock } from "../../util/async.ts";

/** Timer functions, injectable so tests can observe or control waits. */
export type Clock = Pick<FullClock, "setTimeout" | "clearTimeout">;

/** The real timers. */
export const systemClock: Clock = fullSystemClock;

/** Bound on what `close()` waits for: pending sends, then the session `DELETE`. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 2000;

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
