/**
 * Small async helpers shared by every layer.
 *
 * @module
 */

/** The handle `setTimeout` returns under Deno. */
export type TimerId = ReturnType<typeof setTimeout>;

/** A clock that can be injected in tests. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId): void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id),
};

/**
 * Waits for `promise` at most `ms` milliseconds; resolves undefined on expiry. The
 * timer is always cleared, so no op is left behind.
 *
 * @example
 * ```ts
 * import { waitFor } from "./async.ts";
 * const v = await waitFor(new Promise<number>(() => {}), 10); // undefined
 * ```
 */
export async function waitFor<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: TimerId | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sleeps `ms` milliseconds, or until `signal` aborts (then resolves early). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
