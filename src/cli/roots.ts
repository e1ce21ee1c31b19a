/**
 * Roots: the directories mcpctl tells servers they may work in. The client declares the
 * `roots` capability and answers `roots/list` with `file://` URIs of the working
 * directory and of every `--root DIR` (resolved to absolute paths).
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import type { ClientOptions } from "../mcp/client.ts";

/** One root as sent in `roots/list`. */
export interface Root {
  uri: string;
  name: string;
}

/** Options of {@linkcode listRoots}. */
export interface RootsOptions {
  /** Working directory (absolute). */
  cwd: string;
  /** `--root` values, relative to `cwd` or absolute. */
  extra?: readonly string[];
  /** Operating system (default `Deno.build.os`). */
  os?: typeof Deno.build.os;
  /** Whether a path is an existing directory (default: stat it). */
  isDirectory?: (path: string) => boolean;
}

/**
 * The roots: the working directory first, then each `--root`, without duplicates. A
 * `--root` that is not an existing directory is a usage error.
 *
 * @example
 * ```ts
 * import { listRoots } from "./roots.ts";
 * listRoots({ cwd: "/work", extra: ["../data"], os: "linux", isDirectory: () => true });
 * // [{ uri: "file:///work", name: "work" }, { uri: "file:///data", name: "data" }]
 * ```
 */
export function listRoots(options: RootsOptions): Root[] {
  const os = options.os ?? Deno.build.os;
  const isDirectory = options.isDirectory ?? statIsDirectory;
  const paths = [options.cwd];
  for (const dir of options.extra ?? []) {
    const path = absolutePath(options.cwd, dir, os);
    if (!isDirectory(path)) throw new UsageError(`--root ${dir}: not an existing directory`);
    paths.push(path);
  }
  const seen = new Set<string>();
  const roots: Root[] = [];
  for (const path of paths) {
    const uri = fileUri(path, os);
    if (seen.has(uri)) continue;
    seen.add(uri);
    roots.push({ uri, name: baseName(path) || path });
  }
  return roots;
}

/** Client options that declare `roots` and answer `roots/list` with `roots`. */
export function rootsClientOptions(
  roots: readonly Root[],
): Pick<ClientOptions, "capabilities" | "requestHandlers"> {
  return {
    capabilities: { roots: {} },
    requestHandlers: {
      "roots/list": () => Promise.resolve({ roots: roots.map((r) => ({ ...r })) }),
    },
  };
}

/**
 * A `file://` URI for an absolute path, each segment percent-encoded.
 *
 * @example
 * ```ts
 * import { fileUri } from "./roots.ts";
 * fileUri("/tmp/my dir", "linux"); // "file:///tmp/my%20dir"
 * fileUri("C:\\Users\\me", "windows"); // "file:///C:/Users/me"
 * ```
 */
export function fileUri(path: string, os: typeof Deno.build.os = Deno.build.os): string {
  const slashed = os === "windows" ? path.replaceAll("\\", "/") : path;
  const segments = slashed.split("/").map((s, i) =>
    i <= 1 && /^[A-Za-z]:$/.test(s) ? s : encodeURIComponent(s)
  );
  const joined = segments.join("/");
  return `file://${joined.startsWith("/") ? "" : "/"}${joined}`;
}

/** Resolves `path` against `cwd`, removing `.` and `..` segments. */
export function absolutePath(cwd: string, path: string, os: typeof Deno.build.os): string {
  const windows = os === "windows";
  const abs = windows ? /^[A-Za-z]:[\\/]|^\\\\/.test(path) : path.startsWith("/");
  const full = abs ? path : `${cwd}/${path}`;
  const parts = full.split(windows ? /[\\/]/ : /\//);
  const out: string[] = [];
  for (const [i, part] of parts.entries()) {
    if (part === "." || (part === "" && i > 0)) continue;
    if (part === "..") {
      if (out.length > 1) out.pop();
      continue;
    }
    out.push(part);
  }
  const sep = windows ? "\\" : "/";
  const joined = out.join(sep);
  if (!windows) return joined === "" ? "/" : joined;
  return /^[A-Za-z]:$/.test(joined) ? joined + sep : joined;
}

function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).pop() ?? "";
}

function statIsDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
