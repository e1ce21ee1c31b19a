/**
 * The tool cache: each server's tool list kept on disk, so `search`, `describe` and
 * shell completion need not start every server every time.
 *
 * Where: `$MCPCTL_HOME/cache` when `MCPCTL_HOME` is set, else
 * `$XDG_STATE_HOME/mcpctl/cache`, else `~/.local/state/mcpctl/cache`; on Windows
 * `%LOCALAPPDATA%\mcpctl\cache`. One file per server, `<server>.json`.
 *
 * Validity: an entry records the SHA-256 digest of its server's own resolved definition
 * (type, command, args, env, cwd, url, headers). Changing any of those invalidates that
 * server's entry and no other. Entries also expire after a time to live: 24 hours, or
 * `MCPCTL_CACHE_TTL` seconds (`0` turns reading the cache off).
 *
 * Safety: files are written to a temp file (mode 0600) and renamed into place, so a
 * reader never sees half an entry; the directory is made 0700. Header and environment
 * values never reach the file, only the digest computed from them.
 *
 * @module
 */

import type { ServerEntry } from "../config/types.ts";
import type { ToolInfo } from "./manager.ts";
import type { RejectedTool } from "./names.ts";

/** Default time to live of an entry: 24 hours. */
export const DEFAULT_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

const FORMAT_VERSION = 1;

/** Where and how long entries are kept. */
export interface ToolCache {
  /** The cache directory. */
  dir: string;
  /** Time to live in ms; 0 means entries are never fresh. */
  ttlMs: number;
  /** Clock in ms since the epoch (tests). */
  now?: () => number;
}

/** One server's cached tool list. */
export interface CachedTools {
  /** Server name. */
  server: string;
  /** Digest of the definition the list was fetched with. */
  digest: string;
  /** When it was fetched, in ms since the epoch. */
  fetchedAt: number;
  tools: ToolInfo[];
  rejected: RejectedTool[];
  warnings: string[];
}

/** Options of {@linkcode openToolCache}. */
export interface OpenCacheOptions {
  /** Environment lookup. */
  env: (name: string) => string | undefined;
  /** Operating system (default `Deno.build.os`). */
  os?: typeof Deno.build.os;
}

/**
 * Finds the cache directory and time to live from the environment, as the module doc
 * says. Throws a plain Error when `MCPCTL_CACHE_TTL` is not a whole number of seconds;
 * returns undefined when no directory can be found (no home): then nothing is cached.
 *
 * @example
 * ```ts
 * import { openToolCache } from "./tool_cache.ts";
 * openToolCache({ env: (n) => ({ HOME: "/home/me" })[n], os: "linux" })?.dir;
 * // "/home/me/.local/state/mcpctl/cache"
 * ```
 */
export function openToolCache(options: OpenCacheOptions): ToolCache | undefined {
  const dir = cacheDir(options);
  if (dir === undefined) return undefined;
  return { dir, ttlMs: cacheTtlMs(options.env) };
}

/** The time to live from `MCPCTL_CACHE_TTL` (seconds), or the default. */
export function cacheTtlMs(env: (name: string) => string | undefined): number {
  const raw = env("MCPCTL_CACHE_TTL");
  if (raw === undefined || raw === "") return DEFAULT_CACHE_TTL_MS;
  if (!/^\d+$/.test(raw.trim())) {
    throw new Error(
      `MCPCTL_CACHE_TTL must be a whole number of seconds, not ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw.trim()) * 1000;
}

function cacheDir(options: OpenCacheOptions): string | undefined {
  const env = (n: string) => {
    const v = options.env(n);
    return v === undefined || v === "" ? undefined : v;
  };
  const os = options.os ?? Deno.build.os;
  const sep = os === "windows" ? "\\" : "/";
  const home = env("MCPCTL_HOME");
  if (home !== undefined) return `${home}${sep}cache`;
  if (os === "windows") {
    const local = env("LOCALAPPDATA") ??
      (env("USERPROFILE") !== undefined ? `${env("USERPROFILE")}\\AppData\\Local` : undefined);
    return local === undefined ? undefined : `${local}\\mcpctl\\cache`;
  }
  const state = env("XDG_STATE_HOME");
  // Relative XDG values are invalid and must be ignored.
  if (state !== undefined && state.startsWith("/")) return `${state}/mcpctl/cache`;
  const userHome = env("HOME");
  return userHome === undefined ? undefined : `${userHome}/.local/state/mcpctl/cache`;
}

/**
 * The SHA-256 digest (hex) of the parts of a server's definition that decide which
 * tools it offers: type, command, args, env, cwd, url and headers.
 */
export async function definitionDigest(entry: ServerEntry): Promise<string> {
  const canonical = JSON.stringify([
    entry.type,
    entry.command ?? null,
    entry.args,
    sortedPairs(entry.env),
    entry.cwd ?? null,
    entry.url ?? null,
    sortedPairs(entry.headers),
  ]);
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function sortedPairs(map: Record<string, string>): [string, string][] {
  return Object.entries(map).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
}

/** Path of a server's cache file. */
export function cacheFile(cache: ToolCache, server: string): string {
  const sep = cache.dir.includes("\\") && !cache.dir.includes("/") ? "\\" : "/";
  return `${cache.dir}${sep}${server}.json`;
}

/** Options of {@linkcode readCachedTools}. */
export interface ReadCacheOptions {
  /** Also return an expired entry (shell completion: better than nothing). */
  allowExpired?: boolean;
}

/**
 * The cached tools of `entry`, or undefined when there is no entry, it was made for
 * another definition, it is unreadable, or it has expired.
 */
export async function readCachedTools(
  cache: ToolCache,
  entry: ServerEntry,
  options: ReadCacheOptions = {},
): Promise<CachedTools | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(cacheFile(cache, entry.name));
  } catch {
    return undefined;
  }
  const cached = parseEntry(text);
  if (!cached || cached.server !== entry.name) return undefined;
  if (cached.digest !== await definitionDigest(entry)) return undefined;
  if (!options.allowExpired) {
    const age = (cache.now ?? Date.now)() - cached.fetchedAt;
    if (cache.ttlMs <= 0 || age < 0 || age >= cache.ttlMs) return undefined;
  }
  return cached;
}

function parseEntry(text: string): CachedTools | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return undefined;
  const d = doc as Record<string, unknown>;
  if (
    d.version !== FORMAT_VERSION || typeof d.server !== "string" ||
    typeof d.digest !== "string" || typeof d.fetchedAt !== "number" ||
    !Array.isArray(d.tools) || !Array.isArray(d.rejected)
  ) {
    return undefined;
  }
  const tools = d.tools.filter((t): t is ToolInfo =>
    t !== null && typeof t === "object" && typeof (t as ToolInfo).name === "string" &&
    (t as ToolInfo).inputSchema !== null && typeof (t as ToolInfo).inputSchema === "object"
  );
  return {
    server: d.server,
    digest: d.digest,
    fetchedAt: d.fetchedAt,
    tools,
    rejected: d.rejected as RejectedTool[],
    warnings: Array.isArray(d.warnings)
      ? d.warnings.filter((w): w is string => typeof w === "string")
      : [],
  };
}

/**
 * Stores the tools of `entry` (atomically, mode 0600) and returns what was stored.
 */
export async function writeCachedTools(
  cache: ToolCache,
  entry: ServerEntry,
  listed: { tools: ToolInfo[]; rejected: RejectedTool[]; warnings: string[] },
): Promise<CachedTools> {
  const cached: CachedTools = {
    server: entry.name,
    digest: await definitionDigest(entry),
    fetchedAt: (cache.now ?? Date.now)(),
    tools: listed.tools,
    rejected: listed.rejected,
    warnings: listed.warnings,
  };
  await Deno.mkdir(cache.dir, { recursive: true, mode: 0o700 });
  const path = cacheFile(cache, entry.name);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, JSON.stringify({ version: FORMAT_VERSION, ...cached }), {
      createNew: true,
      mode: 0o600,
    });
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  return cached;
}
