/**
 * Credential storage through a docker-style credential helper
 * (`docker-credential-pass`, `-secretservice`, `-osxkeychain`, `-wincred`, ...).
 *
 * Protocol: the helper is run with one argument and reads stdin.
 * - `store`: stdin `{"ServerURL": id, "Username": "mcpctl", "Secret": "<JSON of StoredCredential>"}`
 * - `get`: stdin the id; stdout `{"ServerURL", "Username", "Secret"}`
 * - `erase`: stdin the id
 * - `list`: stdout `{"<ServerURL>": "<Username>", ...}`
 *
 * A non-zero exit whose output says "credentials not found in native keychain" means
 * "no entry". The id is {@linkcode credentialKeyId}:
 * `mcpctl://servers/<encoded name>/<encoded URL>`.
 *
 * Secrets go only through stdin, never arguments. A missing helper is a
 * {@linkcode ConfigError}, a failing one an {@linkcode AuthRequiredError}; neither ever
 * falls back to the credentials file.
 *
 * @module
 */

import { AuthRequiredError, ConfigError, TimeoutError } from "../errors.ts";
import { REDACTED, Redactor } from "../util/redact.ts";
import { type LockOptions, withLock } from "./lock.ts";
import { ensurePrivateDir } from "./file_store.ts";
import {
  credentialKeyId,
  type CredentialStore,
  isRecord,
  parseCredentialKeyId,
  parseStoredCredential,
  sameCredential,
  type StoredCredential,
  type StoreKey,
  type UpdateFunction,
} from "./store.ts";

/** What a helper run produced. */
export interface HelperResult {
  /** Exit code. */
  code: number;
  /** Everything written to stdout. */
  stdout: string;
  /** Everything written to stderr. */
  stderr: string;
}

/** Options of one helper run. */
export interface HelperSpawnOptions {
  /** Written to the helper's stdin, which is then closed. */
  stdin: string;
  /** Kill the helper and fail after this long. */
  timeoutMs: number;
}

/**
 * Runs a helper to completion. Must reject with `Deno.errors.NotFound` when the binary
 * does not exist, and with a {@linkcode TimeoutError} when it ran too long.
 */
export type HelperSpawn = (
  command: string,
  args: string[],
  options: HelperSpawnOptions,
) => Promise<HelperResult>;

/** Options of {@linkcode HelperCredentialStore}. */
export interface HelperStoreOptions {
  /** Helper name, e.g. `pass` for `docker-credential-pass`; a full name or path also works. */
  helper: string;
  /** Directory for the lock file `credential-helper.lock` (mcpctl's data directory). */
  stateDir: string;
  /** Process runner; defaults to one based on `Deno.Command`. */
  spawn?: HelperSpawn;
  /** Limit for one helper run; default 2 minutes (a helper may ask for a passphrase). */
  timeoutMs?: number;
  /** How to wait for the lock; see {@linkcode LockOptions}. */
  lock?: LockOptions;
}

/** Username stored with every entry. */
export const HELPER_USERNAME = "mcpctl";
const NOT_FOUND = "credentials not found in native keychain";
const DEFAULT_HELPER_TIMEOUT_MS = 120_000;

/**
 * The executable for a helper setting: `pass` → `docker-credential-pass`; a value that
 * already starts with `docker-credential-` or contains a path separator is used as is.
 */
export function helperBinary(helper: string): string {
  if (helper.includes("/") || helper.includes("\\")) return helper;
  return helper.startsWith("docker-credential-") ? helper : `docker-credential-${helper}`;
}

/**
 * {@linkcode CredentialStore} that keeps each entry in a credential helper.
 *
 * @example
 * ```ts
 * import { HelperCredentialStore } from "./helper_store.ts";
 * const store = new HelperCredentialStore({ helper: "pass", stateDir: "/home/me/.local/share/mcpctl" });
 * console.log(store.description); // credential helper docker-credential-pass
 * ```
 */
export class HelperCredentialStore implements CredentialStore {
  /** e.g. `credential helper docker-credential-pass`. */
  readonly description: string;
  /** The executable run. */
  readonly binary: string;
  /** Lock file that serializes writes between processes. */
  readonly lockPath: string;
  readonly #helper: string;
  readonly #stateDir: string;
  readonly #spawn: HelperSpawn;
  readonly #timeoutMs: number;
  readonly #lock: LockOptions;

  /** Touches nothing until used. */
  constructor(options: HelperStoreOptions) {
    this.#helper = options.helper;
    this.binary = helperBinary(options.helper);
    this.description = `credential helper ${this.binary}`;
    this.#stateDir = options.stateDir;
    // "/" separates paths on Windows too.
    this.lockPath = `${options.stateDir.replace(/[\\/]+$/, "")}/credential-helper.lock`;
    this.#spawn = options.spawn ?? spawnHelper;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HELPER_TIMEOUT_MS;
    this.#lock = options.lock ?? {};
  }

  /** Reads an entry through `get`. */
  async get(key: StoreKey): Promise<StoredCredential | undefined> {
    const id = credentialKeyId(key);
    const result = await this.#run("get", id);
    if (result === undefined) return undefined;
    let reply: unknown;
    try {
      reply = JSON.parse(result.stdout);
    } catch {
      throw this.#unreadable("its reply to get is not JSON");
    }
    if (!isRecord(reply) || typeof reply.Secret !== "string") {
      throw this.#unreadable("its reply to get has no Secret");
    }
    // docker-credential-pass 0.6 answers a missing entry with exit 0 and empty fields.
    if (reply.Secret === "") return undefined;
    // A Secret that is not mcpctl's JSON counts as no entry, as unusable entries do in the
    // credentials file: the next sign-in replaces it instead of failing on it forever.
    try {
      return parseStoredCredential(JSON.parse(reply.Secret));
    } catch {
      return undefined;
    }
  }

  /** Replaces an entry (under the lock), without reading it first. */
  async put(key: StoreKey, value: StoredCredential): Promise<void> {
    const clean = parseStoredCredential(value) ?? {};
    await this.#locked(() => this.#store(credentialKeyId(key), clean));
  }

  /** Removes an entry (under the lock); `true` when one existed. */
  delete(key: StoreKey): Promise<boolean> {
    const id = credentialKeyId(key);
    return this.#locked(async () => {
      try {
        return (await this.#run("erase", id)) !== undefined;
      } catch (error) {
        // Not every helper says "not found" in the standard words (pass: "... is not in
        // the password store"); an entry that `list` does not show did not exist.
        if (!(error instanceof AuthRequiredError)) throw error;
        const listed = await this.list().catch(() => undefined);
        if (listed?.every((k) => credentialKeyId(k) !== id)) return false;
        throw error;
      }
    });
  }

  /** Read-modify-write under the lock; see {@linkcode CredentialStore.update}. */
  update(key: StoreKey, fn: UpdateFunction): Promise<StoredCredential | undefined> {
    return this.#locked(async () => {
      const current = await this.get(key);
      const next = await fn(current === undefined ? undefined : structuredClone(current));
      const clean = next === undefined ? undefined : parseStoredCredential(next);
      if (sameCredential(current, clean)) return current;
      const id = credentialKeyId(key);
      if (clean === undefined) await this.#run("erase", id);
      else await this.#store(id, clean);
      return clean;
    });
  }

  /** Keys of mcpctl's entries, from `list`. */
  async list(): Promise<StoreKey[]> {
    const result = await this.#run("list", "");
    let reply: unknown;
    try {
      reply = JSON.parse(result?.stdout || "{}");
    } catch {
      throw this.#unreadable("its reply to list is not JSON");
    }
    if (!isRecord(reply)) throw this.#unreadable("its reply to list is not an object");
    const keys: StoreKey[] = [];
    for (const id of Object.keys(reply)) {
      const key = parseCredentialKeyId(id);
      if (key !== undefined) keys.push(key);
    }
    return keys;
  }

  async #locked<T>(fn: () => Promise<T>): Promise<T> {
    await ensurePrivateDir(this.#stateDir, false);
    return await withLock(this.lockPath, fn, this.#lock);
  }

  async #store(id: string, credential: StoredCredential): Promise<void> {
    const secret = JSON.stringify(credential);
    await this.#run(
      "store",
      JSON.stringify({ ServerURL: id, Username: HELPER_USERNAME, Secret: secret }),
      secretsOf(credential, secret),
    );
  }

  /** Runs one operation; `undefined` when the helper says the entry does not exist. */
  async #run(
    op: "get" | "store" | "erase" | "list",
    stdin: string,
    secrets: string[] = [],
  ): Promise<HelperResult | undefined> {
    let result: HelperResult;
    try {
      result = await this.#spawn(this.binary, [op], { stdin, timeoutMs: this.#timeoutMs });
    } catch (error) {
      if (error instanceof TimeoutError) {
        throw new TimeoutError(
          `credential helper ${this.binary} did not finish "${op}" within ${
            Math.round(this.#timeoutMs / 1000)
          } s`,
          { cause: error },
        );
      }
      if (error instanceof Deno.errors.NotFound) {
        throw new ConfigError(`credential helper ${this.binary} was not found on PATH`, {
          cause: error,
          hint: `install ${this.binary}, or change credentials.helper / ` +
            `MCPCTL_CREDENTIAL_HELPER (now "${this.#helper}")`,
        });
      }
      throw new ConfigError(
        `cannot run credential helper ${this.binary}: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    if (result.code === 0) return result;
    const output = `${result.stdout}\n${result.stderr}`;
    if (output.toLowerCase().includes(NOT_FOUND)) {
      if (op === "get" || op === "erase") return undefined;
    }
    // Helpers print errors on stdout (docker's convention) or stderr: show the first line.
    const line = firstLine(result.stderr) ?? firstLine(result.stdout) ?? "no message";
    throw new AuthRequiredError(
      `credential helper ${this.binary} failed on "${op}" (exit ${result.code}): ${
        redact(line, secrets)
      }`,
      { hint: `check that ${this.binary} works, e.g. run: ${this.binary} list` },
    );
  }

  #unreadable(what: string): AuthRequiredError {
    return new AuthRequiredError(`credential helper ${this.binary} gave unusable data: ${what}`, {
      hint: "sign in again to replace the entry",
    });
  }
}

/**
 * The default {@linkcode HelperSpawn}: `Deno.Command` with piped stdio. Writes and
 * closes stdin while reading stdout and stderr to the end, then reaps the process; on
 * timeout the helper is killed and reaped before rejecting.
 */
export async function spawnHelper(
  command: string,
  args: string[],
  options: HelperSpawnOptions,
): Promise<HelperResult> {
  const child = new Deno.Command(command, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Start reading before writing, so a helper that writes a lot before reading cannot
  // deadlock against us.
  const output = child.output();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, options.timeoutMs);
  try {
    const writer = child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    } catch {
      // The helper exited without reading stdin; its exit status tells what happened.
      await writer.abort().catch(() => {});
    }
    const { code, stdout, stderr } = await output;
    if (timedOut) throw new TimeoutError(`${command} ${args.join(" ")} timed out`);
    const decoder = new TextDecoder();
    return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
  } finally {
    clearTimeout(timer);
  }
}

function secretsOf(credential: StoredCredential, serialized: string): string[] {
  // The redactor adds the JSON-escaped form, as the payload appears inside stdin.
  const values = [
    serialized,
    credential.tokens?.accessToken,
    credential.tokens?.refreshToken,
    credential.registration?.clientSecret,
  ];
  return values.filter((v): v is string => typeof v === "string");
}

function firstLine(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() !== "") return line.trim();
  }
  return undefined;
}

function redact(line: string, secrets: string[]): string {
  // deno-lint-ignore no-control-regex
  let out = new Redactor(secrets).redact(line.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""));
  // A helper may echo part of the payload; cut anything that looks like our JSON.
  const secretField = out.search(/"?Secret"?\s*:/);
  if (secretField >= 0) out = out.slice(0, secretField) + REDACTED;
  return out.length > 200 ? out.slice(0, 200) + "…" : out;
}
