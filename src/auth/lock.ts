/**
 * An exclusive lock between processes, made of a lock file created with `createNew`.
 *
 * The file holds `{pid, hostname, createdAt, token}`. Waiters retry with backoff up to
 * a timeout. A lock older than `staleMs` whose holder is gone (its pid is dead on this
 * host, or it cannot be checked: another host, Windows, unreadable content) is broken,
 * under a short-lived `<path>.break` lock so that two waiters never both break it and
 * then delete each other's fresh lock.
 *
 * @module
 */

import { InterruptedError, McpctlError, TimeoutError } from "../errors.ts";

/** Default wait for a lock: 10 s. */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
/** Default age after which a lock whose holder is gone is broken: 30 s. */
export const DEFAULT_STALE_LOCK_MS = 30_000;

/** Options of {@linkcode acquireLock}. */
export interface LockOptions {
  /** Give up with a {@linkcode TimeoutError} after this long. Default 10 s. */
  timeoutMs?: number;
  /** A lock older than this whose holder is gone is broken. Default 30 s. */
  staleMs?: number;
  /** Stops waiting with an {@linkcode InterruptedError}. */
  signal?: AbortSignal;
}

/** A held lock. Release it exactly once; further calls do nothing. */
export interface FileLock extends AsyncDisposable {
  /** The lock file. */
  readonly path: string;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes the lock file at `path` (its directory must exist).
 *
 * @example
 * ```ts
 * import { acquireLock } from "./lock.ts";
 * const dir = await Deno.makeTempDir();
 * await using _lock = await acquireLock(`${dir}/x.lock`);
 * // ... exclusive section ...
 * ```
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<FileLock> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_LOCK_MS;
  const body = JSON.stringify({
    pid: Deno.pid,
    hostname: hostname(),
    createdAt: Date.now(),
    token: crypto.randomUUID(),
  }) + "\n";
  const deadline = Date.now() + timeoutMs;
  let backoff = 5;
  for (;;) {
    if (options.signal?.aborted) {
      throw new InterruptedError(`interrupted while waiting for the lock ${path}`);
    }
    if (await tryCreate(path, body)) return heldLock(path, body);
    if (await breakIfStale(path, staleMs)) continue;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new TimeoutError(
        `timed out after ${formatSeconds(timeoutMs)} waiting for the lock file ${path}` +
          (await describeHolder(path)),
        { hint: `if no other mcpctl is running, delete ${path}` },
      );
    }
    // Jitter keeps a crowd of waiters from retrying in lockstep.
    await sleep(Math.min(remaining, backoff * (0.5 + Math.random())), options.signal);
    backoff = Math.min(backoff * 2, 200);
  }
}

/**
 * Runs `fn` while holding the lock at `path`, and releases it however `fn` ends.
 *
 * @example
 * ```ts
 * import { withLock } from "./lock.ts";
 * const dir = await Deno.makeTempDir();
 * const n = await withLock(`${dir}/x.lock`, () => 42);
 * ```
 */
export async function withLock<T>(
  path: string,
  fn: () => T | Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = await acquireLock(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

/**
 * Whether a process with this pid exists on this host: `undefined` when that cannot be
 * told (Windows, or an unexpected error).
 */
export function isProcessAlive(pid: number): boolean | undefined {
  if (Deno.build.os === "windows" || !Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    // Signal 0 checks existence and permission without delivering anything.
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    if (error instanceof Deno.errors.PermissionDenied) return true;
    return undefined;
  }
}

async function tryCreate(path: string, body: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw new McpctlError(`cannot create the lock file ${path}: ${messageOf(error)}`, {
      cause: error,
    });
  }
  try {
    await writeAll(file, new TextEncoder().encode(body));
  } finally {
    file.close();
  }
  return true;
}

function heldLock(path: string, body: string): FileLock {
  let released = false;
  async function release(): Promise<void> {
    if (released) return;
    released = true;
    // Only remove our own lock: if it was broken as stale, the file is someone else's.
    if ((await readOrUndefined(path)) === body) await removeIfExists(path);
  }
  return { path, release, [Symbol.asyncDispose]: release };
}

async function breakIfStale(path: string, staleMs: number): Promise<boolean> {
  const seen = await lockState(path);
  if (seen === undefined) return true; // gone already: retry at once
  if (!isStale(seen, staleMs)) return false;
  const breaker = `${path}.break`;
  if (!(await tryCreate(breaker, `${Deno.pid}\n`))) {
    // Another waiter is breaking it; its .break lives for microseconds unless it died.
    const breakerState = await lockState(breaker);
    if (breakerState && Date.now() - breakerState.mtime > staleMs) await removeIfExists(breaker);
    return false;
  }
  try {
    // Re-check under the breaker: the file may have been replaced since we looked.
    const now = await lockState(path);
    if (now === undefined) return true;
    if (now.content !== seen.content || now.mtime !== seen.mtime) return false;
    await removeIfExists(path);
    return true;
  } finally {
    await removeIfExists(breaker);
  }
}

interface LockState {
  content: string;
  mtime: number;
}

async function lockState(path: string): Promise<LockState | undefined> {
  try {
    const [info, content] = await Promise.all([Deno.stat(path), Deno.readTextFile(path)]);
    return { content, mtime: info.mtime?.getTime() ?? 0 };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

function isStale(state: LockState, staleMs: number): boolean {
  if (Date.now() - state.mtime < staleMs) return false;
  const holder = parseHolder(state.content);
  if (holder === undefined || holder.hostname !== hostname()) return true;
  return isProcessAlive(holder.pid) !== true;
}

function parseHolder(content: string): { pid: number; hostname: string } | undefined {
  try {
    const value: unknown = JSON.parse(content);
    if (
      typeof value === "object" && value !== null && "pid" in value &&
      typeof value.pid === "number"
    ) {
      const host = "hostname" in value && typeof value.hostname === "string" ? value.hostname : "";
      return { pid: value.pid, hostname: host };
    }
  } catch {
    // Empty (being written, or its writer died) or foreign content.
  }
  return undefined;
}

async function describeHolder(path: string): Promise<string> {
  const state = await lockState(path).catch(() => undefined);
  const holder = state && parseHolder(state.content);
  return holder ? ` (held by pid ${holder.pid})` : "";
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

async function removeIfExists(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** Writes every byte (a single `write` may be partial). */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new InterruptedError("interrupted while waiting for a lock"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

let cachedHostname: string | undefined;
function hostname(): string {
  if (cachedHostname === undefined) {
    try {
      cachedHostname = Deno.hostname();
    } catch {
      cachedHostname = "";
    }
  }
  return cachedHostname;
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
