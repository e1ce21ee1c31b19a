/**
 * Credential storage in a JSON file, `credentials.json` in mcpctl's data directory.
 *
 * Layout: `{"version": 1, "entries": {"<credentialKeyId>": {serverName, serverUrl,
 * updatedAt, tokens?, registration?, authServer?}}}`.
 *
 * Safety: the file is mode 0600 and always replaced atomically (temp file in the same
 * directory, created 0600, fsync'ed, renamed over), so readers never see half a file
 * and take no lock. Every write is a read-modify-write under `credentials.json.lock`,
 * so writers in separate processes never lose each other's entries.
 *
 * The directory is created 0700. When it already exists with group or other bits, it is
 * tightened back to 0700 only if it is a default location (`…/mcpctl`), never a
 * directory the user chose with `MCPCTL_HOME` or an explicit path: that one may be
 * shared on purpose, and the 0600 file protects the secrets either way.
 *
 * @module
 */

import { ConfigError, McpctlError } from "../errors.ts";
import { type LockOptions, withLock, writeAll } from "./lock.ts";
import {
  credentialKeyId,
  type CredentialStore,
  isRecord,
  normalizeServerUrl,
  parseStoredCredential,
  sameCredential,
  type StoredCredential,
  type StoreKey,
  type UpdateFunction,
} from "./store.ts";

/** File name of the credentials file. */
export const CREDENTIALS_FILE = "credentials.json";
const FORMAT_VERSION = 1;

/** Options of {@linkcode mcpctlDataDir}. */
export interface DataDirOptions {
  /** Environment; defaults to `Deno.env.toObject()`. */
  env?: Record<string, string | undefined>;
  /** Home directory; defaults to `HOME` (`USERPROFILE` on Windows) from `env`. */
  home?: string;
  /** Operating system; defaults to `Deno.build.os`. */
  platform?: typeof Deno.build.os;
}

/** Where mcpctl keeps its data, and whether the location is a default one. */
export interface DataDir {
  /** Absolute directory path. */
  dir: string;
  /** True unless it came from `MCPCTL_HOME`. */
  isDefault: boolean;
  /** The home directory, when known (for abbreviating paths as `~`). */
  home?: string;
}

/**
 * The data directory: `$MCPCTL_HOME` if set, else `$XDG_DATA_HOME/mcpctl` (if absolute),
 * else `~/.local/share/mcpctl`; on Windows `%LOCALAPPDATA%\mcpctl` in place of the last
 * two.
 *
 * @throws {ConfigError} when no home directory can be found.
 *
 * @example
 * ```ts
 * import { mcpctlDataDir } from "./file_store.ts";
 * mcpctlDataDir({ env: { HOME: "/home/me" }, platform: "linux" }).dir;
 * // "/home/me/.local/share/mcpctl"
 * ```
 */
export function mcpctlDataDir(options: DataDirOptions = {}): DataDir {
  const env = options.env ?? Deno.env.toObject();
  const platform = options.platform ?? Deno.build.os;
  const windows = platform === "windows";
  const home = options.home ?? nonEmpty(windows ? env.USERPROFILE ?? env.HOME : env.HOME);
  const withHome = home !== undefined ? { home } : {};
  const explicit = nonEmpty(env.MCPCTL_HOME);
  if (explicit !== undefined) return { dir: explicit, isDefault: false, ...withHome };
  if (windows) {
    const local = nonEmpty(env.LOCALAPPDATA) ??
      (home !== undefined ? joinPath(home, "AppData\\Local", platform) : undefined);
    if (local !== undefined) {
      return { dir: joinPath(local, "mcpctl", platform), isDefault: true, ...withHome };
    }
  } else {
    const xdg = nonEmpty(env.XDG_DATA_HOME);
    // The XDG spec says relative values are invalid and must be ignored.
    if (xdg !== undefined && xdg.startsWith("/")) {
      return { dir: joinPath(xdg, "mcpctl", platform), isDefault: true, ...withHome };
    }
    if (home !== undefined) {
      return {
        dir: joinPath(home, ".local/share/mcpctl", platform),
        isDefault: true,
        ...withHome,
      };
    }
  }
  throw new ConfigError("cannot find a directory for mcpctl's credentials", {
    hint: "set MCPCTL_HOME (or HOME) to a directory",
  });
}

/**
 * Creates `dir` (mode 0700) if missing; with `tighten`, also chmods an existing one that
 * grants group or other access back to 0700.
 */
export async function ensurePrivateDir(dir: string, tighten: boolean): Promise<void> {
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    if (!tighten || Deno.build.os === "windows") return;
    const info = await Deno.stat(dir);
    if (info.mode !== null && (info.mode & 0o077) !== 0) await Deno.chmod(dir, 0o700);
  } catch (error) {
    throw new McpctlError(`cannot create the directory ${dir}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/** Options of {@linkcode FileCredentialStore}. */
export interface FileStoreOptions extends DataDirOptions {
  /** Use this file instead of `credentials.json` in the data directory (tests, tools). */
  path?: string;
  /** How to wait for the lock; see {@linkcode LockOptions}. */
  lock?: LockOptions;
}

interface FileEntry extends StoredCredential {
  serverName: string;
  serverUrl: string;
  updatedAt: number;
}

interface FileDocument {
  version: number;
  entries: Record<string, FileEntry>;
}

/**
 * {@linkcode CredentialStore} backed by `credentials.json`.
 *
 * @example
 * ```ts
 * import { FileCredentialStore } from "./file_store.ts";
 * const store = new FileCredentialStore({ env: { MCPCTL_HOME: await Deno.makeTempDir() } });
 * const key = { serverName: "demo", serverUrl: "https://mcp.example/mcp" };
 * await store.put(key, { tokens: { accessToken: "t", tokenType: "Bearer" } });
 * console.log((await store.get(key))?.tokens?.accessToken); // t
 * ```
 */
export class FileCredentialStore implements CredentialStore {
  /** e.g. `file ~/.local/share/mcpctl/credentials.json`. */
  readonly description: string;
  /** The credentials file. */
  readonly path: string;
  /** Its lock file. */
  readonly lockPath: string;
  readonly #dir: string;
  readonly #tighten: boolean;
  readonly #lock: LockOptions;
  readonly #platform: typeof Deno.build.os;

  /** Resolves the location; touches nothing on disk until used. */
  constructor(options: FileStoreOptions = {}) {
    this.#platform = options.platform ?? Deno.build.os;
    let home: string | undefined;
    if (options.path !== undefined) {
      this.path = options.path;
      this.#dir = dirname(options.path);
      this.#tighten = false;
      home = options.home;
    } else {
      const data = mcpctlDataDir(options);
      this.#dir = data.dir;
      this.path = joinPath(data.dir, CREDENTIALS_FILE, this.#platform);
      this.#tighten = data.isDefault;
      home = data.home;
    }
    this.lockPath = `${this.path}.lock`;
    this.#lock = options.lock ?? {};
    this.description = `file ${abbreviateHome(this.path, home)}`;
  }

  /** Reads an entry; no lock needed since the file is replaced atomically. */
  async get(key: StoreKey): Promise<StoredCredential | undefined> {
    const doc = await this.#read();
    return toCredential(doc.entries[credentialKeyId(key)]);
  }

  /** Replaces an entry. */
  async put(key: StoreKey, value: StoredCredential): Promise<void> {
    await this.update(key, () => value);
  }

  /** Removes an entry; `true` when one existed. */
  async delete(key: StoreKey): Promise<boolean> {
    let existed = false;
    await this.update(key, (current) => {
      existed = current !== undefined;
      return undefined;
    });
    return existed;
  }

  /** Read-modify-write of one entry under the lock; see {@linkcode CredentialStore.update}. */
  update(key: StoreKey, fn: UpdateFunction): Promise<StoredCredential | undefined> {
    const id = credentialKeyId(key);
    return this.#locked(async () => {
      const doc = await this.#read();
      const current = toCredential(doc.entries[id]);
      const next = await fn(current === undefined ? undefined : structuredClone(current));
      const clean = next === undefined ? undefined : parseStoredCredential(next);
      if (sameCredential(current, clean)) return current;
      if (clean === undefined) {
        delete doc.entries[id];
      } else {
        doc.entries[id] = {
          serverName: key.serverName,
          serverUrl: normalizeServerUrl(key.serverUrl),
          updatedAt: Date.now(),
          ...clean,
        };
      }
      await this.#write(doc);
      return clean;
    });
  }

  /** Keys of all entries. */
  async list(): Promise<StoreKey[]> {
    const doc = await this.#read();
    return Object.values(doc.entries).map((e) => ({
      serverName: e.serverName,
      serverUrl: e.serverUrl,
    }));
  }

  async #locked<T>(fn: () => Promise<T>): Promise<T> {
    await ensurePrivateDir(this.#dir, this.#tighten);
    return await withLock(this.lockPath, fn, this.#lock);
  }

  async #read(): Promise<FileDocument> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return { version: FORMAT_VERSION, entries: {} };
      throw new ConfigError(`cannot read the credentials file ${this.path}: ${messageOf(error)}`, {
        cause: error,
      });
    }
    return parseDocument(text, this.path);
  }

  async #write(doc: FileDocument): Promise<void> {
    const bytes = new TextEncoder().encode(JSON.stringify(doc, null, 2) + "\n");
    const tmp = `${this.path}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    try {
      const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
      try {
        await writeAll(file, bytes);
        await file.sync();
      } finally {
        file.close();
      }
      await Deno.rename(tmp, this.path);
    } catch (error) {
      await Deno.remove(tmp).catch(() => {});
      throw new McpctlError(
        `cannot write the credentials file ${this.path}: ${messageOf(error)}`,
        { cause: error },
      );
    }
    await syncDir(this.#dir, this.#platform);
  }
}

function parseDocument(text: string, path: string): FileDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Never overwrite it: that would drop every other server's sign-in.
    throw new ConfigError(`the credentials file ${path} is not valid JSON`, {
      hint: `delete ${path} and sign in again`,
    });
  }
  if (!isRecord(value) || !isRecord(value.entries)) {
    throw new ConfigError(`the credentials file ${path} has an unknown layout`, {
      hint: `delete ${path} and sign in again`,
    });
  }
  if (typeof value.version === "number" && value.version > FORMAT_VERSION) {
    throw new ConfigError(
      `the credentials file ${path} was written by a newer mcpctl (format ${value.version})`,
    );
  }
  const entries: Record<string, FileEntry> = {};
  for (const [id, raw] of Object.entries(value.entries)) {
    if (!isRecord(raw)) continue;
    const credential = parseStoredCredential(raw);
    if (
      credential === undefined || typeof raw.serverName !== "string" ||
      typeof raw.serverUrl !== "string"
    ) continue;
    entries[id] = {
      serverName: raw.serverName,
      serverUrl: raw.serverUrl,
      updatedAt: typeof raw.updatedAt === "number" ? raw.updatedAt : 0,
      ...credential,
    };
  }
  return { version: FORMAT_VERSION, entries };
}

function toCredential(entry: FileEntry | undefined): StoredCredential | undefined {
  if (entry === undefined) return undefined;
  const { serverName: _n, serverUrl: _u, updatedAt: _t, ...credential } = entry;
  return credential;
}

/** Makes the rename durable; best effort, as not every platform can open a directory. */
async function syncDir(dir: string, platform: typeof Deno.build.os): Promise<void> {
  if (platform === "windows") return;
  try {
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
  } catch {
    // The data is already in the renamed file; only crash-durability is at stake.
  }
}

function joinPath(base: string, rest: string, platform: typeof Deno.build.os): string {
  const sep = platform === "windows" ? "\\" : "/";
  const tail = platform === "windows" ? rest.replaceAll("/", "\\") : rest;
  return base.endsWith("/") || base.endsWith("\\") ? base + tail : base + sep + tail;
}

function dirname(path: string): string {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  if (cut < 0) return ".";
  return cut === 0 ? path.slice(0, 1) : path.slice(0, cut);
}

function abbreviateHome(path: string, home: string | undefined): string {
  if (home === undefined || home === "" || home === "/") return path;
  const base = home.replace(/[\\/]+$/, "");
  return path.startsWith(base + "/") || path.startsWith(base + "\\")
    ? "~" + path.slice(base.length)
    : path;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== "" ? value : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
