/**
 * An exclusive lock between processes: an advisory lock the operating system keeps on
 * a lock file (`Deno.FsFile.tryLock`: `flock` on Unix, `LockFileEx` on Windows).
 *
 * Why an OS lock and not a pid file: the OS releases it when its holder ends, however
 * it ends (crash, SIGKILL, power cut), so there is nothing stale to detect, no pid to
 * check, no clock to trust and no advice to delete files. The lock file is created
 * once (mode 0600) and stays: removing it on release would let a waiter lock the
 * removed file while a newcomer locks a fresh one at the same path, both "holding" it.
 * The holder writes its pid into the file, only to name it in messages.
 *
 * Waiting: `tryLock` is polled with a short capped backoff (5 → 100 ms, with jitter)
 * rather than calling the blocking `lock()`, because a blocked `lock()` holds a thread
 * that nothing can cancel: the deadline and Ctrl-C must end the wait at once.
 *
 * Whatever else sits at the path is waited on like a held lock and named when the wait
 * gives up (after 10 s by default, {@linkcode TimeoutError}, exit 5): a directory, a
 * symbolic link (never followed, dangling or not), a FIFO or device (never opened: that
 * could block), a file this user may not open.
 *
 * Not for network file systems that ignore locks; mcpctl's data directory is local.
 *
 * @module
 */

import { InterruptedError, TimeoutError } from "../errors.ts";

/** Default wait for a lock: 10 s. */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/** Options of {@linkcode acquireLock}. */
export interface LockOptions {
  /** Give up with a {@linkcode TimeoutError} after this long. Default 10 s. */
  timeoutMs?: number;
  /** Stops waiting with an {@linkcode InterruptedError}. */
  signal?: AbortSignal;
  /** Told once, when the lock is not free at the first try, why it waits. */
  onWait?: (message: string) => void;
}

/** A held lock. Release it exactly once; further calls do nothing. */
export interface FileLock extends AsyncDisposable {
  /** The lock file. */
  readonly path: string;
  /** Releases the lock (the file stays). */
  release(): Promise<void>;
}

/**
 * Takes the lock at `path` (its directory must exist).
 *
 * @example
 * ```ts
 * import { acquireLock } from "./lock.ts";
 * const dir = await Deno.makeTempDir();
 * await using _lock = await acquireLock(`${dir}/x.lock`);
 * // ... exclusive section ...
 * ```
 *
 * @throws {TimeoutError} naming the path and what holds it, after `timeoutMs`.
 * @throws {InterruptedError} when `signal` aborts the wait.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<FileLock> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let backoff = 5;
  let told = false;
  for (;;) {
    if (options.signal?.aborted) throw interrupted(path);
    const attempt = await tryLock(path);
    if ("lock" in attempt) return attempt.lock;
    if (!told) {
      told = true;
      options.onWait?.(`waiting for the lock ${path}: ${await describe(path, attempt)}`);
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new TimeoutError(
        `gave up after ${formatSeconds(timeoutMs)} waiting for the lock ${path}: ${await describe(
          path,
          attempt,
        )}`,
        { hint: attempt.hint },
      );
    }
    // Jitter keeps a crowd of waiters from retrying in lockstep.
    await sleep(Math.min(remaining, backoff * (0.5 + Math.random())), options.signal, path);
    backoff = Math.min(backoff * 2, 100);
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

/** Why one attempt did not get the lock. */
interface Busy {
  /** What is in the way, for messages; `held` when another process holds the lock. */
  reason: string;
  hint: string;
}

async function tryLock(path: string): Promise<{ lock: FileLock } | Busy> {
  let info: Deno.FileInfo | undefined;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return unusable(path, error);
  }
  if (info && !info.isFile) {
    const what = info.isDirectory
      ? "a directory"
      : info.isSymlink
      ? "a symbolic link"
      : "something other than a file";
    return { reason: `${what} is in the way`, hint: `remove ${path}; mcpctl creates it again` };
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  } catch (error) {
    return unusable(path, error);
  }
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } catch (error) {
    file.close();
    return unusable(path, error);
  }
  if (!locked) {
    file.close();
    return { reason: "held", hint: "it is released when that process ends" };
  }
  await notePid(file);
  return { lock: heldLock(path, file) };
}

function unusable(path: string, error: unknown): Busy {
  const denied = error instanceof Deno.errors.PermissionDenied ||
    error instanceof Deno.errors.NotCapable;
  return denied
    ? {
      reason: "permission denied",
      hint: `make ${path} readable and writable for this user, or remove it`,
    }
    : { reason: messageOf(error), hint: `remove ${path}; mcpctl creates it again` };
}

async function describe(path: string, busy: Busy): Promise<string> {
  if (busy.reason !== "held") return busy.reason;
  const pid = await holderPid(path);
  return pid === undefined ? "another process holds it" : `process ${pid} holds it`;
}

// The holder's pid, for messages only; nothing depends on it.
async function notePid(file: Deno.FsFile): Promise<void> {
  try {
    await file.truncate(0);
    await writeAll(file, new TextEncoder().encode(`${Deno.pid}\n`));
  } catch { /* informational only */ }
}

async function holderPid(path: string): Promise<number | undefined> {
  try {
    const text = (await Deno.readTextFile(path)).trim();
    return /^\d{1,10}$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined; // Windows keeps a locked file unreadable
  }
}

function heldLock(path: string, file: Deno.FsFile): FileLock {
  let released = false;
  async function release(): Promise<void> {
    if (released) return;
    released = true;
    try {
      await file.truncate(0).catch(() => {});
      await file.unlock();
    } finally {
      // Closing releases the lock too, whatever unlock did.
      file.close();
    }
  }
  return { path, release, [Symbol.asyncDispose]: release };
}

/** Writes every byte (a single `write` may be partial). */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

function interrupted(path: string): InterruptedError {
  return new InterruptedError(`interrupted while waiting for the lock ${path}`);
}

function sleep(ms: number, signal: AbortSignal | undefined, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(interrupted(path));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
